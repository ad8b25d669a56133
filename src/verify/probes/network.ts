/**
 * Probe of `network-isolation` (case netpol-effective-coverage). NetworkPolicies only add: a pod is as open as the union of every policy
 * selecting it. For each running sandbox pod (label `agents.x-k8s.io/sandbox-name-hash`, `api/v1beta1/sandbox_types.go@v0.5.6`) in the
 * environment's namespaces, the probe finds the policies selecting it by its real labels and fails on "no policy
 * selects this pod" or "egress wider than declared" (an undeclared policy, such as the controller's default
 * `<template>-network-policy` allowing 0.0.0.0/0 minus private ranges, also selects it).
 * discovered = networking.k8s.io/v1 NetworkPolicies can be listed; compatible = every policy the environment declares
 * exists; configured = coverage holds for ≥1 examined pod; verified = enforcement observed from inside the probe
 * sandboxes and fresh peers started for the test (network-enforcement.ts) and declared DNS answered from inside one
 * (network-dns.ts), never read from the API.
 */
import { appendAll } from '../../model/arrays.js';
import type { EgressRuleView, LabelSelectorView, NetworkPolicyView, PodView } from '../../adapter/kubernetes/views.js';
import { sampleSize, type VerifyPlan } from '../plan.js';
import type { Probe } from '../runner.js';
import { RUN_LABEL } from '../workload.js';
import { Facts, reads, type ProbeDeps } from './common.js';
import { dnsEvidence } from './network-dns.js';
import { enforcementEvidence } from './network-enforcement.js';
import { freshPeer } from './network-peer.js';
import type { ProbeSandboxes } from './workload/handoff.js';

/** Whether a label selector selects `labels` (empty selector selects everything). */
export function selects(sel: LabelSelectorView | undefined, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(sel?.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel?.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const val = labels[e.key];
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(val!))) return false;
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(val!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** What an egress rule opens, in words, when it opens more than specific pods/namespaces (all destinations, or 0.0.0.0/0 / ::/0). */
function wideEgress(rule: EgressRuleView): string | undefined {
  const ports = rule.ports.map((p) => `${p.protocol ?? 'TCP'}/${p.port ?? '*'}`).join(',') || 'all ports';
  if (!rule.to || rule.to.length === 0) return `every destination on ${ports}`;
  const wide = rule.to.find((t) => t.ipBlock?.cidr === '0.0.0.0/0' || t.ipBlock?.cidr === '::/0');
  if (wide)
    return `${wide.ipBlock!.cidr}${wide.ipBlock!.except?.length ? ` except ${wide.ipBlock!.except.join(', ')}` : ''} on ${ports}`;
  return undefined;
}

/** One coverage gap of a pod: what was looked at (`field`), what was seen (`value`), and the sentence saying so. */
export interface CoverageProblem {
  readonly field: string;
  readonly value: string;
  readonly message: string;
}

/** Coverage findings for one pod (pure): empty when at least one policy selects it for egress and none adds undeclared wide egress. */
export function podCoverage(
  pod: PodView,
  policies: readonly NetworkPolicyView[],
  declared: ReadonlySet<string>,
): { selectedBy: string[]; problems: CoverageProblem[] } {
  const { labels, namespace } = pod.meta;
  const podName = `${namespace}/${pod.meta.name}`;
  const selecting = policies.filter((p) => p.meta.namespace === namespace && selects(p.podSelector, labels));
  const selectedBy = selecting.map((p) => p.meta.name);
  const egressPolicies = selecting.filter((p) => p.restrictsEgress);
  const problems: CoverageProblem[] = [];
  if (selecting.length === 0)
    problems.push({
      field: 'selecting policies',
      value: 'none',
      message: `no policy selects pod ${podName}: it is unrestricted`,
    });
  else if (egressPolicies.length === 0)
    problems.push({
      field: 'egress policies',
      value: 'none',
      message: `no policy restricts egress of pod ${podName} (selected by ${selectedBy.join(', ')} for ingress only)`,
    });
  for (const p of egressPolicies) {
    const name = p.meta.name;
    if (declared.has(name)) continue;
    for (const rule of p.egress) {
      const wide = wideEgress(rule);
      if (wide)
        problems.push({
          field: `NetworkPolicy/${name} egress`,
          value: wide,
          message: `egress wider than declared for pod ${podName}: policy ${name}, not declared by the environment, also selects it and allows ${wide}`,
        });
    }
  }
  return { selectedBy, problems };
}

/** Names of the policies the environment stands behind: its own, and the controller's for Managed templates. */
export function declaredPolicies(plan: VerifyPlan): Set<string> {
  return new Set([
    ...plan.networkPolicies.map((p) => p.name),
    ...plan.templates.filter((t) => t.networkPolicyManagement === 'Managed').map((t) => `${t.name}-network-policy`),
  ]);
}

export function networkProbe(deps: ProbeDeps, after: readonly string[], sandboxes: ProbeSandboxes): Probe {
  return {
    id: 'network-isolation',
    after,
    covers: ['network-isolation'],
    timeoutStep: 'configured',
    // Coverage reads, then the enforcement test: a fresh peer to wait for, then per round the pairs', the controls' and
    // the egress dials (a dozen for two templates), each within its own runtime deadline.
    deadlineMs:
      30_000 + deps.plan.readyTimeoutMs + sampleSize(deps.plan) * 12 * Math.max(deps.plan.probeTimeoutMs, 5_000),
    async run(ctx) {
      const f = new Facts('network-isolation');
      const namespaces = [
        ...new Set([
          ...deps.plan.templates.map((t) => t.namespace),
          ...deps.plan.networkPolicies.map((p) => p.namespace),
        ]),
      ];
      if (namespaces.length === 0)
        return f.add(
          'discovered',
          'missing',
          'environment',
          'NoNamespacesDeclared',
          'the environment declares no sandbox namespaces',
        ).list;
      const read = reads(deps);
      const policies: NetworkPolicyView[] = [];
      for (const ns of namespaces) {
        const r = await read.networkPolicies(ns);
        if (r.kind !== 'ok') return f.failedCall('discovered', `NetworkPolicies in ${ns}`, r).list;
        appendAll(policies, r.value);
      }
      f.proven(
        'discovered',
        'networking.k8s.io/v1',
        'NetworkPoliciesServed',
        `NetworkPolicies are served (${policies.length} in ${namespaces.join(', ')})`,
      );
      const names = new Set(policies.map((p) => `${p.meta.namespace}/${p.meta.name}`));
      const absent = deps.plan.networkPolicies.filter((p) => !names.has(`${p.namespace}/${p.name}`));
      if (absent.length > 0)
        f.add(
          'compatible',
          'missing',
          'declared NetworkPolicies',
          'DeclaredPolicyNotFound',
          `declared polic${absent.length === 1 ? 'y' : 'ies'} not found: ${absent.map((p) => `${p.namespace}/${p.name}`).join(', ')}`,
        );
      else
        f.proven(
          'compatible',
          'declared NetworkPolicies',
          'DeclaredPoliciesFound',
          `all ${deps.plan.networkPolicies.length} declared policies exist`,
        );
      const declared = declaredPolicies(deps.plan);
      let examined = 0;
      const routed: PodView[] = [];
      for (const ns of namespaces) {
        const pods = await read.pods(ns, 'agents.x-k8s.io/sandbox-name-hash');
        if (pods.kind !== 'ok') return f.failedCall('configured', `pods in ${ns}`, pods).list;
        for (const pod of pods.value) {
          if (pod.phase !== 'Running') continue;
          // Bare probe Sandboxes of this verifier carry no template labels; they say nothing about template coverage.
          if (pod.meta.labels[RUN_LABEL]) continue;
          examined += 1;
          routed.push(pod);
          const c = podCoverage(pod, policies, declared);
          for (const p of c.problems)
            f.add('configured', 'missing', `pod ${ns}/${pod.meta.name}`, 'PolicyCoverageGap', p.message, {
              field: p.field,
              value: p.value,
            });
          if (c.problems.length === 0)
            f.proven(
              'configured',
              `pod ${ns}/${pod.meta.name}`,
              'PodCovered',
              `selected by ${c.selectedBy.join(', ')}; no undeclared egress`,
            );
        }
      }
      if (examined === 0)
        f.add(
          'configured',
          'unknown',
          'sandbox pods',
          'NoPodToJudge',
          'no running sandbox pod made from a template to judge policy coverage by its real labels',
        );
      await enforcementEvidence(deps, f, policies, sandboxes.ready(), ctx, { makePeer: freshPeer(deps), routed });
      // DNS needs one sandbox, not the enforcement test's peers: a template alone gets its DNS check too.
      await dnsEvidence(deps, f, sandboxes.ready(), ctx.signal);
      return f.list;
    },
  };
}
