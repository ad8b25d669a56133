/**
 * The `verified` step of `network-isolation`: enforcement observed, not read. Design (issue 10): the verifier may not
 * exec into pods or create pods of its own, so every dial runs inside two probe sandboxes the workload probes made and
 * whose runtime answered every nonce over the client's transport (that answer is the admitted client path), as a
 * command through the runtime API (no shell of the verifier's; busybox `nc` listens, bash `/dev/tcp` dials under
 * `timeout`). Destination B gets a listener of the verifier's on a random probe port (sandboxd v0.5.6 binds its runtime ports to
 * 127.0.0.1 only, so nothing of it can be dialled on the pod IP; a v1.0.x sandboxd holds them on every address; either
 * way a listener cannot share its port); the policies'
 * prediction for that port is computed from the live policies (network-expect.ts) and must be `deny` for source A. Each
 * of `sampleSize(plan)` rounds: B dials its own pod IP (the control: the port listens on the pod IP; a dial that never
 * leaves the pod, so no policy applies), then A dials B (must be refused or time out), then A dials the `kubernetes`
 * Service its environment names (undeclared egress, when the policies deny it: a connection fails the capability, a
 * refusal is not counted since nothing proves that address answers from the pod network). Declared DNS egress is
 * tested on its own (network-dns.ts). `verified` only when every round's control answered and every denied
 * dial was refused; a denied dial that connects is `contradicted` (the capability fails) naming source, destination and
 * the policies expected to deny. Not testable (unknown, nothing dialled): fewer than two such sandboxes, loopback pod
 * IPs (kwok pods: their runtimes are stand-ins on the host, so no packet meets a policy engine), a shared pod IP, a
 * missing tool, or policies that admit A to B. The engine that enforces stays unnamed: the tuple's `cni` is not guessed.
 */
import type { NetworkPolicyView } from '../../adapter/kubernetes/views.js';
import type { Verdict } from '../evidence.js';
import { sampleSize } from '../plan.js';
import type { EvidenceReason } from '../reasons.js';
import type { ProbeRun } from '../runner.js';
import type { Facts, ProbeDeps } from './common.js';
import { expectConnection, type Expectation } from './network-expect.js';
import { isLoopback } from './router-canary.js';
import type { ReadyProbeSandbox } from './workload/handoff.js';

/** How one dial ended, as the dialling command reported it. */
export type DialOutcome = 'connected' | 'refused' | 'timeout' | 'unreachable' | 'unclear' | 'no-tool';

/** Exit code of a probe script that found a tool missing. */
const NO_TOOL = 97;
/** Seconds a dial may wait for its connection (a dropped SYN would otherwise wait for minutes). */
const DIAL_SECONDS = 2;

/** One dial: what was dialled from where, what the policies predict for it, and how it ended. */
export interface Dial {
  readonly kind: 'control' | 'peer' | 'egress';
  readonly round: number;
  readonly from: string;
  readonly to: string;
  readonly expected: Expectation['verdict'];
  readonly policies: readonly string[];
  readonly outcome: DialOutcome;
}

/** The outcome of one dial command (pure): exit 0 = connected; a refusal, a route error or `timeout`'s kill otherwise. */
export function dialOutcome(exitCode: number, output: string): DialOutcome {
  if (exitCode === NO_TOOL) return 'no-tool';
  if (exitCode === 0) return 'connected';
  if (exitCode === 124 || exitCode === 143 || /timed out/i.test(output)) return 'timeout';
  if (/refused/i.test(output)) return 'refused';
  if (/no route|unreachable/i.test(output)) return 'unreachable';
  return 'unclear';
}

const BLOCKED: readonly DialOutcome[] = ['refused', 'timeout', 'unreachable'];

/** What the dials show (pure). */
export interface Judgement {
  readonly verdict: Verdict;
  readonly reason: EvidenceReason;
  readonly message: string;
  /** The dial the judgement rests on, when one decides it. */
  readonly dial?: Dial;
}

function describe(d: Dial): string {
  return `${d.from} -> ${d.to} (round ${d.round}): ${d.outcome}`;
}

/**
 * Judges the dials of one enforcement test (pure). A dial the policies deny that connected is `contradicted`
 * (`DeniedPeerConnected` / `UndeclaredEgressConnected`); a missing tool is `unknown` (`EnforcementNotTestable`); a round
 * whose control did not connect or whose peer dial ended unclearly is `unknown` (`EnforcementUnclear`); `samples`
 * rounds each with the control connected and the denied peer blocked is `proven` (`EnforcementObserved`).
 */
export function judgeEnforcement(dials: readonly Dial[], samples: number): Judgement {
  const leak = dials.find((d) => d.kind !== 'control' && d.expected === 'deny' && d.outcome === 'connected');
  if (leak)
    return {
      verdict: 'contradicted',
      reason: leak.kind === 'peer' ? 'DeniedPeerConnected' : 'UndeclaredEgressConnected',
      message: `${leak.from} connected to ${leak.to} although ${leak.policies.join(', ')} should deny it (round ${leak.round})`,
      dial: leak,
    };
  const noTool = dials.find((d) => d.outcome === 'no-tool');
  if (noTool)
    return {
      verdict: 'unknown',
      reason: 'EnforcementNotTestable',
      message: `no dial tool (bash and timeout) in ${noTool.from}`,
      dial: noTool,
    };
  let rounds = 0;
  for (let r = 1; r <= samples; r += 1) {
    const control = dials.find((d) => d.kind === 'control' && d.round === r);
    const peer = dials.find((d) => d.kind === 'peer' && d.round === r);
    if (!control || control.outcome !== 'connected')
      return {
        verdict: 'unknown',
        reason: 'EnforcementUnclear',
        message: control
          ? `the listening control did not connect, so a refusal would not count: ${describe(control)}`
          : `round ${r} of ${samples} was not run`,
        ...(control ? { dial: control } : {}),
      };
    if (!peer || peer.expected !== 'deny' || !BLOCKED.includes(peer.outcome))
      return {
        verdict: 'unknown',
        reason: 'EnforcementUnclear',
        message: peer ? `the denied dial gave no clear refusal: ${describe(peer)}` : `round ${r} had no peer dial`,
        ...(peer ? { dial: peer } : {}),
      };
    rounds += 1;
  }
  const peer = dials.find((d) => d.kind === 'peer')!;
  const outcomes = [...new Set(dials.filter((d) => d.kind === 'peer').map((d) => d.outcome))].join('/');
  return {
    verdict: 'proven',
    reason: 'EnforcementObserved',
    message: `${peer.from} could not connect to ${peer.to} (${outcomes}) in ${rounds} of ${samples} rounds while the port answered from its own pod; denied by ${peer.policies.join(', ')}`,
    dial: peer,
  };
}

/** The dials' counts by outcome, for `observed`. */
function counts(dials: readonly Dial[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of dials) out[`${d.kind}-${d.outcome}`] = (out[`${d.kind}-${d.outcome}`] ?? 0) + 1;
  return out;
}

const LISTEN = `command -v nc >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1 || { echo "no nc/timeout"; exit ${NO_TOOL}; }
(timeout "$1" nc -ll -p "$2" -e /bin/echo agentplane-listener </dev/null >/dev/null 2>&1 &)
echo agentplane-listening`;
const DIAL = `command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1 || { echo "no bash/timeout"; exit ${NO_TOOL}; }
timeout "$3" bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>&1`;
const K8S_ENV = 'echo "$KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT"';

function podName(s: ReadyProbeSandbox): string {
  return `${s.pod.meta.namespace}/${s.pod.meta.name}`;
}

/** Why no test can be made: what was looked at (`field`), what was seen (`value`), in words (`why`). */
interface Untestable {
  readonly field: string;
  readonly value: string;
  readonly why: string;
}

/** Two probe sandboxes on a pod network (distinct, non-loopback IPs), or why there are none. */
function pickPair(ready: readonly ReadyProbeSandbox[]): { a: ReadyProbeSandbox; b: ReadyProbeSandbox } | Untestable {
  if (ready.length < 2)
    return {
      field: 'probe sandboxes',
      value: String(ready.length),
      why: `${ready.length} probe sandbox(es) with runtime-exec proven; the test needs two, one the policies deny as a peer of the other`,
    };
  const loop = ready.find((s) => !s.pod.ip || isLoopback(s.pod.ip));
  if (loop)
    return {
      field: 'pod IP',
      value: loop.pod.ip ?? 'none',
      why: `pod ${podName(loop)} has ${loop.pod.ip ? `a loopback pod IP ${loop.pod.ip}` : 'no pod IP'}: its packets never meet a NetworkPolicy engine`,
    };
  const b = ready[0]!;
  const a = ready.find((s) => s.pod.ip !== b.pod.ip);
  if (!a)
    return {
      field: 'pod IP',
      value: b.pod.ip!,
      why: `every probe sandbox shares pod IP ${b.pod.ip} (host network): no pod-to-pod path to test`,
    };
  return { a, b };
}

/**
 * Runs the enforcement test and adds its `verified` evidence (one fact) to `f`. Never throws.
 */
export async function enforcementEvidence(
  deps: ProbeDeps,
  f: Facts,
  policies: readonly NetworkPolicyView[],
  ready: readonly ReadyProbeSandbox[],
  ctx: Pick<ProbeRun, 'signal' | 'note'>,
): Promise<void> {
  const subject = 'NetworkPolicy enforcement';
  const notTestable = ({ field, value, why }: Untestable): void => {
    f.add('verified', 'unknown', subject, 'EnforcementNotTestable', `enforcement not tested: ${why}`, {
      field,
      value,
      missingTest: 'netpol-enforcement: a sandbox the policies deny cannot connect to another that listens',
    });
  };
  const pair = pickPair(ready);
  if (!('a' in pair)) return notTestable(pair);
  const { a, b } = pair;
  const aEnd = { ip: a.pod.ip!, namespace: a.pod.meta.namespace, labels: a.pod.meta.labels };
  const bEnd = { ip: b.pod.ip!, namespace: b.pod.meta.namespace, labels: b.pod.meta.labels };
  const port = 20000 + Math.floor(Math.random() * 10000);
  const peerExp = expectConnection(aEnd, bEnd, port, policies);
  if (peerExp.verdict !== 'deny')
    return notTestable({
      field: 'policy prediction',
      value: peerExp.verdict,
      why: `the policies ${peerExp.verdict === 'allow' ? 'admit' : 'do not clearly deny'} ${podName(a)} -> ${bEnd.ip}:${port}`,
    });
  const samples = sampleSize(deps.plan);
  const deadline = Math.max(deps.plan.probeTimeoutMs, DIAL_SECONDS * 1000 + 3000);
  const run = async (s: ReadyProbeSandbox, script: string, args: readonly string[]) => {
    const r = await deps.runtime.execute(s.target, ['sh', '-c', script, 'agentplane', ...args], deadline);
    return r.kind === 'answered'
      ? { exitCode: r.value.exitCode, output: `${r.value.stdout}${r.value.stderr}` }
      : { exitCode: -1, output: r.detail };
  };
  const listenSeconds = Math.ceil((samples * 3 * deadline + 10_000) / 1000);
  const listening = await run(b, LISTEN, [String(listenSeconds), String(port)]);
  if (listening.exitCode !== 0 || !listening.output.includes('agentplane-listening'))
    return notTestable({
      field: 'listener',
      value: `exit ${listening.exitCode}`,
      why: `no listener could be started in ${podName(b)} (exit ${listening.exitCode}: ${listening.output.trim().slice(0, 80)})`,
    });
  ctx.note(`dialling ${bEnd.ip}:${port} from ${podName(a)} (denied) and ${podName(b)} (control), ${samples} rounds`);
  const env = (await run(a, K8S_ENV, [])).output.trim().split(/\s+/);
  const [apiHost, apiPort] = [env[0] ?? '', Number(env[1])];
  const egressExp =
    apiHost && Number.isInteger(apiPort) && apiPort > 0
      ? expectConnection(aEnd, { ip: apiHost }, apiPort, policies)
      : undefined;
  const dials: Dial[] = [];
  const dial = async (
    kind: Dial['kind'],
    round: number,
    from: ReadyProbeSandbox,
    host: string,
    p: number,
    exp: Expectation,
  ) => {
    const r = await run(from, DIAL, [host, String(p), String(DIAL_SECONDS)]);
    const d: Dial = {
      kind,
      round,
      from: podName(from),
      to: `${host}:${p}`,
      expected: exp.verdict,
      policies: exp.policies,
      outcome: dialOutcome(r.exitCode, r.output),
    };
    dials.push(d);
    return d;
  };
  const self = { verdict: 'allow' as const, policies: [] };
  for (let round = 1; round <= samples && !ctx.signal.aborted; round += 1) {
    let control = await dial('control', round, b, bEnd.ip, port, self);
    // The listener may take a moment to bind after its start returned.
    for (let retry = 0; round === 1 && control.outcome === 'refused' && retry < 5; retry += 1) {
      dials.pop();
      await new Promise((resolve) => setTimeout(resolve, 300));
      control = await dial('control', round, b, bEnd.ip, port, self);
    }
    const peer = await dial('peer', round, a, bEnd.ip, port, peerExp);
    if (peer.outcome === 'connected' || control.outcome !== 'connected') break;
    if (egressExp?.verdict === 'deny') {
      const out = await dial('egress', round, a, apiHost, apiPort, egressExp);
      if (out.outcome === 'connected') break;
    }
  }
  const j = judgeEnforcement(dials, samples);
  const egress = dials.filter((d) => d.kind === 'egress');
  const egressNote =
    egress.length > 0 && j.verdict === 'proven'
      ? `; undeclared egress to ${egress[0]!.to} was ${[...new Set(egress.map((d) => d.outcome))].join('/')} too (not counted: nothing shows that address answers from the pod network)`
      : '';
  f.add('verified', j.verdict, j.dial ? `pod ${j.dial.from}` : subject, j.reason, `${j.message}${egressNote}`, {
    field: j.dial ? `dial ${j.dial.to}` : 'dial',
    value: j.dial ? `${j.dial.kind} ${j.dial.outcome}` : '',
    observed: { rounds: samples, ...counts(dials) },
    ...(j.dial && j.dial.policies.length > 0 ? { objects: [...j.dial.policies] } : {}),
    ...(j.verdict === 'unknown'
      ? { missingTest: 'netpol-enforcement: a sandbox the policies deny cannot connect to another that listens' }
      : {}),
  });
}
