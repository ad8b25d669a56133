/**
 * A pod spec that runs sandboxd as the process that executes commands in a sandbox
 * (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`, `packages/sandboxd/USER_GUIDE.md@v0.5.6`).
 * Up to v0.5.6 sandboxd binds gRPC (9090) and REST (8080) to 127.0.0.1 only, so the kubelet cannot probe it over the
 * pod IP (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`): readiness is then an exec probe that speaks HTTP to
 * `127.0.0.1:8080/v1/health` through bash's `/dev/tcp` (the image is Debian bookworm-slim, which has bash; inferred,
 * not run against a cluster here). From v1.0.1 `--listen-host` (default `0.0.0.0`) puts both listeners on the pod
 * network (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`), and readiness is a plain `GET /v1/health` on the REST port.
 */
import { isLoopbackHost, runtimeBind } from '../releases/index.js';
import { k8s } from './k8s.js';
import type { TemplateRuntime } from './template-runtime.js';

/** sandboxd's container name in pod specs made here. */
export const SANDBOXD_CONTAINER = 'sandboxd';
/** REST port (`--rest-port`, default 8080). */
export const SANDBOXD_REST_PORT = 8080;
/** gRPC port (`--grpc-port`, default 9090). */
export const SANDBOXD_GRPC_PORT = 9090;
/** Working directory and confinement root (`--root-dir`, default `/workspace`). */
export const SANDBOXD_ROOT = '/workspace';

/** The runtime description of templates built with {@link sandboxdPodSpec}. */
export const SANDBOXD_RUNTIME: TemplateRuntime = {
  kind: 'sandboxd',
  container: SANDBOXD_CONTAINER,
  ports: [SANDBOXD_REST_PORT, SANDBOXD_GRPC_PORT],
};

/** Props of {@link sandboxdPodSpec}. */
export interface SandboxdPodSpecProps {
  /** sandboxd image, pinned by tag and, where known, digest. Upstream publishes only a staging `latest-main` (`packages/sandboxd/USER_GUIDE.md@v0.5.6`), so teams build or mirror one. */
  readonly image: string;
  /**
   * cpu/memory for sandboxd (requests = limits).
   * @default { cpu: '500m', memory: '512Mi' }
   */
  readonly resources?: { readonly cpu: string; readonly memory: string };
  /**
   * Size limit of the `/workspace` emptyDir (quantity).
   * @default '1Gi'
   */
  readonly workspaceSize?: string;
  /**
   * Optional workload container sharing `/workspace`; it gets `SANDBOXD_GRPC_ADDR` / `SANDBOXD_REST_ADDR`.
   * @default - none
   */
  readonly workload?: k8s.Container;
  /**
   * Uid/gid the pod runs as.
   * @default 1000 (the sandboxd image's user)
   */
  readonly user?: number;
  /**
   * The release the template is for (its tag, e.g. `v1.0.3`, or `release.facts.tag` of a loaded release). It decides
   * whether `--listen-host` is written and which readiness probe fits.
   * @default - none: no `--listen-host` is written, and readiness is the in-container exec probe, which works whether
   * sandboxd binds loopback (v0.5.6) or every address (v1.0.x)
   */
  readonly release?: string;
  /**
   * Address sandboxd's REST and gRPC listeners bind, written as `--listen-host=<host>`. Only sandboxd v1.0.1+ has the
   * flag (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`); sandboxd v0.5.6 exits on it, so a template carrying it on
   * an older release is refused at synthesis (`UnsupportedByReleaseError`). Off loopback, readiness is
   * `GET /v1/health` on the REST port from the kubelet.
   * @default - `0.0.0.0` (the pod network, written explicitly) when `release` is v1.0.x; otherwise not written (v0.5.6
   * binds 127.0.0.1 and has no flag)
   */
  readonly listenHost?: string;
}

/** The `--listen-host` value among a container's command and args (Go flag syntax: `-`/`--`, `=value` or next arg). */
export function listenHostArg(container: {
  readonly command?: readonly string[];
  readonly args?: readonly string[];
}): string | undefined {
  const argv = [...(container.command ?? []), ...(container.args ?? [])];
  let found: string | undefined;
  argv.forEach((a, i) => {
    const m = /^--?listen-host(?:=(.*))?$/.exec(a);
    if (m !== null) found = m[1] ?? argv[i + 1] ?? '';
  });
  return found;
}

const HEALTH_PROBE = [
  'bash',
  '-c',
  `exec 3<>/dev/tcp/127.0.0.1/${SANDBOXD_REST_PORT} && printf 'GET /v1/health HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && grep -q '"ok"' <&3`,
];

/** A pod spec with sandboxd (and an optional workload container) sharing an emptyDir at `/workspace`. */
export function sandboxdPodSpec(props: SandboxdPodSpecProps): k8s.PodSpec {
  const bind = props.release !== undefined ? runtimeBind(props.release, 'sandboxd') : undefined;
  const listenHost = props.listenHost ?? (bind?.listenHostFlag === true ? bind.host : undefined);
  const onPodNetwork = listenHost !== undefined && !isLoopbackHost(listenHost);
  const readinessProbe: NonNullable<k8s.Container['readinessProbe']> = onPodNetwork
    ? { httpGet: { path: '/v1/health', port: k8s.IntOrString.fromNumber(SANDBOXD_REST_PORT) } }
    : { exec: { command: HEALTH_PROBE } };
  const res = props.resources ?? { cpu: '500m', memory: '512Mi' };
  const user = props.user ?? 1000;
  const workspaceMount: k8s.VolumeMount = { name: 'workspace', mountPath: SANDBOXD_ROOT };
  const quantities = { cpu: k8s.Quantity.fromString(res.cpu), memory: k8s.Quantity.fromString(res.memory) };
  const sandboxd: k8s.Container = {
    name: SANDBOXD_CONTAINER,
    image: props.image,
    imagePullPolicy: 'IfNotPresent',
    args: [
      `--grpc-port=${SANDBOXD_GRPC_PORT}`,
      `--rest-port=${SANDBOXD_REST_PORT}`,
      `--root-dir=${SANDBOXD_ROOT}`,
      ...(listenHost !== undefined ? [`--listen-host=${listenHost}`] : []),
    ],
    ports: [
      { name: 'rest', containerPort: SANDBOXD_REST_PORT, protocol: 'TCP' },
      { name: 'grpc', containerPort: SANDBOXD_GRPC_PORT, protocol: 'TCP' },
    ],
    readinessProbe: { ...readinessProbe, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 3 },
    resources: { requests: quantities, limits: quantities },
    volumeMounts: [workspaceMount],
  };
  const containers: k8s.Container[] = [sandboxd];
  if (props.workload !== undefined) {
    containers.push({
      ...props.workload,
      env: [
        ...(props.workload.env ?? []),
        { name: 'SANDBOXD_GRPC_ADDR', value: `localhost:${SANDBOXD_GRPC_PORT}` },
        { name: 'SANDBOXD_REST_ADDR', value: `localhost:${SANDBOXD_REST_PORT}` },
      ],
      volumeMounts: [...(props.workload.volumeMounts ?? []), workspaceMount],
    });
  }
  return {
    securityContext: { runAsUser: user, runAsGroup: user, fsGroup: user, runAsNonRoot: true },
    containers,
    volumes: [{ name: 'workspace', emptyDir: { sizeLimit: k8s.Quantity.fromString(props.workspaceSize ?? '1Gi') } }],
  };
}
