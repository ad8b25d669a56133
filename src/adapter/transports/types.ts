/**
 * How the runtime adapter reaches a runtime server (docs/architecture.md, "Vocabulary"): `router` (sandbox-router, HTTP/1.1 only),
 * `port-forward` (API server pod port-forward to a loopback-only sandboxd), `direct` (pod IP).
 */
import type { AdapterError, Result, TransportKind } from '../types.js';

/** The pod a runtime server runs in. */
export interface RuntimeTarget {
  readonly namespace: string;
  /** Sandbox name (router `X-Sandbox-ID`). */
  readonly sandboxName: string;
  /** Pod name (port-forward); defaults to the Sandbox name, as upstream names the pod after the Sandbox (`controllers/sandbox_controller.go@v0.5.6`). */
  readonly podName?: string;
  /** Pod IP (direct; router `X-Sandbox-Pod-IP`). */
  readonly podIP?: string;
}

/** An HTTP/1.1 base URL plus headers that reach one port of the target. */
export interface HttpEndpoint {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  readonly baseUrl: string;
  /** Headers every request must carry (router addressing headers). */
  readonly headers: Readonly<Record<string, string>>;
  /** Human-readable description for evidence, e.g. `router http://127.0.0.1:8080 -> sbx/s1:8080`. */
  readonly describe: string;
  /** Set when the endpoint is a router: what a call's answer and headers depend on. */
  readonly router?: {
    /** The router's response-header timeout, ms: a 502 at it is its timeout. Absent when it has none (python router). */
    readonly headerTimeoutMs?: number;
    /** The header that carries the call's deadline in seconds, only for routers that take it (`X-Sandbox-Timeout`). */
    readonly deadlineHeader?: string;
  };
}

/** One way to reach runtime servers. Call {@link close} when done (port-forward holds local listeners). */
export interface Transport {
  readonly kind: TransportKind;
  /** An HTTP/1.1 endpoint for `port` of `target`. */
  http(target: RuntimeTarget, port: number): Promise<Result<HttpEndpoint>>;
  /** A `host:port` for an insecure HTTP/2 (gRPC) channel to `port` of `target`, or `unsupported` when the transport cannot carry gRPC. */
  grpc(target: RuntimeTarget, port: number): Promise<Result<string>>;
  /**
   * Why a connection to `target` that ended at or after `since` (epoch ms) failed, as the far end explained it out of
   * band (the kubelet's port-forward error channel), or undefined. Transports without such a channel do not have it.
   */
  streamFailure?(target: RuntimeTarget, since: number): AdapterError | undefined;
  close(): Promise<void>;
}

/** `host:port`, bracketing IPv6 literals. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
