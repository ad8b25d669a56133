/**
 * Probe `images` (case unpinned-image-tags, verifier side): compares what the pods run (`status.containerStatuses[]
 * .imageID` / `.image`) with what the environment pinned, and adds the outcome to the `verified` step of the capability
 * the pods belong to (outcomes and verdicts: ../image-digests.ts):
 * - `controller`: pods selected by the controller Deployment's `spec.selector.matchLabels`, its first container against
 *   the pinned controller image (`k8s/controller.yaml@v0.5.6`: one container); not in `external` mode (no pods);
 * - `router`: pods with the router's pod labels in its namespace, first container against the router image the
 *   environment pinned; only when the router Service exists (a router run outside the cluster has no pods);
 * - `template/<ns>/<name>`: pods with the template's pod labels (sandboxes and warm-pool members alike), each container
 *   the template pins.
 * Runs before the workload probes, so it sees the environment's own pods, not the verifier's probe sandboxes (a probe pod
 * is made from the current pinned spec, so comparing it would mostly restate the pin; the skew this probe exists for is
 * in pods made earlier). Finding no started pod adds no evidence, only one progress note naming every owner without
 * one: the other probes report missing controllers, routers and pools.
 */
import type { CapabilityName } from '../../adapter/types.js';
import { mapLimit } from '../../model/arrays.js';
import type { PodView } from '../../adapter/kubernetes/views.js';
import type { Evidence } from '../evidence.js';
import { imageEvidence, startedContainers } from '../image-digests.js';
import type { Probe, ProbeRun } from '../runner.js';
import { Facts, reads, selector, type ProbeDeps } from './common.js';

/** Probe id. */
export const IMAGE_DIGESTS_PROBE = 'images';

/**
 * The image-digest probe, or undefined when the plan pins nothing it can compare (no controller Deployment, no router
 * image, no template with both images and pod labels).
 * @param opts.controllerImage overrides the pinned controller image (default: the plan's, else the release's `registry.k8s.io/agent-sandbox/agent-sandbox-controller:<tag>`)
 */
export function imageDigestsProbe(
  deps: ProbeDeps,
  opts: { controllerMode: 'deployment' | 'external'; controllerImage?: string },
): Probe | undefined {
  const { plan } = deps;
  const templates = plan.templates.filter(
    (t) => t.images && Object.keys(t.images).length > 0 && t.podLabels && Object.keys(t.podLabels).length > 0,
  );
  const covers: CapabilityName[] = [];
  if (opts.controllerMode === 'deployment') covers.push('controller');
  if (plan.router?.image) covers.push('router');
  for (const t of templates) covers.push(`template/${t.namespace}/${t.name}`);
  if (covers.length === 0) return undefined;
  return {
    id: IMAGE_DIGESTS_PROBE,
    after: ['install'],
    covers,
    timeoutStep: 'verified',
    deadlineMs: 15_000,
    async run(ctx) {
      const out: Evidence[] = [];
      const idle: string[] = [];
      if (opts.controllerMode === 'deployment')
        out.push(
          ...(await controllerPods(
            deps,
            opts.controllerImage ?? plan.controller.image ?? deps.facts.controllerImage,
            idle,
          )),
        );
      if (plan.router?.image) out.push(...(await routerPods(deps, plan.router.image, ctx, idle)));
      const listed = await mapLimit(templates, 16, (t) => reads(deps).pods(t.namespace, selector(t.podLabels!)));
      templates.forEach((t, i) => {
        const capability = `template/${t.namespace}/${t.name}` as const;
        const owner = `pods of template ${t.namespace}/${t.name}`;
        const pods = listed[i]!;
        if (pods.kind !== 'ok') out.push(...new Facts(capability).failedCall('verified', owner, pods).list);
        else out.push(...compared(capability, owner, pods.value, () => t.images!, idle));
      });
      if (idle.length > 0) ctx.note(`nothing to compare for ${idle.join(', ')}: no started pod`);
      return out;
    },
  };
}

async function controllerPods(deps: ProbeDeps, pinned: string, idle: string[]): Promise<Evidence[]> {
  const { namespace, deployment } = deps.plan.controller;
  const owner = `pods of Deployment ${namespace}/${deployment}`;
  const read = reads(deps);
  const d = await read.deployment(namespace, deployment);
  // A missing or unreadable Deployment is the controller probe's evidence; there are no pods to compare here.
  if (d.kind !== 'ok' || d.value === undefined) return [];
  const { selector: labels, container } = d.value;
  if (Object.keys(labels).length === 0 || container === undefined) return [];
  const pods = await read.pods(namespace, selector(labels));
  if (pods.kind !== 'ok') return new Facts('controller').failedCall('verified', owner, pods).list;
  return compared('controller', owner, pods.value, () => ({ [container]: pinned }), idle);
}

async function routerPods(deps: ProbeDeps, pinned: string, ctx: ProbeRun, idle: string[]): Promise<Evidence[]> {
  const router = deps.plan.router!;
  const owner = `router pods ${selector(router.podLabels)} in ${router.namespace}`;
  const read = reads(deps);
  const svc = await read.service(router.namespace, router.service);
  if (svc.kind === 'ok' && svc.value === undefined) {
    ctx.note(
      `no Service ${router.namespace}/${router.service}: router pods not compared (the router probe reports it)`,
    );
    return [];
  }
  const pods = await read.pods(router.namespace, selector(router.podLabels));
  if (pods.kind !== 'ok') return new Facts('router').failedCall('verified', owner, pods).list;
  return compared(
    'router',
    owner,
    pods.value,
    (pod) => {
      const first = pod.containers[0]?.name;
      return first === undefined ? {} : { [first]: pinned };
    },
    idle,
  );
}

/**
 * Evidence for the pods of one owner; pins are per pod (a router's first container may be named differently per pod).
 * An owner with no started pod gives no evidence and is added to `idle` (the probe names them all in one progress note).
 */
function compared(
  capability: CapabilityName,
  owner: string,
  pods: readonly PodView[],
  pins: (pod: PodView) => Readonly<Record<string, string>>,
  idle: string[],
): Evidence[] {
  const containers = pods.flatMap((p) => startedContainers([p], pins(p)));
  if (containers.length === 0) idle.push(owner);
  return imageEvidence(capability, owner, containers);
}
