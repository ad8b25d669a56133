/**
 * The DNS part of `network-isolation`'s `verified` step (case netpol-dns-nodelocal): for each template whose declared
 * policy admits DNS (construct `dns`), from inside its probe sandbox (one sandbox is enough), through the runtime API:
 * the nameserver the pod really uses (`/etc/resolv.conf`), a lookup of `kubernetes.default.svc` that must answer within
 * 2 s, and a TCP dial of another port on that nameserver that must not connect (the policy admits port 53 there, not the
 * address). A failure names the nameserver, the targets the policy admits, and the policy that should have admitted it.
 */
import type { Verdict } from '../evidence.js';
import type { NetworkPolicyPlan } from '../plan.js';
import type { EvidenceReason } from '../reasons.js';
import type { Facts, ProbeDeps } from './common.js';
import { dialOutcome, type DialOutcome } from './network-enforcement.js';
import type { ReadyProbeSandbox } from './workload/handoff.js';

/** Seconds a lookup may take (the case's bound: tools inside a sandbox give up on DNS in about that time). */
export const DNS_LOOKUP_SECONDS = 2;
/** The other port dialled on the nameserver: not 53, not a port a DNS server is expected to serve. */
export const DNS_OTHER_PORT = 5354;
/** Exit code of the probe script when a tool is missing. */
const NO_TOOL = 97;

const RESOLV = 'cat /etc/resolv.conf 2>&1';
const LOOKUP = `command -v nslookup >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1 || { echo "no nslookup/timeout"; exit ${NO_TOOL}; }
timeout "$1" nslookup kubernetes.default.svc "$2" 2>&1`;
const DIAL = `command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1 || { echo "no bash/timeout"; exit ${NO_TOOL}; }
timeout "$3" bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>&1`;

/** The first `nameserver` of a resolv.conf (pure), or undefined. */
export function nameserverOf(resolvConf: string): string | undefined {
  for (const line of resolvConf.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/** Which declared DNS target an address is, by role (pure); pods are not addresses, so a pod IP matches none. */
export function targetRole(dns: NonNullable<NetworkPolicyPlan['dns']>, address: string): string | undefined {
  if (dns.nodeLocalCache === address) return 'node-local cache';
  if (dns.serviceIP === address) return 'DNS Service IP';
  return undefined;
}

/** The declared targets in words. */
export function targetsText(dns: NonNullable<NetworkPolicyPlan['dns']>): string {
  const pods = dns.pods
    ? `pods ${dns.pods.namespace}/${
        Object.entries(dns.pods.podLabels ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(',') || '*'
      }`
    : undefined;
  return (
    [pods, dns.nodeLocalCache && `${dns.nodeLocalCache}/32`, dns.serviceIP && `${dns.serviceIP}/32`]
      .filter(Boolean)
      .join(', ') || 'nothing'
  );
}

/** What was observed from one sandbox. */
export interface DnsObservation {
  readonly pod: string;
  readonly policy: string;
  readonly dns: NonNullable<NetworkPolicyPlan['dns']>;
  /** The resolv.conf read (exit code -1: the command got no answer). */
  readonly resolv: { readonly exitCode: number; readonly output: string };
  readonly lookup?: { readonly exitCode: number; readonly output: string };
  readonly otherPort?: DialOutcome;
}

/** The judgement of one observation (pure). */
export interface DnsJudgement {
  readonly verdict: Verdict;
  readonly reason: EvidenceReason;
  readonly message: string;
  readonly nameserver?: string;
}

function last(output: string): string {
  return (output.trim().split('\n').slice(-1)[0] ?? '').slice(0, 120);
}

/**
 * Judges one sandbox's DNS (pure). No resolv.conf or nameserver, or a missing tool: `unknown` (`DnsNotTestable`). The
 * lookup unanswered within 2 s: `unknown` (`DnsNotAnswered`) when the nameserver is a declared address or may be a
 * CoreDNS pod, `missing` (`DnsNameserverNotAdmitted`) when the policy admits no DNS pods and the nameserver is none of its
 * addresses. Another port on the nameserver connected: `contradicted` (`DnsOtherPortConnected`). Else `proven`
 * (`DnsAnswered`).
 */
export function judgeDns(o: DnsObservation): DnsJudgement {
  const where = `from pod ${o.pod}`;
  const nameserver = o.resolv.exitCode === 0 ? nameserverOf(o.resolv.output) : undefined;
  if (!nameserver)
    return {
      verdict: 'unknown',
      reason: 'DnsNotTestable',
      message:
        o.resolv.exitCode === 0
          ? `/etc/resolv.conf ${where} names no nameserver (the kubelet gave the pod no cluster DNS): nothing to look up against`
          : `/etc/resolv.conf ${where} could not be read (exit ${o.resolv.exitCode}: ${last(o.resolv.output)})`,
    };
  const role = targetRole(o.dns, nameserver);
  const admitted = `policy ${o.policy} admits ${targetsText(o.dns)} on UDP+TCP 53`;
  if (!o.lookup || o.lookup.exitCode === NO_TOOL || o.otherPort === 'no-tool')
    return {
      verdict: 'unknown',
      reason: 'DnsNotTestable',
      message: `no lookup or dial tool ${where} (nameserver ${nameserver}; ${admitted}): ${last(o.lookup?.output ?? '')}`,
      nameserver,
    };
  if (o.otherPort === 'connected')
    return {
      verdict: 'contradicted',
      reason: 'DnsOtherPortConnected',
      message: `${where} TCP ${nameserver}:${DNS_OTHER_PORT} connected: the policies open more of the nameserver than port 53 (${admitted})`,
      nameserver,
    };
  if (o.lookup.exitCode !== 0) {
    const notAdmitted = role === undefined && o.dns.pods === undefined;
    return {
      verdict: notAdmitted ? 'missing' : 'unknown',
      reason: notAdmitted ? 'DnsNameserverNotAdmitted' : 'DnsNotAnswered',
      message: `nslookup kubernetes.default.svc ${where} via nameserver ${nameserver} got no answer within ${DNS_LOOKUP_SECONDS} s (exit ${o.lookup.exitCode}: ${last(o.lookup.output)}); ${
        role
          ? `${nameserver} is the ${role} that ${admitted}`
          : notAdmitted
            ? `${nameserver} is none of the targets: ${admitted}`
            : `${admitted}; ${nameserver} must be one of those pods (or a host-network cache: add it as nodeLocalCache or serviceIP)`
      }`,
      nameserver,
    };
  }
  return {
    verdict: 'proven',
    reason: 'DnsAnswered',
    message: `nslookup kubernetes.default.svc ${where} answered via nameserver ${nameserver}${role ? ` (${role})` : ''} within ${DNS_LOOKUP_SECONDS} s, and TCP ${nameserver}:${DNS_OTHER_PORT} was ${o.otherPort ?? 'not dialled'}; ${admitted}`,
    nameserver,
  };
}

/**
 * For every template whose declared policy admits DNS and whose probe sandbox answered: reads, looks up and dials from
 * inside it, and adds one `verified` fact per sandbox to `f`. Never throws.
 */
export async function dnsEvidence(
  deps: ProbeDeps,
  f: Facts,
  ready: readonly ReadyProbeSandbox[],
  signal: AbortSignal,
): Promise<void> {
  const deadline = Math.max(deps.plan.probeTimeoutMs, DNS_LOOKUP_SECONDS * 1000 + 3000);
  const run = async (s: ReadyProbeSandbox, script: string, args: readonly string[]) => {
    const r = await deps.runtime.execute(s.target, ['sh', '-c', script, 'agentplane', ...args], deadline);
    return r.kind === 'answered'
      ? { exitCode: r.value.exitCode, output: `${r.value.stdout}${r.value.stderr}` }
      : { exitCode: -1, output: r.detail };
  };
  for (const policy of deps.plan.networkPolicies) {
    if (!policy.dns || signal.aborted) continue;
    const s = ready.find((r) => r.template === policy.template && r.pod.meta.namespace === policy.namespace);
    if (!s) continue;
    const pod = `${s.pod.meta.namespace}/${s.pod.meta.name}`;
    const resolv = await run(s, RESOLV, []);
    const nameserver = resolv.exitCode === 0 ? nameserverOf(resolv.output) : undefined;
    let lookup: DnsObservation['lookup'];
    let otherPort: DialOutcome | undefined;
    if (nameserver) {
      lookup = await run(s, LOOKUP, [String(DNS_LOOKUP_SECONDS), nameserver]);
      const d = await run(s, DIAL, [nameserver, String(DNS_OTHER_PORT), String(DNS_LOOKUP_SECONDS)]);
      otherPort = d.exitCode === -1 ? 'unclear' : dialOutcome(d.exitCode, d.output);
    }
    const o: DnsObservation = {
      pod,
      policy: `${policy.namespace}/${policy.name}`,
      dns: policy.dns,
      resolv,
      ...(lookup ? { lookup } : {}),
      ...(otherPort ? { otherPort } : {}),
    };
    const j = judgeDns(o);
    f.add('verified', j.verdict, `pod ${pod}`, j.reason, j.message, {
      field: 'nslookup kubernetes.default.svc',
      value: j.nameserver ?? 'no nameserver',
      objects: [o.policy],
      observed: { lookupExit: lookup?.exitCode ?? -1, otherPortConnected: otherPort === 'connected' ? 1 : 0 },
      ...(j.verdict === 'unknown'
        ? { missingTest: 'netpol-dns-nodelocal: a lookup from inside a sandbox through the declared DNS targets' }
        : {}),
    });
  }
}
