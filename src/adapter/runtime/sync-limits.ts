/**
 * The longest synchronous command each transport carries to a runtime, known before any call: the smallest of the
 * limits of the layers on the path, with the layer that sets it. Kept here, in one place, so the verifier's evidence
 * and the adapter's refusals read the same numbers.
 */
import type { TransportKind } from '../types.js';
import { MAX_DEADLINE_MS, ROUTER_RESPONSE_HEADER_TIMEOUT_MS } from './limits.js';

/**
 * The python runtime's own exec limit, ms: `SANDBOX_EXEC_TIMEOUT_SECONDS` default 300 (`examples/python-runtime-sandbox/
 * main.py@v0.5.6`, unchanged at v1.0.3).
 */
export const PYTHON_RUNTIME_EXEC_LIMIT_MS = 300_000;

export interface SyncCallLimit {
  readonly transport: TransportKind;
  /** The longest synchronous call, ms. */
  readonly ms: number;
  /** The layer whose limit is the smallest. */
  readonly layer: 'adapter' | 'router' | 'runtime';
  /** Which limit that is, e.g. `router response-header timeout`. */
  readonly limit: string;
}

/**
 * The longest synchronous command over `transport` to `runtime`: the adapter's largest deadline (1 h), the router's
 * response-header timeout on the router path (30 s at v0.5.6 and v1.0.3, `--response-header-timeout`), and the python
 * runtime's exec limit; sandboxd sets none of its own.
 */
export function syncCallLimit(
  transport: TransportKind,
  runtime: 'sandboxd' | 'python-runtime',
  routerHeaderTimeoutMs: number = ROUTER_RESPONSE_HEADER_TIMEOUT_MS,
): SyncCallLimit {
  const layers: SyncCallLimit[] = [
    { transport, ms: MAX_DEADLINE_MS, layer: 'adapter', limit: 'adapter largest deadline' },
    ...(transport === 'router'
      ? [{ transport, ms: routerHeaderTimeoutMs, layer: 'router', limit: 'router response-header timeout' } as const]
      : []),
    ...(runtime === 'python-runtime'
      ? [
          {
            transport,
            ms: PYTHON_RUNTIME_EXEC_LIMIT_MS,
            layer: 'runtime',
            limit: 'python runtime SANDBOX_EXEC_TIMEOUT_SECONDS',
          } as const,
        ]
      : []),
  ];
  return layers.reduce((a, b) => (b.ms < a.ms ? b : a));
}
