/**
 * The runtime container's readiness probe: a pod whose runtime serves on the pod network turns Ready only once the
 * runtime answers there (the kubelet probes the pod IP). Where the runtime binds 127.0.0.1 the kubelet cannot reach it.
 * Where it binds is release-aware: sandboxd v0.5.6 is loopback-only, sandboxd v1.0.x binds `--listen-host`.
 */
import { isLoopbackHost, runtimeBind } from '../releases/index.js';
import { ConstructPropsError, UnsupportedByReleaseError } from './errors.js';
import type { Json } from './kube-object.js';
import { listenHostArg } from './sandboxd.js';
import type { TemplateRuntime, TemplateRuntimeBind } from './template-runtime.js';

/** Seconds between probes: a warm pool's pod is handed out within about this long after its runtime listens. */
const PERIOD_SECONDS = 1;

/**
 * Where the runtime container of a template listens under release `tag`: its `--listen-host` (sandboxd only), else the
 * release's default; undefined for a custom runtime (its bind is not known).
 * @throws UnsupportedByReleaseError when a sandboxd container carries `--listen-host` on a release whose sandboxd has no
 * such flag (v0.5.6 sandboxd exits on an unknown flag, `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`).
 */
export function templateRuntimeBind(
  path: string,
  tag: string,
  podSpec: Json,
  runtime: TemplateRuntime,
): TemplateRuntimeBind | undefined {
  if (runtime.kind === 'custom') return undefined;
  const bind = runtimeBind(tag, runtime.kind);
  const container = (podSpec['containers'] as Json[]).find((c) => c['name'] === runtime.container)!;
  const arg =
    runtime.kind === 'sandboxd' ? listenHostArg(container as { command?: string[]; args?: string[] }) : undefined;
  if (arg !== undefined && !bind.listenHostFlag)
    throw new UnsupportedByReleaseError(
      path,
      `podSpec container ${runtime.container} --listen-host`,
      tag,
      `container ${runtime.container} passes --listen-host=${arg}, but sandboxd of release ${tag} has no such flag and binds ${bind.host} only (${bind.cite}); it would exit on the unknown flag`,
      'drop listenHost (and any --listen-host argument) on this release, or pin a v1.0.x release whose sandboxd has the flag',
    );
  const host = arg ?? bind.host;
  return {
    host,
    from: arg !== undefined ? 'listen-host' : 'release',
    podNetwork: !isLoopbackHost(host),
    cite: arg !== undefined ? `podSpec container ${runtime.container} args` : bind.cite,
  };
}

/**
 * Adds the probe to the runtime container of `podSpec` (in place) when `wanted` (default: the runtime kind serves on
 * the pod network) and the container declares no readiness probe of its own.
 * @throws ConstructPropsError (reason `ReadinessProbeUnreachable`) when `wanted` is true for a runtime bound to loopback.
 */
export function addReadinessProbe(
  path: string,
  podSpec: Json,
  runtime: TemplateRuntime,
  bind: TemplateRuntimeBind | undefined,
  wanted: boolean | undefined,
): void {
  if (wanted === true && bind?.podNetwork === false)
    throw new ConstructPropsError(path, 'SandboxTemplate', [
      {
        prop: 'runtimeReadinessProbe',
        reason: 'ReadinessProbeUnreachable',
        value: true,
        message: `runtimeReadinessProbe: ${runtime.kind} binds ${bind.host} only (${bind.cite}); the kubelet probes the pod IP and can never reach it`,
      },
    ]);
  if (!(wanted ?? runtime.kind === 'python-runtime')) return;
  const container = (podSpec['containers'] as Json[]).find((c) => c['name'] === runtime.container)!;
  if (container['readinessProbe'] !== undefined) return;
  const port = runtime.ports[0]!;
  // sandboxd on the pod network answers GET /v1/health on its REST port (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`)
  const check =
    runtime.kind === 'python-runtime'
      ? { httpGet: { path: '/', port } }
      : runtime.kind === 'sandboxd'
        ? { httpGet: { path: '/v1/health', port } }
        : { tcpSocket: { port } };
  container['readinessProbe'] = {
    ...check,
    periodSeconds: PERIOD_SECONDS,
  };
}
