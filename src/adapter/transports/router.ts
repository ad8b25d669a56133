/**
 * The `router` transport: HTTP/1.1 through the sandbox-router, addressed by headers (`sandbox-router/README.md@v0.5.6`,
 * `sandbox-router/proxy/headers.go@v0.5.6`): `X-Sandbox-ID` (Sandbox name), `X-Sandbox-Namespace`, `X-Sandbox-Port`, and
 * `X-Sandbox-Pod-IP` only when asked for (clients address by name). The router's upstream transport is HTTP/1.1 only (`ForceAttemptHTTP2: false`,
 * `sandbox-router/proxy/proxy.go@v0.5.6`), so gRPC is `unsupported` here: never a fallback to something else.
 */
import { routerLimitFacts } from '../../releases/router-limits.js';
import { routerLimits, type RouterLimits } from '../runtime/layer-limits.js';
import type { Result } from '../types.js';
import type { HttpEndpoint, RuntimeTarget, Transport } from './types.js';

/** The release whose router a RouterTransport assumes until told otherwise: the default pinned release. */
const DEFAULT_ROUTER_RELEASE = 'v1.0.3';

export class RouterTransport implements Transport {
  readonly kind = 'router' as const;
  private readonly base: string;
  /**
   * The router's limits: its response-header timeout (a 502 at it is the router's timeout) and whether it takes
   * `X-Sandbox-Timeout`. The default release's defaults until {@link useLimits} (the adapter reads the deployed router).
   */
  limits: RouterLimits;

  /**
   * @param routerUrl base URL of the router's proxy port, e.g. `http://127.0.0.1:8080` (a trailing slash is dropped).
   * @param opts.token bearer token for routers running `--authz-mode=tokenreview|scoped-token` (the router strips it before
   *   forwarding, `sandbox-router/proxy/proxy.go@v0.5.6`). Default: none.
   * @param opts.podIPHeader send `X-Sandbox-Pod-IP` when the pod IP is known. Default false: requests are addressed by name,
   *   the path the SDKs take without a pod IP (router cache, then DNS; case router-warm-nxdomain), and the only one `scoped-token` routers
   *   accept (`sandbox-router/authz/scopedtoken.go@v0.5.6`).
   * @param opts.limits the router's limits. Default: the defaults of the default release's router (Go router: 30 s
   *   response-header timeout, 180 s proxy timeout, no `X-Sandbox-Timeout`).
   */
  constructor(
    routerUrl: string,
    private readonly opts: { token?: string; podIPHeader?: boolean; limits?: RouterLimits } = {},
  ) {
    this.base = routerUrl.replace(/\/+$/, '');
    this.limits = opts.limits ?? routerLimits(routerLimitFacts(DEFAULT_ROUTER_RELEASE)!);
  }

  /** Takes the limits of the router actually deployed (read from its Deployment). */
  useLimits(limits: RouterLimits): void {
    this.limits = limits;
  }

  async http(target: RuntimeTarget, port: number): Promise<Result<HttpEndpoint>> {
    const headers: Record<string, string> = {
      'X-Sandbox-ID': target.sandboxName,
      'X-Sandbox-Namespace': target.namespace,
      'X-Sandbox-Port': String(port),
      ...(target.podIP && this.opts.podIPHeader === true ? { 'X-Sandbox-Pod-IP': target.podIP } : {}),
      ...(this.opts.token ? { Authorization: `Bearer ${this.opts.token}` } : {}),
    };
    return {
      kind: 'ok',
      value: {
        baseUrl: this.base,
        headers,
        describe: `router ${this.base} -> ${target.namespace}/${target.sandboxName}:${port}`,
        router: {
          ...(this.limits.responseHeaderTimeout ? { headerTimeoutMs: this.limits.responseHeaderTimeout.limitMs } : {}),
          ...(this.limits.honoursSandboxTimeout ? { deadlineHeader: 'X-Sandbox-Timeout' } : {}),
        },
      },
    };
  }

  async grpc(): Promise<Result<string>> {
    return {
      kind: 'unsupported',
      capability: 'runtime-exec',
      state: 'unsupported',
      reason: 'TransportCannotCarryGrpc',
      message:
        'the sandbox-router forwards HTTP/1.1 only (sandbox-router/proxy/proxy.go@v0.5.6), so sandboxd gRPC cannot go through it: use the port-forward or direct transport',
    };
  }

  async close(): Promise<void> {}
}
