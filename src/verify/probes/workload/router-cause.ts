/**
 * The cause class of a failed call through the router (case router-warm-nxdomain). The v0.5.6 router names no cause: every upstream
 * connect failure (DNS, refused, timeout) is a 502 `{"detail":"Could not connect to the backend sandbox: <id>"}`
 * (`sandbox-router/proxy/proxy.go@v0.5.6`, ErrorHandler; the cause is only in its log). So the class comes from live
 * observations beside the answer: a control call through the router with `X-Sandbox-Pod-IP` (no cache, no DNS) and
 * whether the per-sandbox Service exists, which the router's DNS fallback `<name>.<ns>.svc.<domain>` needs
 * (`sandbox-router/proxy/resolve.go@v0.5.6`). A router that does name the cause is taken at its word.
 */
import type { HttpRefusal } from '../../../adapter/types.js';
import { runtimeFailureReason } from './runtime-proof.js';

export type RouterCause =
  'RouterUpstreamNxdomain' | 'RouterUpstreamRefused' | 'RouterUpstreamTimeout' | 'RouterUpstream5xx';

/** The v0.5.6 router's detail for an upstream connect failure. */
const CONNECT_FAILED = /could not connect to the backend sandbox/i;

export interface RouterCauseContext {
  /** The per-sandbox Service exists (true), does not (false), or could not be read (undefined). */
  readonly service: boolean | undefined;
  /** The same sandbox through the same router with `X-Sandbox-Pod-IP`: answered, failed, or not tried. */
  readonly byPodIP: 'answered' | 'failed' | undefined;
}

/**
 * Classifies `r`: a transport outcome of our own (timeout, silence, redirect) keeps its runtime reason; a 5xx whose
 * body names the cause is that cause; the router's bare connect failure is NXDOMAIN only when the router reached the
 * pod by its IP (so resolving the name failed) and no Service exists to give the name a record; else unnamed (5xx).
 * The router's body is read as text because it is the router's only account of the upstream (no code, no field).
 */
export function routerCause(
  r: { kind: 'timeout' | 'silent' | 'error'; detail: string; redirect?: true; http?: HttpRefusal },
  ctx: RouterCauseContext,
): RouterCause | ReturnType<typeof runtimeFailureReason> {
  if (r.kind !== 'error' || r.redirect || r.http === undefined || r.http.code < 500 || r.http.code > 599)
    return runtimeFailureReason(r);
  const body = r.http.body.toLowerCase();
  if (/no such host|nxdomain/.test(body)) return 'RouterUpstreamNxdomain';
  if (/connection refused|econnrefused/.test(body)) return 'RouterUpstreamRefused';
  if (/timeout|deadline|timed out/.test(body)) return 'RouterUpstreamTimeout';
  if (r.http.code === 502 && CONNECT_FAILED.test(body) && ctx.byPodIP === 'answered' && ctx.service === false)
    return 'RouterUpstreamNxdomain';
  return 'RouterUpstream5xx';
}

/** What the router's answer and the controls say, for the evidence message. */
export function routerCauseNote(ctx: RouterCauseContext, sandbox: string, namespace: string): string {
  const service =
    ctx.service === undefined
      ? 'per-sandbox Service not readable'
      : ctx.service
        ? `per-sandbox Service ${namespace}/${sandbox} exists`
        : `no per-sandbox Service ${namespace}/${sandbox} (the router's DNS fallback ${sandbox}.${namespace}.svc has no record)`;
  const control =
    ctx.byPodIP === 'answered'
      ? `with X-Sandbox-Pod-IP the router reached the pod, so the name did not resolve: the router's Pod-IP cache did not hold the sandbox (--cache-enabled=false, or not synced) and it fell back to DNS`
      : ctx.byPodIP === 'failed'
        ? 'with X-Sandbox-Pod-IP the router could not reach the pod either'
        : 'no pod IP to try the router with X-Sandbox-Pod-IP';
  return `${service}; ${control}`;
}
