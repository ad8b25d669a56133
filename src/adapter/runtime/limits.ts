/**
 * Per-call limits of the runtime adapter: every call has a deadline and a request-size limit checked before anything is
 * sent (docs/architecture.md, "The capability adapter"), and a response-size cap so a runaway command cannot exhaust memory.
 */
import type { AdapterError } from '../types.js';

export interface CallLimits {
  /** Deadline of one call, ms. */
  readonly deadlineMs: number;
  /** Largest request body (serialized), bytes. */
  readonly maxRequestBytes: number;
  /** Largest response body kept, bytes (per stream for stdout/stderr). */
  readonly maxResponseBytes: number;
}

/** Defaults: 30 s deadline, 1 MiB requests, 4 MiB responses (per stream). */
export const DEFAULT_LIMITS: CallLimits = { deadlineMs: 30_000, maxRequestBytes: 1 << 20, maxResponseBytes: 4 << 20 };

/** Longest deadline a caller may ask for, ms (1 hour). */
export const MAX_DEADLINE_MS = 3_600_000;

/** `undefined` when `bytes` fits `limits`, else a `too-large` error naming both numbers. */
export function checkRequestSize(what: string, bytes: number, limits: CallLimits): AdapterError | undefined {
  if (bytes <= limits.maxRequestBytes) return undefined;
  return {
    category: 'too-large',
    size: { bytes, limitBytes: limits.maxRequestBytes },
    message: `${what}: request is ${bytes} bytes, the limit is ${limits.maxRequestBytes} bytes; nothing was sent`,
    hint: 'send less (e.g. write large inputs as files first) or raise maxRequestBytes',
  };
}

/** `undefined` when the deadline is a positive integer up to {@link MAX_DEADLINE_MS}, else an `invalid` error. */
export function checkDeadline(deadlineMs: number): AdapterError | undefined {
  if (Number.isInteger(deadlineMs) && deadlineMs > 0 && deadlineMs <= MAX_DEADLINE_MS) return undefined;
  return {
    category: 'invalid',
    message: `deadline must be 1..${MAX_DEADLINE_MS} ms, got ${deadlineMs}`,
    hint: 'pass a positive timeout in milliseconds',
  };
}

/**
 * The v0.5.6 Go sandbox-router's response-header timeout, ms (`sandbox-router/config` default `ResponseHeaderTimeout`
 * 30 s): past it the router answers 502 "Could not connect to the backend sandbox" (case router-timeout-layers).
 */
export const ROUTER_RESPONSE_HEADER_TIMEOUT_MS = 30_000;
