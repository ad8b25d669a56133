/**
 * The fresh peers of the enforcement test: more probe sandboxes of a template, made by the verifier the way its
 * workload probe makes one (a claim on an empty pool of its own on v0.5+/v1.0, a bare Sandbox on v0.4; the same
 * rights, the same cleanup), started while the test runs. A pod the policy engine has never seen is what a crashed or
 * lagging agent leaves open (kube-router lets a new pod's traffic through until its rules are programmed), so the
 * test always includes two, and one template is enough to test.
 */
import { isBetaFamily } from '../../model/releases.js';
import type { TemplatePlan } from '../plan.js';
import type { ProbeRun } from '../runner.js';
import { apiVersionOf, type ProbeDeps } from './common.js';
import type { ReadyProbeSandbox } from './workload/handoff.js';
import { claimAndWait } from './workload/provision-claim.js';
import { sandboxAndWait } from './workload/provision-sandbox.js';
import { probeSandbox } from './workload/sandbox-ready.js';

/**
 * Makes a fresh sandbox of `template` (`prefix` keeps the names of several apart), or says why none is Ready (what was
 * looked at, what was seen, in words).
 */
export type PeerMaker = (
  template: TemplatePlan,
  ctx: ProbeRun,
  prefix: string,
) => Promise<ReadyProbeSandbox | { field: string; value: string; why: string }>;

/** The verifier's own maker: provisions, waits for Ready, reads the pod (never a pool member of the environment's). */
export function freshPeer(deps: ProbeDeps): PeerMaker {
  return async (template, ctx, prefix) => {
    if (template.runtime === 'custom')
      return {
        field: 'runtime',
        value: 'custom',
        why: `template ${template.name} runs a custom runtime: no dial commands`,
      };
    const r = isBetaFamily(deps.facts.family)
      ? await claimAndWait(deps, template, undefined, ctx, prefix)
      : await sandboxAndWait(deps, template, apiVersionOf(deps.facts), ctx, prefix);
    if (!r.ready) return { field: 'fresh peer', value: r.reason, why: `no fresh peer of ${template.name}: ${r.why}` };
    const sb = await probeSandbox(deps, template, template.runtime, r);
    if (!sb.pod) return { field: 'fresh peer', value: 'pod unreadable', why: `fresh peer ${sb.name}: ${sb.podState}` };
    return { template: template.name, pod: sb.pod, target: sb.target };
  };
}
