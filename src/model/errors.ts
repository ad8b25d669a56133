/**
 * The base of every error AgentPlane throws. `reason` is a stable CamelCase code programs and tests match (as
 * Kubernetes condition reasons are); `exitCategory` is the kind of outcome, which the CLI maps to its exit code, so
 * renaming a class or rewording a message never changes how a program reacts to it.
 */
import type { ErrorReason } from './error-reasons.js';

/** Kinds of outcome that have their own CLI exit code (src/cli/exit-codes.ts). */
export const EXIT_CATEGORIES = [
  'internal',
  'usage',
  'release',
  'invalid',
  'lock-mismatch',
  'not-verified',
  'cluster',
  'unauthenticated',
  'forbidden',
  'not-ready',
] as const;

export type ExitCategory = (typeof EXIT_CATEGORIES)[number];

export abstract class AgentPlaneError extends Error {
  /** Stable CamelCase code of what went wrong, e.g. `ChecksumMismatch` (docs/reference/reasons.md). */
  abstract readonly reason: ErrorReason;
  /** The kind of outcome, for the CLI's exit code. */
  abstract readonly exitCategory: ExitCategory;
  /** Whether the message already ends with the error's `hint` (the bases that append it say so), so it is printed once. */
  readonly hintInMessage: boolean = false;
  /** The message without the hint those bases append: what went wrong, for documents that carry the hint apart. */
  readonly summary: string;
  constructor(message: string, options?: { readonly cause?: unknown; readonly summary?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.summary = options?.summary ?? message;
  }
}

/**
 * The exit category of a classified cluster failure (the adapter's `AdapterError.category`): credentials refused,
 * access refused, or the cluster not answering; `fallback` for every other category.
 */
export function exitCategoryOfFailure(category: string, fallback: ExitCategory): ExitCategory {
  if (category === 'unauthenticated') return 'unauthenticated';
  if (category === 'forbidden') return 'forbidden';
  if (category === 'unreachable' || category === 'timeout') return 'cluster';
  return fallback;
}
