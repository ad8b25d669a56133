/**
 * What the official Python client of Agent Sandbox (`k8s-agent-sandbox` on PyPI) does on the wire, per connection mode,
 * read from its source at the pinned version. Constructs check a declared client against the environment with these
 * facts; the verifier probes along the same path. Every fact cites `path@version` inside the wheel
 * (`k8s_agent_sandbox-1.0.8-py3-none-any.whl`, sha256 7857684e0e99ea8345feb38025d7c4a3e2c8ad697dc5161069befee5888d2f20).
 */

/** Client SDKs AgentPlane knows. */
export const CLIENT_SDKS = ['k8s-agent-sandbox'] as const;
export type ClientSdk = (typeof CLIENT_SDKS)[number];

/** Versions of each SDK whose facts are recorded here. */
export const CLIENT_SDK_VERSIONS: Readonly<Record<ClientSdk, readonly string[]>> = { 'k8s-agent-sandbox': ['1.0.8'] };

/**
 * Connection modes, named after the client's config classes (`k8s_agent_sandbox/models.py@1.0.8`):
 * `router` = SandboxDirectConnectionConfig (api_url of a router), `gateway` = SandboxGatewayConnectionConfig,
 * `tunnel` = SandboxLocalTunnelConnectionConfig (the client's default), `in-cluster` = SandboxInClusterConnectionConfig,
 * `sandboxd-pod-tunnel` = SandboxdPodTunnelConnectionConfig, `sandboxd-in-cluster-service` / `sandboxd-in-cluster-pod-ip` =
 * SandboxdInClusterConnectionConfig(mode=in-cluster-service | in-cluster-pod-ip).
 */
export const CLIENT_MODES = [
  'router',
  'gateway',
  'tunnel',
  'in-cluster',
  'sandboxd-pod-tunnel',
  'sandboxd-in-cluster-service',
  'sandboxd-in-cluster-pod-ip',
] as const;
export type ClientMode = (typeof CLIENT_MODES)[number];

/** The runtime API a mode speaks: the python runtime's HTTP API, or sandboxd's REST + gRPC. */
export type ClientRuntimeApi = 'python-runtime' | 'sandboxd';

/** One HTTP or gRPC call the client makes, as it makes it. */
export interface ClientCall {
  readonly op: 'execute' | 'write' | 'read' | 'list' | 'exists' | 'delete-file';
  /** `POST execute`, `GET download/<path quoted, safe=''>`, `gRPC ProcessService/Execute`, … (relative to the base URL). */
  readonly request: string;
  readonly cite: string;
}

/** Facts of one mode. */
export interface ClientModeFacts {
  readonly mode: ClientMode;
  readonly configClass: string;
  readonly runtimeApi: ClientRuntimeApi;
  /** How requests reach the pod: through the sandbox router, or straight to the pod. */
  readonly via: 'router' | 'pod';
  /** How the base URL is found. */
  readonly transport: string;
  /** Port of the runtime the request names or dials by default (`server_port`, or sandboxd's `rest_port`/`grpc_port`). */
  readonly ports: readonly number[];
  /** Headers the client sets on every request (`X-Sandbox-Timeout` only when a finite timeout > 0 is given). */
  readonly headers: readonly string[];
  /** Name of the router Service the mode dials, when it dials one by name. */
  readonly routerService?: { readonly name: string; readonly port: number; readonly defaultNamespace: string };
  /** The runtime must listen on the pod network (the mode dials pod IP / Service FQDN / pod port-forward). */
  readonly needsPodNetworkListener: boolean;
  /** The mode reads `Sandbox.status.serviceFQDN`, so the template must enable `spec.service`. */
  readonly needsService: boolean;
  /** The mode needs a real kubelet (kubectl port-forward to a pod). */
  readonly needsKubelet: boolean;
  readonly calls: readonly ClientCall[];
  readonly cite: string;
}

/** Facts common to every mode of one SDK version. */
export interface ClientSdkFacts {
  readonly sdk: ClientSdk;
  readonly version: string;
  /** `create_sandbox(warmpool=…)` creates a SandboxClaim with `spec.warmPoolRef.name`; the pool must exist (no template-only path). */
  readonly claimsFrom: 'SandboxWarmPool';
  readonly claimApiVersion: string;
  /** Where the client reads the pod address it forwards (router modes add `X-Sandbox-Pod-IP`). */
  readonly podIpFrom: string;
  /** urllib3 Retry on the HTTP session. POST (execute, upload) is never retried; streamed uploads run without retries. */
  readonly retries: {
    readonly total: number;
    readonly backoffFactor: number;
    readonly statusForcelist: readonly number[];
    readonly methods: readonly string[];
  };
  /** Redirects are refused (raised as errors). */
  readonly followsRedirects: false;
  readonly modes: Readonly<Record<ClientMode, ClientModeFacts>>;
  readonly cite: Readonly<Record<string, string>>;
}

const V = '1.0.8';
const at = (path: string): string => `k8s_agent_sandbox/${path}@${V}`;

const ROUTER_HEADERS = [
  'X-Sandbox-ID',
  'X-Sandbox-Namespace',
  'X-Sandbox-Port',
  'X-Sandbox-Timeout',
  'X-Sandbox-Pod-IP',
];
const SANDBOXD_ROUTER_HEADERS: readonly string[] = [];

const PYTHON_RUNTIME_CALLS: readonly ClientCall[] = [
  {
    op: 'execute',
    request: 'POST execute {"command", "timeout_seconds"?} -> {"stdout","stderr","exit_code"}',
    cite: at('commands/command_executor.py'),
  },
  {
    op: 'write',
    request: 'POST upload (multipart/form-data, field "file", filename = the relative path)',
    cite: at('files/filesystem.py'),
  },
  { op: 'read', request: "GET download/<path, quote(safe='')>", cite: at('files/filesystem.py') },
  {
    op: 'list',
    request: "GET list/<path, quote(safe='')> -> [{name,size,type,mod_time}]",
    cite: at('files/filesystem.py'),
  },
  { op: 'exists', request: "GET exists/<path, quote(safe='')>", cite: at('files/filesystem.py') },
];

const SANDBOXD_CALLS: readonly ClientCall[] = [
  {
    op: 'execute',
    request: 'gRPC process.v1.ProcessService/Execute (["/bin/sh","-c",command]) on grpc_port',
    cite: at('commands/command_executor.py'),
  },
  {
    op: 'write',
    request: 'PUT v1/files/<segments joined by %2F> (application/octet-stream)',
    cite: at('files/filesystem.py'),
  },
  { op: 'read', request: 'GET v1/files/<path>', cite: at('files/filesystem.py') },
  { op: 'list', request: 'GET v1/files/<path> -> {"entries":[…]}', cite: at('files/filesystem.py') },
  { op: 'exists', request: 'HEAD v1/files/<path> (404 = absent)', cite: at('files/filesystem.py') },
  { op: 'delete-file', request: 'DELETE v1/files/<path>[?recursive=true]', cite: at('files/filesystem.py') },
];

const base = {
  needsService: false,
  needsKubelet: false,
} as const;

/** k8s-agent-sandbox 1.0.8. */
export const K8S_AGENT_SANDBOX_1_0_8: ClientSdkFacts = {
  sdk: 'k8s-agent-sandbox',
  version: V,
  claimsFrom: 'SandboxWarmPool',
  claimApiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  podIpFrom: 'Sandbox.status.podIPs (IPv4 preferred)',
  retries: { total: 5, backoffFactor: 0.5, statusForcelist: [500, 502, 503, 504], methods: ['GET', 'PUT', 'DELETE'] },
  followsRedirects: false,
  cite: {
    claimsFrom: `${at('sandbox_client.py')} (create_sandbox(warmpool)), ${at('k8s_helper.py')} (spec.warmPoolRef.name)`,
    claimApiVersion: at('constants.py'),
    podIpFrom: `${at('sandbox.py')} (get_pod_ip), ${at('utils.py')} (select_pod_ip)`,
    retries: at('connector.py'),
    followsRedirects: at('connector.py'),
    // send_request merges only SandboxDirectConnectionConfig.extra_headers into the router headers: no Authorization otherwise
    routerHeaders: `${at('connector.py')} (send_request), ${at('models.py')} (extra_headers)`,
  },
  modes: {
    router: {
      ...base,
      mode: 'router',
      configClass: 'SandboxDirectConnectionConfig',
      runtimeApi: 'python-runtime',
      via: 'router',
      transport: 'HTTP to api_url (the router, optionally behind a gateway with extra_headers / mTLS)',
      ports: [8888],
      headers: ROUTER_HEADERS,
      needsPodNetworkListener: true,
      calls: PYTHON_RUNTIME_CALLS,
      cite: `${at('models.py')}, ${at('connector.py')}`,
    },
    gateway: {
      ...base,
      mode: 'gateway',
      configClass: 'SandboxGatewayConnectionConfig',
      runtimeApi: 'python-runtime',
      via: 'router',
      transport: 'HTTP to the address of Gateway gateway_name (gateway.networking.k8s.io/v1 status)',
      ports: [8888],
      headers: ROUTER_HEADERS,
      needsPodNetworkListener: true,
      calls: PYTHON_RUNTIME_CALLS,
      cite: `${at('models.py')}, ${at('connector.py')}`,
    },
    tunnel: {
      ...base,
      mode: 'tunnel',
      configClass: 'SandboxLocalTunnelConnectionConfig',
      runtimeApi: 'python-runtime',
      via: 'router',
      transport: 'kubectl port-forward svc/sandbox-router-svc <local>:8080 -n router_namespace',
      ports: [8888],
      headers: ROUTER_HEADERS,
      routerService: { name: 'sandbox-router-svc', port: 8080, defaultNamespace: 'agent-sandbox-system' },
      needsPodNetworkListener: true,
      needsKubelet: true,
      calls: PYTHON_RUNTIME_CALLS,
      cite: `${at('models.py')}, ${at('connector.py')}`,
    },
    'in-cluster': {
      ...base,
      mode: 'in-cluster',
      configClass: 'SandboxInClusterConnectionConfig',
      runtimeApi: 'python-runtime',
      via: 'pod',
      transport: 'HTTP to http://<pod IP>:server_port, else http://<sandbox>.<ns>.svc.cluster.local:server_port',
      ports: [8888],
      headers: [],
      needsPodNetworkListener: true,
      calls: PYTHON_RUNTIME_CALLS,
      cite: `${at('models.py')}, ${at('connector.py')}`,
    },
    'sandboxd-pod-tunnel': {
      ...base,
      mode: 'sandboxd-pod-tunnel',
      configClass: 'SandboxdPodTunnelConnectionConfig',
      runtimeApi: 'sandboxd',
      via: 'pod',
      transport: 'kubectl port-forward pod/<pod> <local>:rest_port <local>:grpc_port',
      ports: [8080, 9090],
      headers: SANDBOXD_ROUTER_HEADERS,
      needsPodNetworkListener: true,
      needsKubelet: true,
      calls: SANDBOXD_CALLS,
      cite: `${at('models.py')}, ${at('connector.py')}`,
    },
    'sandboxd-in-cluster-service': {
      ...base,
      mode: 'sandboxd-in-cluster-service',
      configClass: 'SandboxdInClusterConnectionConfig(mode="in-cluster-service")',
      runtimeApi: 'sandboxd',
      via: 'pod',
      transport: 'HTTP/gRPC to Sandbox.status.serviceFQDN:rest_port / :grpc_port (no fallback)',
      ports: [8080, 9090],
      headers: SANDBOXD_ROUTER_HEADERS,
      needsPodNetworkListener: true,
      needsService: true,
      calls: SANDBOXD_CALLS,
      cite: `${at('models.py')}, ${at('connector.py')}`,
    },
    'sandboxd-in-cluster-pod-ip': {
      ...base,
      mode: 'sandboxd-in-cluster-pod-ip',
      configClass: 'SandboxdInClusterConnectionConfig(mode="in-cluster-pod-ip")',
      runtimeApi: 'sandboxd',
      via: 'pod',
      transport: 'HTTP/gRPC to <Sandbox.status.podIPs>:rest_port / :grpc_port (no fallback)',
      ports: [8080, 9090],
      headers: SANDBOXD_ROUTER_HEADERS,
      needsPodNetworkListener: true,
      calls: SANDBOXD_CALLS,
      cite: `${at('models.py')}, ${at('connector.py')}`,
    },
  },
};

/** The facts of one SDK version, or undefined when none are recorded. */
export function clientSdkFacts(sdk: string, version: string): ClientSdkFacts | undefined {
  return sdk === 'k8s-agent-sandbox' && version === V ? K8S_AGENT_SANDBOX_1_0_8 : undefined;
}

/**
 * Where each runtime server of the pinned release listens, for the modes that dial the pod network
 * (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`: both listeners bind 127.0.0.1 only, reachable from outside the pod
 * only through explicit proxying; the python runtime's image runs uvicorn on 0.0.0.0:8888,
 * `examples/python-runtime-sandbox/Dockerfile@v0.5.6`).
 */
export const RUNTIME_BIND: Readonly<Record<ClientRuntimeApi, { readonly host: string; readonly cite: string }>> = {
  sandboxd: { host: '127.0.0.1', cite: 'packages/sandboxd/cmd/sandboxd/main.go@v0.5.6' },
  'python-runtime': { host: '0.0.0.0', cite: 'examples/python-runtime-sandbox/Dockerfile@v0.5.6' },
};
