/**
 * The `verified` step of `network-isolation`: enforcement observed, not read (case netpol-enforcement-probe). The
 * verifier may not exec into pods, so every dial runs inside sandboxes of its own whose runtime answers (the client's
 * transport), as a command through the runtime API (busybox `nc` listens, bash `/dev/tcp` dials under `timeout`):
 * the probe sandboxes the workload probes made, plus two FRESH peers of the first one's template started for this
 * test (network-peer.ts), so one template is enough, and two pods the policy engine has only just seen are among the
 * members (between two fresh pods no older pod's rules can stand in for missing new ones: a crashed agent is caught
 * even when the first probe sandbox is a pool member programmed long ago). Every member listens on one random probe port (sandboxd v0.5.6 binds its runtime ports to 127.0.0.1 only,
 * so nothing of it answers on the pod IP; a listener cannot share a port). The policies' prediction for each ordered
 * pair of members (network-expect.ts) decides the dial: `deny` must be refused or time out, `allow` must connect.
 * Each of `sampleSize(plan)` rounds, spread over at least ten seconds: every member dials its own pod IP (the
 * control: a dial that never leaves the pod, so no policy applies), every predicted pair is dialled, and the first
 * member dials the `kubernetes` Service (undeclared egress when the policies deny it: a connection fails the
 * capability, a refusal is not counted). Right after the fresh peers are Ready the first opens one connection the
 * policies deny (to the second, when denied) and holds it; after the rounds the verifier asks whether it still answers (established flows that outlive
 * enforcement, cloudnativelabs/kube-router#873). The evidence carries the enforcement latency (a fresh pod's start ->
 * its first denied attempt that was blocked). A denied dial that connects is `contradicted` `PolicyNotEnforced` ("present but not
 * enforced") naming source, destination, policies and the CNI DaemonSets seen; a held connection that survives is
 * `contradicted` `EarlyConnectionSurvived`. Not testable (unknown): no probe sandbox, loopback pod IPs (kwok pods:
 * their runtimes are stand-ins on the host), a shared pod IP, no fresh peer, a missing tool, or policies that deny no
 * pair with a fresh peer. Declared DNS egress is tested on its own (network-dns.ts).
 */
import type { NetworkPolicyView, PodView } from '../../adapter/kubernetes/views.js';
import type { Verdict } from '../evidence.js';
import { sampleSize } from '../plan.js';
import type { EvidenceReason } from '../reasons.js';
import type { ProbeRun } from '../runner.js';
import { reads, type Facts, type ProbeDeps } from './common.js';
import { expectConnection, type Endpoint, type Expectation } from './network-expect.js';
import type { PeerMaker } from './network-peer.js';
import { isLoopback } from './router-canary.js';
import type { ReadyProbeSandbox } from './workload/handoff.js';

/** How one dial ended, as the dialling command reported it. */
export type DialOutcome = 'connected' | 'refused' | 'timeout' | 'unreachable' | 'unclear' | 'no-tool';

/** Exit code of a probe script that found a tool missing. */
const NO_TOOL = 97;
/** Seconds a dial may wait for its connection (a dropped SYN would otherwise wait for minutes). */
const DIAL_SECONDS = 2;
/** The rounds span at least this long (the case asks for denials repeated over ≥ 10 s). */
const MIN_SPAN_MS = 10_000;

/** One dial: what was dialled from where, what the policies predict for it, and how it ended. */
export interface Dial {
  /**
   * `control`: a member's own pod IP; `peer`: a pair the policies deny; `allowed`: one they admit; `egress`: the API
   * Service; `routed`: an environment pod clients are routed to (pool member, claimed sandbox), on a port it declares.
   */
  readonly kind: 'control' | 'peer' | 'allowed' | 'egress' | 'routed';
  readonly round: number;
  readonly from: string;
  readonly to: string;
  readonly expected: Expectation['verdict'];
  readonly policies: readonly string[];
  readonly outcome: DialOutcome;
  /** Milliseconds since the later-started fresh peer at either end started, when one is. */
  readonly sinceFreshStartMs?: number;
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

/** Why a round is not a clean observation (pure), or undefined when it is: every control connected, every denied dial blocked, every admitted one connected. */
function roundFault(
  dials: readonly Dial[],
  r: number,
  samples: number,
): { message: string; dial?: Dial; window?: true } | undefined {
  const of = (kind: Dial['kind']) => dials.filter((d) => d.kind === kind && d.round === r);
  const controls = of('control');
  if (controls.length === 0) return { message: `round ${r} of ${samples} was not run` };
  const badControl = controls.find((d) => d.outcome !== 'connected');
  if (badControl)
    return {
      message: `the listening control did not connect, so a refusal would not count: ${describe(badControl)}`,
      dial: badControl,
    };
  const peers = of('peer');
  if (peers.length === 0) return { message: `round ${r} had no denied dial` };
  const early = peers.find((d) => d.outcome === 'connected');
  if (early) return { message: `a fresh peer was not constrained yet: ${describe(early)}`, dial: early, window: true };
  const vague = peers.find((d) => !BLOCKED.includes(d.outcome));
  if (vague) return { message: `the denied dial gave no clear refusal: ${describe(vague)}`, dial: vague };
  const shut = of('allowed').find((d) => d.outcome !== 'connected');
  if (shut)
    return {
      message: `${shut.policies.join(', ')} admit this dial but it did not connect: ${describe(shut)}`,
      dial: shut,
    };
  return undefined;
}

/** The rounds that are clean observations (pure). */
export function cleanRounds(dials: readonly Dial[]): number[] {
  const rounds = [...new Set(dials.map((d) => d.round))];
  return rounds.filter((r) => roundFault(dials, r, rounds.length) === undefined);
}

/**
 * A denied dial that connected and is no pre-enforcement window (pure): it came after the same pair was blocked, its
 * pair was never blocked, or neither end is a fresh peer (an older pod's rules are long programmed). The window: a pair
 * with a fresh end may connect in its first dials, until its rules are programmed (kube-router's allow-until-programmed),
 * which the enforcement latency reports.
 */
function leakOf(dials: readonly Dial[], final: boolean): Dial | undefined {
  const egress = dials.find((d) => (d.kind === 'egress' || d.kind === 'routed') && d.outcome === 'connected');
  const byPair = new Map<string, Dial[]>();
  for (const d of dials.filter((x) => x.kind === 'peer'))
    byPair.set(`${d.from} -> ${d.to}`, [...(byPair.get(`${d.from} -> ${d.to}`) ?? []), d]);
  for (const seq of byPair.values()) {
    const firstBlocked = seq.findIndex((d) => BLOCKED.includes(d.outcome));
    const leak = seq.find(
      (d, i) =>
        d.outcome === 'connected' &&
        ((final && firstBlocked < 0) || (firstBlocked >= 0 && i > firstBlocked) || d.sinceFreshStartMs === undefined),
    );
    if (leak) return leak;
  }
  return egress;
}

/**
 * Judges the dials of one enforcement test (pure). A denied dial that connected outside the pre-enforcement window is
 * `contradicted` (`PolicyNotEnforced` for a peer or routed pod: present but not enforced; `UndeclaredEgressConnected`
 * for egress); a
 * missing tool is `unknown` (`EnforcementNotTestable`); fewer than `samples` clean rounds (see roundFault) are `unknown`
 * (`EnforcementUnclear`); otherwise `proven` (`EnforcementObserved`). Not `final` (rounds still to come): a pair not
 * blocked yet is no leak yet.
 */
export function judgeEnforcement(dials: readonly Dial[], samples: number, final = true): Judgement {
  const leak = leakOf(dials, final);
  if (leak)
    return {
      verdict: 'contradicted',
      reason: leak.kind === 'egress' ? 'UndeclaredEgressConnected' : 'PolicyNotEnforced',
      message: `${leak.kind === 'egress' ? '' : 'policy present but not enforced: '}${leak.from} connected to ${leak.to} although ${leak.policies.join(', ')} should deny it (round ${leak.round}${leak.sinceFreshStartMs !== undefined ? `, ${leak.sinceFreshStartMs} ms after a fresh peer started` : ''})`,
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
  const clean = cleanRounds(dials);
  if (clean.length < samples) {
    const rounds = Math.max(samples, ...dials.map((d) => d.round));
    let fault: { message: string; dial?: Dial } = { message: `round ${clean.length + 1} of ${samples} was not run` };
    for (let r = 1; r <= rounds; r += 1) {
      const f = roundFault(dials, r, samples);
      if (f && !f.window) {
        fault = f;
        break;
      }
    }
    return {
      verdict: 'unknown',
      reason: 'EnforcementUnclear',
      message: `${clean.length} of ${samples} rounds were clean: ${fault.message}`,
      ...(fault.dial ? { dial: fault.dial } : {}),
    };
  }
  const peers = dials.filter((d) => d.kind === 'peer' && clean.includes(d.round));
  const pairs = new Set(peers.map((d) => `${d.from} -> ${d.to}`));
  const outcomes = [...new Set(peers.map((d) => d.outcome))].join('/');
  const policies = [...new Set(peers.flatMap((d) => d.policies))];
  const allowed = dials.filter((d) => d.kind === 'allowed').length;
  return {
    verdict: 'proven',
    reason: 'EnforcementObserved',
    message: `${pairs.size} denied pair(s) (${[...pairs].join('; ')}) could not connect (${outcomes}) in ${clean.length} clean rounds while every port answered from its own pod${allowed > 0 ? `, and ${allowed} admitted dial(s) connected` : ''}; denied by ${policies.join(', ')}`,
    dial: peers[0]!,
  };
}

/** The dials' counts by outcome, for `observed`. */
function counts(dials: readonly Dial[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of dials) out[`${d.kind}-${d.outcome}`] = (out[`${d.kind}-${d.outcome}`] ?? 0) + 1;
  return out;
}

/**
 * Enforcement latency (pure): milliseconds from a fresh peer's pod start to its first denied dial that was blocked,
 * and to its first dial at all (the earliest the verifier could look: the runtime answers only once the pod is Ready).
 */
export function enforcementLatency(dials: readonly Dial[]): { firstAttemptMs?: number; latencyMs?: number } {
  const timed = dials.filter((d) => d.kind === 'peer' && d.sinceFreshStartMs !== undefined);
  const first = timed[0]?.sinceFreshStartMs;
  const blocked = timed.find((d) => BLOCKED.includes(d.outcome))?.sinceFreshStartMs;
  return {
    ...(first !== undefined ? { firstAttemptMs: first } : {}),
    ...(blocked !== undefined ? { latencyMs: blocked } : {}),
  };
}

/** What became of the connection the first fresh peer opened at once: never opened, cut by enforcement, or still answering. */
export type EarlyConnection = 'blocked' | 'cut' | 'survived' | 'unclear';

/** The held connection's state file, as the check read it (pure). */
export function earlyConnection(report: string): EarlyConnection {
  const lines = report.trim().split('\n');
  if (lines[0] !== 'open') return report.trim() === '' || lines[0] === 'blocked' ? 'blocked' : 'unclear';
  if (lines[1]?.startsWith('survived agentplane-ping')) return 'survived';
  return lines[1] === 'cut' ? 'cut' : 'unclear';
}

const LISTEN = `command -v nc >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1 || { echo "no nc/timeout"; exit ${NO_TOOL}; }
(timeout "$1" nc -ll -p "$2" -e /bin/echo agentplane-listener </dev/null >/dev/null 2>&1 &)
(timeout "$1" nc -ll -p "$3" -e /bin/cat </dev/null >/dev/null 2>&1 &)
echo agentplane-listening`;
const DIAL = `command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1 || { echo "no bash/timeout"; exit ${NO_TOOL}; }
timeout "$3" bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>&1`;
/** Opens a connection to an echo listener and holds it until `$4.check` appears, then says whether it still answers. */
const HOLD = `command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1 || { echo "no bash/timeout"; exit ${NO_TOOL}; }
rm -f "$4" "$4.check"
(timeout "$3" bash -c 'exec 3<>"/dev/tcp/$0/$1" || { echo blocked >"$2"; exit 0; }; echo open >"$2"; while [ ! -e "$2.check" ]; do sleep 0.2; done; echo agentplane-ping >&3; if read -r -t 2 line <&3; then echo "survived $line" >>"$2"; else echo cut >>"$2"; fi' "$1" "$2" "$4" </dev/null >/dev/null 2>&1 &)
echo agentplane-holding`;
const HOLD_CHECK = `touch "$1.check"; i=0; while [ $i -lt 30 ] && [ -e "$1" ] && ! grep -q -e survived -e cut "$1"; do sleep 0.1; i=$((i+1)); done; cat "$1" 2>/dev/null; true`;
const HOLD_FILE = '/tmp/agentplane-early-connection';
const K8S_ENV = 'echo "$KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT"';

function podName(s: ReadyProbeSandbox): string {
  return `${s.pod.meta.namespace}/${s.pod.meta.name}`;
}

function endpoint(s: ReadyProbeSandbox): Endpoint {
  return { ip: s.pod.ip!, namespace: s.pod.meta.namespace, labels: s.pod.meta.labels };
}

/** Why no test can be made: what was looked at (`field`), what was seen (`value`), in words (`why`). */
interface Untestable {
  readonly field: string;
  readonly value: string;
  readonly why: string;
}

/** A member without a pod-network IP (none, loopback), or two sharing one: no packet of theirs meets a policy engine. */
function offNetwork(members: readonly ReadyProbeSandbox[]): Untestable | undefined {
  if (members.length === 0)
    return { field: 'probe sandboxes', value: '0', why: 'no probe sandbox whose runtime answered to dial from' };
  const loop = members.find((s) => !s.pod.ip || isLoopback(s.pod.ip));
  if (loop)
    return {
      field: 'pod IP',
      value: loop.pod.ip ?? 'none',
      why: `pod ${podName(loop)} has ${loop.pod.ip ? `a loopback pod IP ${loop.pod.ip}` : 'no pod IP'}: its packets never meet a NetworkPolicy engine`,
    };
  const ips = members.map((s) => s.pod.ip);
  const shared = ips.find((ip, i) => ips.indexOf(ip) !== i);
  if (shared)
    return {
      field: 'pod IP',
      value: shared,
      why: `probe sandboxes share pod IP ${shared} (host network): no pod-to-pod path to test`,
    };
  return undefined;
}

/** The CNI DaemonSets in kube-system, in words, for a "present but not enforced" finding. Never throws. */
async function cniSeen(deps: ProbeDeps): Promise<string> {
  try {
    const ds = await reads(deps).daemonSets('kube-system');
    if (ds.kind !== 'ok') return `DaemonSets in kube-system not readable (${ds.kind})`;
    return ds.value.length > 0
      ? `DaemonSets in kube-system: ${ds.value.map((d) => d.name).join(', ')}`
      : 'no DaemonSet in kube-system (the policy agent, if any, runs outside the cluster)';
  } catch (e) {
    return `DaemonSets in kube-system not readable (${e instanceof Error ? e.message : String(e)})`;
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Runs the enforcement test and adds its `verified` evidence (one fact, and one more for a surviving early
 * connection) to `f`. `opts.makePeer` starts the fresh peers; `opts.routed` are the environment's running
 * sandbox pods (dialled from a fresh peer on their declared ports in the first and last round: detection only, since
 * no listener of the verifier's proves a refusal there); the rounds span at least `opts.minSpanMs`. Never throws.
 */
export async function enforcementEvidence(
  deps: ProbeDeps,
  f: Facts,
  policies: readonly NetworkPolicyView[],
  ready: readonly ReadyProbeSandbox[],
  ctx: ProbeRun,
  opts: { readonly makePeer: PeerMaker; readonly routed: readonly PodView[]; readonly minSpanMs?: number },
): Promise<void> {
  const { makePeer, routed, minSpanMs = MIN_SPAN_MS } = opts;
  const subject = 'NetworkPolicy enforcement';
  const missingTest = 'netpol-enforcement-probe: a fresh sandbox and its peers the policies deny cannot connect';
  const notTestable = ({ field, value, why }: Untestable): void => {
    f.add('verified', 'unknown', subject, 'EnforcementNotTestable', `enforcement not tested: ${why}`, {
      field,
      value,
      missingTest,
    });
  };
  const early = offNetwork(ready);
  if (early) return notTestable(early);
  const first = ready[0]!;
  const template = deps.plan.templates.find(
    (t) => t.namespace === first.pod.meta.namespace && t.name === first.template,
  );
  if (!template)
    return notTestable({ field: 'template', value: first.template, why: `template ${first.template} is not planned` });
  const samples = sampleSize(deps.plan);
  const deadline = Math.max(deps.plan.probeTimeoutMs, DIAL_SECONDS * 1000 + 3000);
  const run = async (s: ReadyProbeSandbox, script: string, args: readonly string[]) => {
    const r = await deps.runtime.execute(s.target, ['sh', '-c', script, 'agentplane', ...args], deadline);
    return r.kind === 'answered'
      ? { exitCode: r.value.exitCode, output: `${r.value.stdout}${r.value.stderr}` }
      : { exitCode: -1, output: r.detail };
  };
  const port = 20000 + Math.floor(Math.random() * 10000);
  const echoPort = port + 1;
  const listenSeconds = Math.ceil((deps.plan.readyTimeoutMs + samples * 12 * deadline + MIN_SPAN_MS + 20_000) / 1000);
  const listen = async (s: ReadyProbeSandbox): Promise<Untestable | undefined> => {
    const l = await run(s, LISTEN, [String(listenSeconds), String(port), String(echoPort)]);
    if (l.exitCode === 0 && l.output.includes('agentplane-listening')) return undefined;
    return {
      field: 'listener',
      value: `exit ${l.exitCode}`,
      why: `no listener could be started in ${podName(s)} (exit ${l.exitCode}: ${l.output.trim().slice(0, 80)})`,
    };
  };
  // The existing members listen before the fresh peer starts, so it can be dialled the moment its runtime answers.
  for (const s of ready) {
    const bad = await listen(s);
    if (bad) return notTestable(bad);
  }
  ctx.note(`starting two fresh peers of ${template.namespace}/${template.name} for the enforcement test`);
  const made = await Promise.all([makePeer(template, ctx, 'n'), makePeer(template, ctx, 'm')]);
  for (const m of made) if ('why' in m) return notTestable(m);
  const fresh = made as ReadyProbeSandbox[];
  const startOf = new Map(fresh.map((s) => [s, s.pod.startTime ? Date.parse(s.pod.startTime) : NaN]));
  /** Milliseconds since the later-started fresh end of a dial started, if either end is fresh. */
  const since = (...ends: ReadyProbeSandbox[]): number | undefined => {
    const starts = ends.map((e) => startOf.get(e)).filter((t): t is number => t !== undefined && !Number.isNaN(t));
    return starts.length > 0 ? Math.max(0, Date.now() - Math.max(...starts)) : undefined;
  };
  const members = [...ready, ...fresh];
  const off = offNetwork(members);
  if (off) return notTestable(off);
  const pairs = members.flatMap((x) =>
    members
      .filter((y) => y !== x)
      .map((y) => ({ from: x, to: y, exp: expectConnection(endpoint(x), endpoint(y), port, policies) })),
  );
  const denied = pairs.filter((p) => p.exp.verdict === 'deny');
  const isFresh = (s: ReadyProbeSandbox): boolean => startOf.has(s);
  if (!denied.some((p) => isFresh(p.from) || isFresh(p.to))) {
    const shown = pairs.find((p) => p.from === fresh[0]) ?? pairs[0]!;
    return notTestable({
      field: 'policy prediction',
      value: shown.exp.verdict,
      why: `the policies ${shown.exp.verdict === 'allow' ? 'admit' : 'do not clearly deny'} ${podName(shown.from)} -> ${shown.to.pod.ip}:${port}, and no other pair with a fresh peer`,
    });
  }
  // At once: the first fresh peer opens a connection the policies deny (to an echo listener) and holds it.
  const [holder, second] = [fresh[0]!, fresh[1]!];
  const heldPair = denied.find((p) => p.from === holder && p.to === second) ?? denied.find((p) => p.from === holder);
  const heldTo = heldPair?.to;
  if (heldTo === second) {
    const bad = await listen(second);
    if (bad) return notTestable(bad);
  }
  const holding = heldTo
    ? await run(holder, HOLD, [heldTo.pod.ip!, String(echoPort), String(listenSeconds), HOLD_FILE])
    : undefined;
  const heldAtMs = since(holder);
  for (const s of fresh.filter((x) => !(x === second && heldTo === second))) {
    const bad = await listen(s);
    if (bad) return notTestable(bad);
  }
  ctx.note(
    `dialling ${pairs.length} pair(s) among ${members.length} sandboxes on port ${port} (fresh: ${fresh.map(podName).join(', ')}), ${samples} rounds`,
  );
  const env = (await run(first, K8S_ENV, [])).output.trim().split(/\s+/);
  const [apiHost, apiPort] = [env[0] ?? '', Number(env[1])];
  const egressExp =
    apiHost && Number.isInteger(apiPort) && apiPort > 0
      ? expectConnection(endpoint(first), { ip: apiHost }, apiPort, policies)
      : undefined;
  const dials: Dial[] = [];
  const dial = async (
    kind: Dial['kind'],
    round: number,
    from: ReadyProbeSandbox,
    host: string,
    p: number,
    exp: Expectation,
    ends: ReadyProbeSandbox[],
  ): Promise<Dial> => {
    const at = since(...ends);
    const r = await run(from, DIAL, [host, String(p), String(DIAL_SECONDS)]);
    const d: Dial = {
      kind,
      round,
      from: podName(from),
      to: `${host}:${p}`,
      expected: exp.verdict,
      policies: exp.policies,
      outcome: dialOutcome(r.exitCode, r.output),
      ...(at !== undefined ? { sinceFreshStartMs: at } : {}),
    };
    dials.push(d);
    return d;
  };
  const self = { verdict: 'allow' as const, policies: [] };
  // The environment's own pods clients reach, on every port they declare, where the policies deny the fresh peer.
  const memberIps = new Set(members.map((m) => m.pod.ip));
  const routedDials = routed
    .filter((p) => p.ip && !memberIps.has(p.ip) && !isLoopback(p.ip))
    .flatMap((p) =>
      [...new Set(p.containers.flatMap((c) => c.ports).filter((n) => n > 0))].map((n) => ({
        ip: p.ip!,
        port: n,
        exp: expectConnection(
          endpoint(fresh[0]!),
          { ip: p.ip!, namespace: p.meta.namespace, labels: p.meta.labels },
          n,
          policies,
        ),
      })),
    )
    .filter((r) => r.exp.verdict === 'deny');
  const interval = samples > 1 ? Math.ceil(minSpanMs / (samples - 1)) : 0;
  const began = Date.now();
  // Rounds until `samples` are clean; a fresh peer's first rounds may fall in its pre-enforcement window, so up to
  // twice as many are run. A leak or a broken control ends the test early.
  for (let round = 1; round <= samples * 2 && !ctx.signal.aborted; round += 1) {
    await sleep(began + (round - 1) * interval - Date.now(), ctx.signal);
    // Denied dials first, so a fresh peer's first attempt is as early as the verifier can make it.
    for (const p of pairs) {
      if (p.exp.verdict === 'unknown') continue;
      await dial(p.exp.verdict === 'deny' ? 'peer' : 'allowed', round, p.from, p.to.pod.ip!, port, p.exp, [
        p.from,
        p.to,
      ]);
    }
    for (const m of members) {
      let control = await dial('control', round, m, m.pod.ip!, port, self, []);
      // A listener may take a moment to bind after its start returned.
      for (let retry = 0; round === 1 && control.outcome === 'refused' && retry < 5; retry += 1) {
        dials.pop();
        await sleep(300, ctx.signal);
        control = await dial('control', round, m, m.pod.ip!, port, self, []);
      }
    }
    if (egressExp?.verdict === 'deny') await dial('egress', round, first, apiHost, apiPort, egressExp, []);
    if (round === 1 || round === samples)
      for (const r of routedDials) await dial('routed', round, fresh[0]!, r.ip, r.port, r.exp, fresh.slice(0, 1));
    const sofar = judgeEnforcement(dials, samples, false);
    if (sofar.verdict !== 'unknown' || sofar.reason === 'EnforcementNotTestable') break;
    if (dials.some((d) => d.kind === 'control' && d.outcome !== 'connected')) break;
    // Never blocked in `samples` rounds: nothing enforces (waiting longer would only repeat it).
    if (round >= samples && !dials.some((d) => d.kind === 'peer' && BLOCKED.includes(d.outcome))) break;
  }
  const spanMs = Date.now() - began;
  const held =
    heldTo && holding?.exitCode === 0
      ? earlyConnection((await run(holder, HOLD_CHECK, [HOLD_FILE])).output)
      : undefined;
  const j = judgeEnforcement(dials, samples);
  const latency = enforcementLatency(dials);
  const egress = dials.filter((d) => d.kind === 'egress');
  const egressNote =
    egress.length > 0 && j.verdict === 'proven'
      ? `; undeclared egress to ${egress[0]!.to} was ${[...new Set(egress.map((d) => d.outcome))].join('/')} too (not counted: nothing shows that address answers from the pod network)`
      : '';
  const timing = `; fresh peers ${fresh.map(podName).join(', ')}: first denied attempt ${latency.firstAttemptMs ?? '?'} ms after a pod start, first blocked ${latency.latencyMs ?? 'never'}${latency.latencyMs !== undefined ? ' ms' : ''}; early held connection ${held ?? 'not tried'}; rounds spanned ${spanMs} ms`;
  const cni = j.reason === 'PolicyNotEnforced' ? `; CNI seen: ${await cniSeen(deps)}` : '';
  f.add(
    'verified',
    j.verdict,
    j.dial ? `pod ${j.dial.from}` : subject,
    j.reason,
    `${j.message}${egressNote}${timing}${cni}`,
    {
      field: j.dial ? `dial ${j.dial.to}` : 'dial',
      value: j.dial ? `${j.dial.kind} ${j.dial.outcome}` : '',
      observed: {
        rounds: samples,
        roundsRun: Math.max(0, ...dials.map((d) => d.round)),
        cleanRounds: cleanRounds(dials).length,
        members: members.length,
        routedPorts: routedDials.length,
        spanMs,
        ...(latency.firstAttemptMs !== undefined ? { firstAttemptMs: latency.firstAttemptMs } : {}),
        ...(latency.latencyMs !== undefined ? { enforcementLatencyMs: latency.latencyMs } : {}),
        ...(held
          ? { earlyConnectionOpened: held === 'blocked' ? 0 : 1, earlyConnectionSurvived: held === 'survived' ? 1 : 0 }
          : {}),
        ...counts(dials),
      },
      ...(j.dial && j.dial.policies.length > 0 ? { objects: [...j.dial.policies] } : {}),
      ...(j.verdict === 'unknown' ? { missingTest } : {}),
    },
  );
  if (held === 'survived' && heldPair)
    f.add(
      'verified',
      'contradicted',
      `pod ${podName(holder)}`,
      'EarlyConnectionSurvived',
      `the connection ${podName(holder)} opened to ${heldPair.to.pod.ip}:${echoPort} ${heldAtMs ?? '?'} ms after its pod started still answered after the rounds, although the policies deny it: a flow opened before enforcement outlives it`,
      {
        field: `held connection ${heldPair.to.pod.ip}:${echoPort}`,
        value: held,
        objects: [...heldPair.exp.policies],
      },
    );
}
