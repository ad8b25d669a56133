/**
 * What the official Python client of Agent Sandbox (`k8s-agent-sandbox` on PyPI) does on the wire, per connection mode,
 * read from its source at each recorded version. Constructs check a declared client against the environment with these
 * facts; the verifier probes along the same path. Every fact cites `k8s_agent_sandbox/<file>@<version>` inside the wheel
 * (`k8s_agent_sandbox-1.0.8-py3-none-any.whl`, sha256 7857684e0e99ea8345feb38025d7c4a3e2c8ad697dc5161069befee5888d2f20;
 * `k8s_agent_sandbox-0.5.6-py3-none-any.whl`, sha256 a9f560f91285e4ef68ee32b08fdd98c80fb0e93073296f4adc7621c62ee25880).
 * The 0.4.x wheels claim at v1alpha1 (`k8s_agent_sandbox/constants.py@0.4.6`, wheel sha256
 * feef320af4302941215641a8fbfaa4d2e673d63a4fa205f6f7e5bf21029d6a7b); no 0.4.x facts are recorded.
 */

import { familyOfTag, RELEASE_FAMILIES } from '../model/releases.js';

/** Client SDKs AgentPlane knows. */
export const CLIENT_SDKS = ['k8s-agent-sandbox'] as const;
export type ClientSdk = (typeof CLIENT_SDKS)[number];

/** Versions of each SDK whose facts are recorded here. */
export const CLIENT_SDK_VERSIONS: Readonly<Record<ClientSdk, readonly string[]>> = {
  'k8s-agent-sandbox': ['0.5.6', '1.0.8'],
};

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
  /** `group/version` the client creates SandboxClaims at; the release must serve it. */
  readonly claimApiVersion: string;
  /** `group/version` the client reads Sandboxes at; the release must serve it. */
  readonly sandboxApiVersion: string;
  /** sha256 of the wheel the facts were read from. */
  readonly wheelSha256: string;
  /** `SandboxDirectConnectionConfig` takes `extra_headers` (e.g. a Bearer token for the router); 0.5.6 has none. */
  readonly extraHeaders: boolean;
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
  /** The modes this version has (0.5.6 has no sandboxd modes). */
  readonly modes: Readonly<Partial<Record<ClientMode, ClientModeFacts>>>;
  readonly cite: Readonly<Record<string, string>>;
}

const V = '1.0.8';
const at = (path: string, version: string = V): string => `k8s_agent_sandbox/${path}@${version}`;

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
export const K8S_AGENT_SANDBOX_1_0_8: ClientSdkFacts & {
  readonly modes: Readonly<Record<ClientMode, ClientModeFacts>>;
} = {
  sdk: 'k8s-agent-sandbox',
  version: V,
  claimsFrom: 'SandboxWarmPool',
  claimApiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  sandboxApiVersion: 'agents.x-k8s.io/v1beta1',
  wheelSha256: '7857684e0e99ea8345feb38025d7c4a3e2c8ad697dc5161069befee5888d2f20',
  extraHeaders: true,
  podIpFrom: 'Sandbox.status.podIPs (IPv4 preferred)',
  retries: { total: 5, backoffFactor: 0.5, statusForcelist: [500, 502, 503, 504], methods: ['GET', 'PUT', 'DELETE'] },
  followsRedirects: false,
  cite: {
    claimsFrom: `${at('sandbox_client.py')} (create_sandbox(warmpool)), ${at('k8s_helper.py')} (spec.warmPoolRef.name)`,
    claimApiVersion: at('constants.py'),
    sandboxApiVersion: at('constants.py'),
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

const V056 = '0.5.6';
const at056 = (path: string): string => at(path, V056);
const PYTHON_RUNTIME_CALLS_0_5_6: readonly ClientCall[] = [
  {
    op: 'execute',
    request: 'POST execute {"command"} -> {"stdout","stderr","exit_code"}',
    cite: at056('commands/command_executor.py'),
  },
  ...PYTHON_RUNTIME_CALLS.slice(1).map((c) => ({ ...c, cite: at056('files/filesystem.py') })),
];
const mode056 = (m: ClientModeFacts): ClientModeFacts => ({
  ...m,
  calls: PYTHON_RUNTIME_CALLS_0_5_6,
  cite: `${at056('models.py')}, ${at056('connector.py')}`,
});

/**
 * k8s-agent-sandbox 0.5.6: the client of the v0.5 releases. It claims at v1beta1 like 1.0.8, has the four
 * python-runtime modes only (no sandboxd modes, no `extra_headers`), sends no `timeout_seconds`, and retries POST too.
 */
export const K8S_AGENT_SANDBOX_0_5_6: ClientSdkFacts = {
  sdk: 'k8s-agent-sandbox',
  version: V056,
  claimsFrom: 'SandboxWarmPool',
  claimApiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  sandboxApiVersion: 'agents.x-k8s.io/v1beta1',
  wheelSha256: 'a9f560f91285e4ef68ee32b08fdd98c80fb0e93073296f4adc7621c62ee25880',
  extraHeaders: false,
  podIpFrom: 'Sandbox.status.podIPs (IPv4 preferred)',
  retries: {
    total: 5,
    backoffFactor: 0.5,
    statusForcelist: [500, 502, 503, 504],
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
  },
  followsRedirects: false,
  cite: {
    claimsFrom: `${at056('sandbox_client.py')} (create_sandbox(warmpool)), ${at056('k8s_helper.py')} (spec.warmPoolRef.name)`,
    claimApiVersion: at056('constants.py'),
    sandboxApiVersion: at056('constants.py'),
    podIpFrom: `${at056('sandbox.py')} (get_pod_ip), ${at056('utils.py')} (select_pod_ip)`,
    retries: at056('connector.py'),
    followsRedirects: at056('connector.py'),
    // SandboxDirectConnectionConfig has api_url and server_port only: the client sends no Authorization header
    routerHeaders: `${at056('connector.py')} (send_request), ${at056('models.py')} (no extra_headers)`,
  },
  modes: {
    router: mode056(K8S_AGENT_SANDBOX_1_0_8.modes.router),
    gateway: mode056(K8S_AGENT_SANDBOX_1_0_8.modes.gateway),
    tunnel: mode056(K8S_AGENT_SANDBOX_1_0_8.modes.tunnel),
    'in-cluster': mode056(K8S_AGENT_SANDBOX_1_0_8.modes['in-cluster']),
  },
};

const RECORDED: readonly ClientSdkFacts[] = [K8S_AGENT_SANDBOX_0_5_6, K8S_AGENT_SANDBOX_1_0_8];

/** The facts of one SDK version, or undefined when none are recorded. */
export function clientSdkFacts(sdk: string, version: string): ClientSdkFacts | undefined {
  return RECORDED.find((f) => f.sdk === sdk && f.version === version);
}

/** Where one runtime server listens by default under one release, and whether it can be told otherwise. */
export interface RuntimeBind {
  /** Address its listeners bind when the pod spec says nothing: `127.0.0.1` (loopback only) or `0.0.0.0` (the pod network). */
  readonly host: string;
  /** The server takes `--listen-host` (sandboxd v1.0.x); without it a `--listen-host` argument makes it exit. */
  readonly listenHostFlag: boolean;
  readonly cite: string;
}

/**
 * Where each runtime server listens under `release` (a tag such as `v1.0.3`, or a family such as `v1.0`), for the modes
 * that dial the pod network. sandboxd up to v0.5.6 binds both listeners to 127.0.0.1 and has no flag to change it
 * (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`); from v1.0.1 `--listen-host` sets the address, default `0.0.0.0`
 * (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`). The python runtime's image runs uvicorn on 0.0.0.0:8888 on every
 * release (`examples/python-runtime-sandbox/Dockerfile@v0.5.6`, unchanged at `@v1.0.3`). A tag of no known family is
 * treated as the older, loopback-only sandboxd.
 */
export function runtimeBind(release: string, api: ClientRuntimeApi): RuntimeBind {
  const family = (RELEASE_FAMILIES as readonly string[]).includes(release) ? release : familyOfTag(release);
  const v1 = family === 'v1.0';
  if (api === 'python-runtime')
    return {
      host: '0.0.0.0',
      listenHostFlag: false,
      cite: `examples/python-runtime-sandbox/Dockerfile@${v1 ? 'v1.0.3' : 'v0.5.6'}`,
    };
  return v1
    ? { host: '0.0.0.0', listenHostFlag: true, cite: 'packages/sandboxd/cmd/sandboxd/main.go@v1.0.3' }
    : { host: '127.0.0.1', listenHostFlag: false, cite: 'packages/sandboxd/cmd/sandboxd/main.go@v0.5.6' };
}

/** Whether `host` is a loopback address (`127.0.0.0/8`, `::1`, `localhost`): nothing outside the pod reaches it. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
