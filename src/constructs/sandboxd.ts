/**
 * A pod spec that runs sandboxd as the process that executes commands in a sandbox
 * (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`, `packages/sandboxd/USER_GUIDE.md@v0.5.6`).
 * sandboxd binds gRPC (9090) and REST (8080) to 127.0.0.1 only, so the kubelet cannot probe it over the pod IP
 * (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`): readiness is an exec probe that speaks HTTP to
 * `127.0.0.1:8080/v1/health` through bash's `/dev/tcp` (the image is Debian bookworm-slim, which has bash; inferred,
 * not run against a cluster here).
 */
import { k8s } from './k8s.js';
import type { TemplateRuntime } from './template.js';

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
}

const HEALTH_PROBE = [
  'bash',
  '-c',
  `exec 3<>/dev/tcp/127.0.0.1/${SANDBOXD_REST_PORT} && printf 'GET /v1/health HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && grep -q '"ok"' <&3`,
];

/** A pod spec with sandboxd (and an optional workload container) sharing an emptyDir at `/workspace`. */
export function sandboxdPodSpec(props: SandboxdPodSpecProps): k8s.PodSpec {
  const res = props.resources ?? { cpu: '500m', memory: '512Mi' };
  const user = props.user ?? 1000;
  const workspaceMount: k8s.VolumeMount = { name: 'workspace', mountPath: SANDBOXD_ROOT };
  const quantities = { cpu: k8s.Quantity.fromString(res.cpu), memory: k8s.Quantity.fromString(res.memory) };
  const sandboxd: k8s.Container = {
    name: SANDBOXD_CONTAINER,
    image: props.image,
    imagePullPolicy: 'IfNotPresent',
    args: [`--grpc-port=${SANDBOXD_GRPC_PORT}`, `--rest-port=${SANDBOXD_REST_PORT}`, `--root-dir=${SANDBOXD_ROOT}`],
    ports: [
      { name: 'rest', containerPort: SANDBOXD_REST_PORT, protocol: 'TCP' },
      { name: 'grpc', containerPort: SANDBOXD_GRPC_PORT, protocol: 'TCP' },
    ],
    readinessProbe: { exec: { command: HEALTH_PROBE }, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 3 },
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
