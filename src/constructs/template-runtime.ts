/** What serves a template's runtime API, and where: read by the template, its readiness probe and the descriptor. */

/** The process in the pod that executes commands, and its endpoint. */
export interface TemplateRuntime {
  /** `sandboxd` (gRPC 9090 + REST 8080; on 127.0.0.1 up to v0.5.6, `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`, on `--listen-host` from v1.0.1), `python-runtime` (HTTP 8888, `examples/python-runtime-sandbox/main.py@v0.5.6`), or `custom`. */
  readonly kind: 'sandboxd' | 'python-runtime' | 'custom';
  /** Name of the container that runs it. */
  readonly container: string;
  /** TCP ports of the runtime endpoint. */
  readonly ports: readonly number[];
}

/** Where a template's runtime listens: its container's `--listen-host`, else the pinned release's default. */
export interface TemplateRuntimeBind {
  /** The address its listeners bind, e.g. `127.0.0.1` or `0.0.0.0`. */
  readonly host: string;
  /** `listen-host`: the runtime container's own `--listen-host`; `release`: the release's default. */
  readonly from: 'listen-host' | 'release';
  /** Whether callers outside the pod (the kubelet, the router, in-cluster clients) can reach it. */
  readonly podNetwork: boolean;
  /** `path@tag` of the fact. */
  readonly cite: string;
}
