import {
  networkPolicyView,
  podView,
  type NetworkPolicyView,
  type PodView,
} from '../../../src/adapter/kubernetes/views.js';
import type { Cluster } from '../../../src/adapter/kubernetes/cluster.js';
import type { VerifyPlan } from '../../../src/verify/plan.js';
import { Facts, type ProbeDeps } from '../../../src/verify/probes/common.js';
import {
  cleanRounds,
  dialOutcome,
  earlyConnection,
  enforcementEvidence,
  enforcementLatency,
  judgeEnforcement,
  type Dial,
} from '../../../src/verify/probes/network-enforcement.js';
import type { PeerMaker } from '../../../src/verify/probes/network-peer.js';
import type { ProbeRun } from '../../../src/verify/runner.js';
import { expectConnection } from '../../../src/verify/probes/network-expect.js';
import type { ExecOutput, RuntimeCall, RuntimeProber, RuntimeTarget } from '../../../src/verify/runtime-prober.js';
import { settle } from '../../../src/verify/states.js';
import { ProbeSandboxes, type ReadyProbeSandbox } from '../../../src/verify/probes/workload/handoff.js';
import { Workload } from '../../../src/verify/workload.js';

/** The controller's default `<template>-network-policy` (`extensions/controllers/sandboxtemplate_controller.go@v0.5.6`), for pods labelled app=sandbox. */
const managed = networkPolicyView({
  metadata: { name: 'shell-network-policy', namespace: 'sbx' },
  spec: {
    podSelector: { matchLabels: { app: 'sandbox' } },
    policyTypes: ['Ingress', 'Egress'],
    ingress: [
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agent-sandbox-system' } },
            podSelector: { matchLabels: { app: 'sandbox-router' } },
          },
        ],
      },
    ],
    egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'] } }] }],
  },
});
const sandbox = (ip: string) => ({ ip, namespace: 'sbx', labels: { app: 'sandbox' } });

describe('expectConnection: what the policies predict for one TCP connection', () => {
  test('sandbox to sandbox is denied by ingress and egress of the Managed policy', () => {
    expect(expectConnection(sandbox('10.88.0.5'), sandbox('10.88.0.6'), 21000, [managed])).toEqual({
      verdict: 'deny',
      policies: ['sbx/shell-network-policy'],
    });
  });
  test('the router pod in agent-sandbox-system is admitted on any port; public egress is admitted', () => {
    const router = { ip: '10.88.0.9', namespace: 'agent-sandbox-system', labels: { app: 'sandbox-router' } };
    expect(expectConnection(router, sandbox('10.88.0.6'), 8080, [managed]).verdict).toBe('allow');
    expect(expectConnection(sandbox('10.88.0.6'), { ip: '8.8.8.8' }, 53, [managed]).verdict).toBe('allow');
    expect(expectConnection(sandbox('10.88.0.6'), { ip: '10.96.0.1' }, 443, [managed]).verdict).toBe('deny');
  });
  test('no policy selects either end: allowed; a named port cannot be judged: unknown', () => {
    expect(expectConnection(sandbox('10.88.0.5'), sandbox('10.88.0.6'), 80, []).verdict).toBe('allow');
    const named = networkPolicyView({
      metadata: { name: 'named', namespace: 'sbx' },
      spec: { podSelector: {}, policyTypes: ['Ingress'], ingress: [{ ports: [{ port: 'http' }] }] },
    });
    expect(expectConnection(sandbox('10.88.0.5'), sandbox('10.88.0.6'), 80, [named]).verdict).toBe('unknown');
  });
});

describe('dialOutcome', () => {
  test.each([
    [0, '', 'connected'],
    [1, 'bash: connect: Connection refused', 'refused'],
    [143, '', 'timeout'],
    [124, '', 'timeout'],
    [1, 'bash: connect: No route to host', 'unreachable'],
    [97, 'no bash/timeout', 'no-tool'],
    [-1, 'runtime did not answer', 'unclear'],
  ] as const)('exit %i %j -> %s', (code, out, want) => {
    expect(dialOutcome(code, out)).toBe(want);
  });
});

const dial = (
  kind: Dial['kind'],
  round: number,
  outcome: Dial['outcome'],
  expected: Dial['expected'] = 'deny',
): Dial => ({
  kind,
  round,
  from: kind === 'control' ? 'sbx/b' : 'sbx/a',
  to: kind === 'egress' ? '10.96.0.1:443' : '10.88.0.6:21000',
  expected: kind === 'control' ? 'allow' : expected,
  policies: kind === 'control' ? [] : ['sbx/shell-network-policy'],
  outcome,
});
const rounds = (n: number, peer: Dial['outcome'], control: Dial['outcome'] = 'connected'): Dial[] =>
  Array.from({ length: n }, (_, i) => [dial('control', i + 1, control), dial('peer', i + 1, peer)]).flat();

describe('judgeEnforcement: observations -> verdict and reason', () => {
  test('every round: control connects, denied peer refused -> proven EnforcementObserved', () => {
    expect(judgeEnforcement(rounds(3, 'refused'), 3)).toMatchObject({
      verdict: 'proven',
      reason: 'EnforcementObserved',
    });
    expect(judgeEnforcement(rounds(3, 'timeout'), 3).verdict).toBe('proven');
  });
  test('the false observation: the denied peer connects in one round -> contradicted PolicyNotEnforced', () => {
    const dials = [...rounds(2, 'refused'), dial('control', 3, 'connected'), dial('peer', 3, 'connected')];
    const j = judgeEnforcement(dials, 3);
    expect({ verdict: j.verdict, reason: j.reason, from: j.dial?.from, to: j.dial?.to }).toEqual({
      verdict: 'contradicted',
      reason: 'PolicyNotEnforced',
      from: 'sbx/a',
      to: '10.88.0.6:21000',
    });
    expect(settle([{ ...j, capability: 'network-isolation', step: 'verified', subject: 'x', at: '' }]).state).toBe(
      'failed',
    );
  });
  test('undeclared egress connecting fails too; a blocked egress dial alone proves nothing extra', () => {
    const j = judgeEnforcement([...rounds(2, 'refused'), dial('egress', 1, 'connected')], 2);
    expect([j.verdict, j.reason]).toEqual(['contradicted', 'UndeclaredEgressConnected']);
  });
  test('a refusal without the listening control does not count; too few rounds are not enough', () => {
    expect(judgeEnforcement(rounds(3, 'refused', 'refused'), 3)).toMatchObject({
      verdict: 'unknown',
      reason: 'EnforcementUnclear',
    });
    expect(judgeEnforcement(rounds(2, 'refused'), 3)).toMatchObject({
      verdict: 'unknown',
      reason: 'EnforcementUnclear',
    });
    expect(judgeEnforcement(rounds(3, 'unclear'), 3).reason).toBe('EnforcementUnclear');
  });
  test('a connection the policies allow is no leak, but it is no enforcement either; one that does not connect spoils its round', () => {
    const allowed = [dial('control', 1, 'connected'), dial('allowed', 1, 'connected', 'allow')];
    expect(judgeEnforcement(allowed, 1)).toMatchObject({ verdict: 'unknown', reason: 'EnforcementUnclear' });
    const shut = [...rounds(2, 'refused'), dial('allowed', 2, 'timeout', 'allow')];
    expect(judgeEnforcement(shut, 2)).toMatchObject({
      verdict: 'unknown',
      reason: 'EnforcementUnclear',
      dial: shut[4],
    });
    expect(cleanRounds(shut)).toEqual([1]);
  });
  /** A denied dial with a fresh end, `ms` after that end's pod started. */
  const freshDial = (round: number, outcome: Dial['outcome'], ms: number): Dial => ({
    ...dial('peer', round, outcome),
    sinceFreshStartMs: ms,
  });
  test('a fresh pair may connect until its rules are programmed: enough clean rounds after it -> proven, latency measured', () => {
    const dials = [
      dial('control', 1, 'connected'),
      freshDial(1, 'connected', 4200),
      ...[2, 3, 4].flatMap((r) => [dial('control', r, 'connected'), freshDial(r, 'refused', 4200 + r * 2500)]),
    ];
    expect(judgeEnforcement(dials, 3)).toMatchObject({ verdict: 'proven', reason: 'EnforcementObserved' });
    expect(cleanRounds(dials)).toEqual([2, 3, 4]);
    expect(enforcementLatency(dials)).toEqual({ firstAttemptMs: 4200, latencyMs: 9200 });
    // Not enough clean rounds after the window: unknown, never proven.
    expect(judgeEnforcement(dials, 4)).toMatchObject({ verdict: 'unknown', reason: 'EnforcementUnclear' });
  });
  test('the false observations: a fresh pair never blocked, or connecting again after it was blocked -> PolicyNotEnforced', () => {
    const never = [1, 2, 3].flatMap((r) => [dial('control', r, 'connected'), freshDial(r, 'connected', r * 1000)]);
    expect(judgeEnforcement(never, 3)).toMatchObject({ verdict: 'contradicted', reason: 'PolicyNotEnforced' });
    // While rounds are still to come, a pair not blocked yet is no verdict yet.
    expect(judgeEnforcement(never, 3, false)).toMatchObject({ verdict: 'unknown', reason: 'EnforcementUnclear' });
    const relapse = [
      ...[1, 2].flatMap((r) => [dial('control', r, 'connected'), freshDial(r, 'refused', r * 1000)]),
      dial('control', 3, 'connected'),
      freshDial(3, 'connected', 3000),
    ];
    expect(judgeEnforcement(relapse, 2, false)).toMatchObject({
      verdict: 'contradicted',
      reason: 'PolicyNotEnforced',
      dial: relapse[5],
    });
  });
  test('the early held connection: the check file read back', () => {
    expect(
      ['', 'blocked\n', 'open\ncut\n', 'open\nsurvived agentplane-ping\n', 'open\n', 'garbage'].map(earlyConnection),
    ).toEqual(['blocked', 'blocked', 'cut', 'survived', 'unclear', 'unclear']);
  });
  test('a missing tool -> EnforcementNotTestable', () => {
    expect(judgeEnforcement([dial('control', 1, 'no-tool')], 2)).toMatchObject({
      verdict: 'unknown',
      reason: 'EnforcementNotTestable',
    });
  });
});

/**
 * A simulated pod network (no shell runs): listeners, self-dials and cross-dials. `enforcing`: every cross-pod dial
 * is refused; `off`: none is; `stale`: a dial is refused only when an end is in `programmed` (a dead agent's rules stay
 * for the pods it saw, new pods are open). The held connection opens when the dial would and survives when `survive`.
 */
class FakeNetwork implements RuntimeProber {
  readonly listeners = new Set<string>();
  readonly calls: string[][] = [];
  readonly programmed = new Set<string>();
  /** Pod IPs whose ingress nothing constrains whatever the mode (rules never made for them). */
  readonly open = new Set<string>();
  survive = false;
  constructor(private readonly mode: 'enforcing' | 'off' | 'stale') {}
  health(): Promise<RuntimeCall<string>> {
    return Promise.resolve({ kind: 'answered', value: 'ok', durationMs: 1 });
  }
  private blocked(from: string | undefined, to: string): boolean {
    if (this.open.has(to)) return false;
    if (this.mode === 'enforcing') return true;
    if (this.mode === 'off') return false;
    return this.programmed.has(from ?? '') || this.programmed.has(to);
  }
  private held = '';
  execute(target: RuntimeTarget, argv: readonly string[]): Promise<RuntimeCall<ExecOutput>> {
    this.calls.push([...argv]);
    const [script, , ...args] = argv.slice(2);
    const answer = (exitCode: number, stdout = ''): Promise<RuntimeCall<ExecOutput>> =>
      Promise.resolve({ kind: 'answered', value: { exitCode, stdout, stderr: '' }, durationMs: 1 });
    if (script!.includes('nc -ll')) {
      this.listeners.add(`${target.podIP}:${args[1]}`);
      return answer(0, 'agentplane-listening\n');
    }
    if (script!.includes('agentplane-holding')) {
      this.held = this.blocked(target.podIP, args[0]!) ? 'blocked\n' : 'open\n';
      return answer(0, 'agentplane-holding\n');
    }
    if (script!.includes('.check'))
      return answer(
        0,
        this.held === 'open\n' ? `open\n${this.survive ? 'survived agentplane-ping' : 'cut'}\n` : this.held,
      );
    if (script!.includes('KUBERNETES_SERVICE_HOST')) return answer(0, '10.96.0.1 443\n');
    const [host, port] = args;
    if (host === target.podIP) return answer(this.listeners.has(`${host}:${port}`) ? 0 : 1, 'Connection refused');
    if (host === '10.96.0.1') return this.mode === 'off' ? answer(0) : answer(143);
    return this.blocked(target.podIP, host!) ? answer(1, 'bash: connect: Connection refused') : answer(0);
  }
  fileRoundTrip(): Promise<RuntimeCall<string>> {
    return Promise.resolve({ kind: 'answered', value: '', durationMs: 1 });
  }
  readFile(): Promise<RuntimeCall<string | null>> {
    return Promise.resolve({ kind: 'answered', value: null, durationMs: 1 });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A ready sandbox of template t0 in sbx, labelled app=sandbox. */
function readySandbox(name: string, ip: string, startTime?: string): ReadyProbeSandbox {
  const pod = podView({
    metadata: { name, namespace: 'sbx', labels: { app: 'sandbox' } },
    status: { podIP: ip, phase: 'Running', ...(startTime ? { startTime } : {}) },
    spec: { containers: [] },
  });
  const target = {
    kind: 'sandboxd',
    transport: 'port-forward',
    namespace: 'sbx',
    sandbox: name,
    pod: name,
    podIP: ip,
    restPort: 8080,
  } as const;
  return { template: 't0', pod, target };
}

/** Deps and the hand-off holding one probe sandbox per IP (template t0), each whose runtime answered. */
function depsWith(runtime: RuntimeProber, ips: string[]): [ProbeDeps, ReadyProbeSandbox[]] {
  const workload = new Workload({} as Cluster, 'abc123');
  const sandboxes = new ProbeSandboxes();
  ips.forEach((ip, i) => {
    const s = readySandbox(`p${i}`, ip);
    sandboxes.set('sbx', 't0', {
      sandbox: { name: `p${i}`, pod: s.pod, podState: '', target: s.target },
      runtimeOk: true,
    });
  });
  const plan = {
    probeTimeoutMs: 1000,
    readyTimeoutMs: 1000,
    samples: 3,
    networkPolicies: [],
    templates: [{ namespace: 'sbx', name: 't0', runtime: 'sandboxd' }],
  } as unknown as VerifyPlan;
  return [{ runtime, workload, plan } as unknown as ProbeDeps, sandboxes.ready()];
}
const ctx = { signal: new AbortController().signal, note: () => undefined } as unknown as ProbeRun;
/** The fresh peers the test's maker hands out: new pod IPs, started a second ago; the prefixes it was asked for. */
function peers(): { make: PeerMaker; prefixes: string[] } {
  const prefixes: string[] = [];
  let n = 50;
  const started = new Date(Date.now() - 1000).toISOString();
  return {
    prefixes,
    make: (_t, _c, prefix) => {
      prefixes.push(prefix);
      return Promise.resolve(readySandbox(`${prefix}-fresh`, `10.88.0.${n++}`, started));
    },
  };
}
const enforce = (
  [deps, ready]: [ProbeDeps, ReadyProbeSandbox[]],
  f: Facts,
  policies: NetworkPolicyView[],
  make: PeerMaker = peers().make,
  routed: PodView[] = [],
) => enforcementEvidence(deps, f, policies, ready, ctx, { makePeer: make, routed, minSpanMs: 0 });

describe('enforcementEvidence over a simulated pod network', () => {
  test('one template is enough: two fresh peers are made; enforcing -> verified with latency; not enforcing -> failed naming the policy', async () => {
    const made = peers();
    const on = new Facts('network-isolation');
    await enforce(depsWith(new FakeNetwork('enforcing'), ['10.88.0.5']), on, [managed], made.make);
    expect(made.prefixes).toEqual(['n', 'm']);
    expect(on.list.map((e) => [e.verdict, e.reason])).toEqual([['proven', 'EnforcementObserved']]);
    expect(on.list[0]!.observed).toMatchObject({
      rounds: 3,
      cleanRounds: 3,
      members: 3,
      earlyConnectionOpened: 0,
      earlyConnectionSurvived: 0,
      'peer-refused': 18,
    });
    expect(on.list[0]!.observed!.enforcementLatencyMs).toBeGreaterThanOrEqual(1000);
    const off = new Facts('network-isolation');
    await enforce(depsWith(new FakeNetwork('off'), ['10.88.0.5']), off, [managed]);
    expect(off.list.map((e) => [e.verdict, e.reason, e.subject, e.field?.replace(/:\d+$/, ':P')])).toEqual([
      ['contradicted', 'PolicyNotEnforced', 'pod sbx/p0', 'dial 10.88.0.50:P'],
    ]);
    expect(off.list[0]!.objects).toEqual(['sbx/shell-network-policy']);
  });
  test('a dead agent whose rules stay: the old probe sandbox is constrained, the fresh pair is not -> PolicyNotEnforced', async () => {
    const net = new FakeNetwork('stale');
    net.programmed.add('10.88.0.5');
    const f = new Facts('network-isolation');
    await enforce(depsWith(net, ['10.88.0.5']), f, [managed]);
    expect(f.list.map((e) => [e.verdict, e.reason, e.subject, e.field?.replace(/:\d+$/, ':P')])).toEqual([
      ['contradicted', 'PolicyNotEnforced', 'pod sbx/n-fresh', 'dial 10.88.0.51:P'],
    ]);
  });
  test('an early connection that opened and still answers after the rounds -> EarlyConnectionSurvived', async () => {
    // The fresh pair is open while the agent is behind; the held connection survives what follows.
    const net = new FakeNetwork('stale');
    net.survive = true;
    const f = new Facts('network-isolation');
    await enforce(depsWith(net, ['10.88.0.5']), f, [managed]);
    expect(f.list.map((e) => [e.verdict, e.reason])).toEqual([
      ['contradicted', 'PolicyNotEnforced'],
      ['contradicted', 'EarlyConnectionSurvived'],
    ]);
    expect(f.list[0]!.observed).toMatchObject({ earlyConnectionOpened: 1, earlyConnectionSurvived: 1 });
  });
  test('every pod clients are routed to is dialled on its declared ports: one whose ingress is open -> PolicyNotEnforced', async () => {
    const member = podView({
      metadata: { name: 'pool-abc', namespace: 'sbx', labels: { app: 'sandbox' } },
      status: { podIP: '10.88.0.9', phase: 'Running' },
      spec: { containers: [{ name: 'sandboxd', ports: [{ containerPort: 8888 }] }] },
    });
    const ok = new FakeNetwork('enforcing');
    const on = new Facts('network-isolation');
    await enforce(depsWith(ok, ['10.88.0.5']), on, [managed], peers().make, [member]);
    expect(on.list.map((e) => [e.verdict, e.reason])).toEqual([['proven', 'EnforcementObserved']]);
    expect(on.list[0]!.observed).toMatchObject({ routedPorts: 1, 'routed-refused': 2 });
    const leaky = new FakeNetwork('enforcing');
    leaky.open.add('10.88.0.9');
    const off = new Facts('network-isolation');
    await enforce(depsWith(leaky, ['10.88.0.5']), off, [managed], peers().make, [member]);
    expect(off.list.map((e) => [e.verdict, e.reason, e.subject, e.field])).toEqual([
      ['contradicted', 'PolicyNotEnforced', 'pod sbx/n-fresh', 'dial 10.88.0.9:8888'],
    ]);
  });
  test('loopback pod IPs (kwok stand-ins on the host): not testable, nothing run, no peer made', async () => {
    const net = new FakeNetwork('off');
    const made = peers();
    const f = new Facts('network-isolation');
    await enforce(depsWith(net, ['127.20.0.5']), f, [managed], made.make);
    expect(f.list.map((e) => [e.verdict, e.reason, e.field, e.value])).toEqual([
      ['unknown', 'EnforcementNotTestable', 'pod IP', '127.20.0.5'],
    ]);
    expect(net.calls).toEqual([]);
    expect(made.prefixes).toEqual([]);
  });
  test('no fresh peer could be made: not testable, with the maker reason', async () => {
    const f = new Facts('network-isolation');
    const fail: PeerMaker = () =>
      Promise.resolve({ field: 'fresh peer', value: 'ProbeNotReadyInTime', why: 'no fresh peer of t0: not Ready' });
    await enforce(depsWith(new FakeNetwork('enforcing'), ['10.88.0.5']), f, [managed], fail);
    expect(f.list.map((e) => [e.verdict, e.reason, e.field, e.value])).toEqual([
      ['unknown', 'EnforcementNotTestable', 'fresh peer', 'ProbeNotReadyInTime'],
    ]);
  });
  test('policies that admit every pair leave the test undone: not testable', async () => {
    const f = new Facts('network-isolation');
    await enforce(depsWith(new FakeNetwork('enforcing'), ['10.88.0.5']), f, []);
    expect(f.list.map((e) => [e.verdict, e.reason, e.field, e.value])).toEqual([
      ['unknown', 'EnforcementNotTestable', 'policy prediction', 'allow'],
    ]);
  });
});
