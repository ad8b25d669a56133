/**
 * Probes of `suspend-resume` and `snapshot`.
 *
 * suspend-resume: v0.5 suspends with `spec.operatingMode: Suspended` and reports `Suspended=True/PodTerminated`;
 * v0.4.6 uses `spec.replicas: 0` and then reports Ready=True with no pod (`controllers/sandbox_controller.go@v0.4.6`,
 * `controllers/sandbox_controller.go@v0.5.6`). discovered = the Sandbox API of the release is served (from the install probe); compatible = the
 * release's suspend field (operatingMode or replicas) is in the pinned schema; configured = the controller that
 * carries it out is configured (controller probe). verified comes from the round trip on each template's probe sandbox
 * (workload/suspend-round-trip.ts), run when the environment declares suspend-resume; without one it stays unknown,
 * naming that acceptance test.
 *
 * snapshot: no snapshot exists in the controller or CRDs; only the Python SDK's GKE Pod Snapshot extension
 * (`k8s_agent_sandbox/gke_extensions/snapshots/**@v0.5.6`), which needs API group `podsnapshot.gke.io`. Without that
 * group the capability is `unsupported`; with it, it stays discovered (no acceptance test here).
 */
import { isBetaFamily } from '../../model/releases.js';
import type { Probe } from '../runner.js';
import { Facts, type ProbeDeps } from './common.js';

/** `roundTrips`: whether round-trip probes give the `verified` evidence in this run. */
export function suspendProbe(deps: ProbeDeps, roundTrips = false): Probe {
  return {
    id: 'suspend-resume',
    after: ['install', 'controller'],
    covers: ['suspend-resume'],
    timeoutStep: 'discovered',
    deadlineMs: 5_000,
    async run(ctx) {
      const f = new Facts('suspend-resume');
      const api = ctx.evidence.filter((e) => e.capability === 'sandbox-api' && e.step === 'discovered');
      if (api.length > 0 && api.every((e) => e.verdict === 'proven'))
        f.proven('discovered', 'CRD sandboxes.agents.x-k8s.io', 'SandboxApiServed', 'the Sandbox API is served');
      else
        f.add(
          'discovered',
          'missing',
          'CRD sandboxes.agents.x-k8s.io',
          'SandboxApiNotServed',
          'the Sandbox API is not served, so nothing can be suspended',
        );
      const tag = deps.facts.tag;
      if (isBetaFamily(deps.facts.family))
        f.proven(
          'compatible',
          `release ${tag}`,
          'SuspendSupported',
          `v1beta1 spec.operatingMode Running|Suspended (api/v1beta1/sandbox_types.go@${tag})`,
        );
      else
        f.proven(
          'compatible',
          `release ${tag}`,
          'SuspendSupported',
          `v1alpha1 spec.replicas 0|1; a paused ${tag} Sandbox reports Ready=True, so readiness is judged by pod IPs (controllers/sandbox_controller.go@${tag})`,
        );
      const ctrl = ctx.evidence.filter((e) => e.capability === 'controller' && e.step === 'configured');
      if (ctrl.length > 0 && ctrl.every((e) => e.verdict === 'proven'))
        f.proven(
          'configured',
          'controller',
          'ControllerConfigured',
          'the controller that deletes and recreates the pod is configured',
        );
      else
        f.add(
          'configured',
          'unknown',
          'controller',
          'ControllerNotConfigured',
          'the controller is not configured, so suspend cannot be carried out',
        );
      if (!roundTrips)
        f.add(
          'verified',
          'unknown',
          'suspend-resume',
          'NotTested',
          'no suspend/resume round trip was run (the environment does not declare suspend-resume)',
          {
            missingTest:
              'suspend-resume: Suspended=True/PodTerminated at the current generation, then Ready=True with a new pod UID',
          },
        );
      return f.list;
    },
  };
}

export function snapshotProbe(deps: ProbeDeps): Probe {
  return {
    id: 'snapshot',
    after: [],
    covers: ['snapshot'],
    timeoutStep: 'discovered',
    deadlineMs: 5_000,
    async run() {
      const f = new Facts('snapshot');
      const groups = await deps.cluster.apiGroups();
      if (groups.kind !== 'ok') return f.failedCall('discovered', 'API discovery', groups).list;
      if (!groups.value.includes('podsnapshot.gke.io')) {
        return f.add(
          'discovered',
          'unsupported',
          'API group podsnapshot.gke.io',
          'NoSnapshotApi',
          'no snapshot API on this cluster: Agent Sandbox has no snapshots of its own; only GKE Pod Snapshots (k8s_agent_sandbox/gke_extensions/snapshots/**@v0.5.6)',
        ).list;
      }
      f.proven('discovered', 'API group podsnapshot.gke.io', 'SnapshotApiServed', 'GKE Pod Snapshot API is served');
      f.add(
        'compatible',
        'unknown',
        'podsnapshot.gke.io',
        'NotTested',
        'snapshot support is not checked by this verifier',
        { missingTest: 'snapshot: PodSnapshotManualTrigger completes and a resumed sandbox restores its files' },
      );
      return f.list;
    },
  };
}
