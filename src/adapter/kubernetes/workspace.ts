/**
 * Whether a Sandbox's runtime root survives suspend: on every release the controller deletes the pod and keeps the
 * Sandbox's PVCs (`<volumeClaimTemplate>-<sandbox>`, reconciled whatever the operating mode) and mounts them into the
 * new pod under the template's name (`controllers/sandbox_controller.go@{v0.4.6,v0.5.0,v0.5.6}`,
 * `api/v1beta1/sandbox_types.go@v0.5.6`). An emptyDir or the container filesystem goes with the pod. Pure.
 */
import type { SandboxView } from './views.js';

export interface WorkspaceVolume {
  /** The root is on a volumeClaimTemplate's PVC, which the release keeps across suspend/resume. */
  readonly kept: boolean;
  /** The volume mounted at (or above) the root, when one is. */
  readonly volume?: string;
  /** What the root is on, in words. */
  readonly on: string;
}

interface RawContainer {
  readonly volumeMounts?: ReadonlyArray<{ readonly name?: string; readonly mountPath?: string }>;
}

/** What `root` (an absolute path in any of the pod's containers) of Sandbox `sb` is on. */
export function workspaceVolume(sb: SandboxView, root: string): WorkspaceVolume {
  const spec = (sb.blueprint.spec?.podTemplate?.spec ?? {}) as { containers?: readonly RawContainer[] };
  const claimed = new Set((sb.blueprint.spec?.volumeClaimTemplates ?? []).map((v) => v.metadata?.name ?? ''));
  const under = (mount: string): boolean => {
    const m = mount.replace(/\/+$/, '');
    return root === m || root.startsWith(`${m}/`);
  };
  // The deepest mount at or above the root decides.
  let best: { name: string; path: string } | undefined;
  for (const c of spec.containers ?? [])
    for (const vm of c.volumeMounts ?? [])
      if (vm.name && vm.mountPath && under(vm.mountPath) && vm.mountPath.length > (best?.path.length ?? -1))
        best = { name: vm.name, path: vm.mountPath };
  if (!best) return { kept: false, on: `${root} is on the container filesystem` };
  if (claimed.has(best.name))
    return { kept: true, volume: best.name, on: `${root} is on volumeClaimTemplate ${best.name} (a PVC)` };
  return { kept: false, volume: best.name, on: `${root} is on volume ${best.name}, not a volumeClaimTemplate` };
}

/** `--root-dir` of a container of the Sandbox's pod template (sandboxd's flag), when one sets it. */
export function sandboxdRoot(sb: SandboxView): string | undefined {
  const spec = (sb.blueprint.spec?.podTemplate?.spec ?? {}) as { containers?: ReadonlyArray<{ args?: string[] }> };
  for (const c of spec.containers ?? [])
    for (const a of c.args ?? []) if (a.startsWith('--root-dir=')) return a.slice('--root-dir='.length);
  return undefined;
}
