/**
 * The runtime container's readiness probe: a pod whose runtime serves on the pod network turns Ready only once the
 * runtime answers there (the kubelet probes the pod IP). Where the runtime binds 127.0.0.1 the kubelet cannot reach it.
 */
import { RUNTIME_BIND } from '../releases/index.js';
import { ConstructPropsError } from './errors.js';
import type { Json } from './kube-object.js';
import type { TemplateRuntime } from './template-runtime.js';

/** Seconds between probes: a warm pool's pod is handed out within about this long after its runtime listens. */
const PERIOD_SECONDS = 1;

/**
 * Adds the probe to the runtime container of `podSpec` (in place) when `wanted` (default: the runtime kind serves on
 * the pod network) and the container declares no readiness probe of its own.
 * @throws ConstructPropsError (reason `ReadinessProbeUnreachable`) when `wanted` is true for a runtime bound to loopback.
 */
export function addReadinessProbe(
  path: string,
  podSpec: Json,
  runtime: TemplateRuntime,
  wanted: boolean | undefined,
): void {
  const bind = runtime.kind === 'custom' ? undefined : RUNTIME_BIND[runtime.kind];
  if (wanted === true && bind?.host === '127.0.0.1')
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
  container['readinessProbe'] = {
    ...(runtime.kind === 'python-runtime' ? { httpGet: { path: '/', port } } : { tcpSocket: { port } }),
    periodSeconds: PERIOD_SECONDS,
  };
}
