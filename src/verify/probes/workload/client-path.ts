/**
 * Whether this run took the path of a declared client that dials the pod itself (`via: pod`): `direct` to the pod IP
 * for the in-cluster modes (the verifier then runs inside the pod network), `port-forward` to the pod for
 * sandboxd-pod-tunnel (`k8s_agent_sandbox/connector.py@1.0.8`). Over another transport the verifier never saw the
 * listener or the NetworkPolicy the client meets, so exec and files stay below verified.
 */
import type { TemplatePlan, VerifyPlan } from '../../plan.js';
import type { WorkloadFacts } from './facts.js';

/** Records `ClientPathNotObserved` on exec and files for each pod-dialling client of `template` whose path this run did not take. */
export function clientPathEvidence(
  plan: Pick<VerifyPlan, 'clients' | 'warmPools' | 'transport'>,
  template: Pick<TemplatePlan, 'namespace' | 'name'>,
  f: Pick<WorkloadFacts, 'exec' | 'files'>,
  note: (text: string) => void,
): void {
  for (const c of plan.clients ?? []) {
    if (c.via !== 'pod') continue;
    const uses = c.warmPools.some((p) =>
      plan.warmPools.some(
        (w) =>
          w.namespace === p.namespace &&
          w.name === p.name &&
          w.namespace === template.namespace &&
          w.template === template.name,
      ),
    );
    const path = c.mode === 'sandboxd-pod-tunnel' ? 'port-forward' : 'direct';
    if (!uses || plan.transport === path) continue;
    const how = path === 'direct' ? `the pod network (pod IP, port ${c.ports.join('/')})` : 'a port-forward to the pod';
    const hint = path === 'direct' ? ' from inside the pod network, e.g. the VerifierJob' : '';
    const why = `${c.sdk} ${c.version} (${c.mode}) dials the pod over ${how}; this run used ${plan.transport}, which does not take that path (verify with --transport ${path}${hint})`;
    note(why);
    const subject = `template ${template.namespace}/${template.name}`;
    for (const x of [f.exec, f.files]) x.add('verified', 'unknown', subject, 'ClientPathNotObserved', why);
  }
}
