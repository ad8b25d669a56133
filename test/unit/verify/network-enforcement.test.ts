import { networkPolicyView, podView, type NetworkPolicyView } from '../../../src/adapter/kubernetes/views.js';
import type { Cluster } from '../../../src/adapter/kubernetes/cluster.js';
import type { VerifyPlan } from '../../../src/verify/plan.js';
import { Facts, type ProbeDeps } from '../../../src/verify/probes/common.js';
import {
  dialOutcome,
  enforcementEvidence,
  judgeEnforcement,
  type Dial,
} from '../../../src/verify/probes/network-enforcement.js';
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
  test('the false observation: the denied peer connects in one round -> contradicted DeniedPeerConnected', () => {
    const dials = [...rounds(2, 'refused'), dial('control', 3, 'connected'), dial('peer', 3, 'connected')];
    const j = judgeEnforcement(dials, 3);
    expect({ verdict: j.verdict, reason: j.reason, from: j.dial?.from, to: j.dial?.to }).toEqual({
      verdict: 'contradicted',
      reason: 'DeniedPeerConnected',
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
  test('a connection the policies allow is no leak, but it is no enforcement either', () => {
    const allowed = [dial('control', 1, 'connected'), dial('peer', 1, 'connected', 'allow')];
    expect(judgeEnforcement(allowed, 1)).toMatchObject({ verdict: 'unknown', reason: 'EnforcementUnclear' });
  });
  test('a missing tool -> EnforcementNotTestable', () => {
    expect(judgeEnforcement([dial('control', 1, 'no-tool')], 2)).toMatchObject({
      verdict: 'unknown',
      reason: 'EnforcementNotTestable',
    });
  });
});

/** A pod network of two sandboxes: the listener, the self-dial and the cross-dial, enforced or not (no shell runs). */
class FakeNetwork implements RuntimeProber {
  readonly listeners = new Set<string>();
  readonly calls: string[][] = [];
  constructor(private readonly enforcing: boolean) {}
  health(): Promise<RuntimeCall<string>> {
    return Promise.resolve({ kind: 'answered', value: 'ok', durationMs: 1 });
  }
  execute(target: RuntimeTarget, argv: readonly string[]): Promise<RuntimeCall<ExecOutput>> {
    this.calls.push([...argv]);
    const [script, , ...args] = argv.slice(2);
    const answer = (exitCode: number, stdout = ''): Promise<RuntimeCall<ExecOutput>> =>
      Promise.resolve({ kind: 'answered', value: { exitCode, stdout, stderr: '' }, durationMs: 1 });
    if (script!.includes('nc -ll')) {
      this.listeners.add(`${target.podIP}:${args[1]}`);
      return answer(0, 'agentplane-listening\n');
    }
    if (script!.includes('KUBERNETES_SERVICE_HOST')) return answer(0, '10.96.0.1 443\n');
    const [host, port] = args;
    if (host === target.podIP) return answer(this.listeners.has(`${host}:${port}`) ? 0 : 1, 'Connection refused');
    if (this.enforcing) return host === '10.96.0.1' ? answer(143) : answer(1, 'bash: connect: Connection refused');
    return answer(0);
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

/** Deps and the hand-off holding one probe sandbox per IP, each whose runtime answered. */
function depsWith(runtime: RuntimeProber, ips: string[]): [ProbeDeps, ReadyProbeSandbox[]] {
  const workload = new Workload({} as Cluster, 'abc123');
  const sandboxes = new ProbeSandboxes();
  ips.forEach((ip, i) => {
    const pod = podView({
      metadata: { name: `p${i}`, namespace: 'sbx', labels: { app: 'sandbox' } },
      status: { podIP: ip, phase: 'Running' },
      spec: { containers: [] },
    });
    const target = {
      kind: 'sandboxd',
      transport: 'port-forward',
      namespace: 'sbx',
      sandbox: `p${i}`,
      pod: `p${i}`,
      podIP: ip,
      restPort: 8080,
    } as const;
    sandboxes.set('sbx', `t${i}`, { sandbox: { name: `p${i}`, pod, podState: '', target }, runtimeOk: true });
  });
  const plan = { probeTimeoutMs: 1000, samples: 3, networkPolicies: [] } as unknown as VerifyPlan;
  return [{ runtime, workload, plan } as unknown as ProbeDeps, sandboxes.ready()];
}
const ctx = { signal: new AbortController().signal, note: () => undefined };
const enforce = ([deps, ready]: [ProbeDeps, ReadyProbeSandbox[]], f: Facts, policies: NetworkPolicyView[]) =>
  enforcementEvidence(deps, f, policies, ready, ctx);

describe('enforcementEvidence over a simulated pod network', () => {
  test('enforcing: verified, every round dialled; not enforcing: failed naming source, destination and policy', async () => {
    const on = new Facts('network-isolation');
    await enforce(depsWith(new FakeNetwork(true), ['10.88.0.5', '10.88.0.6']), on, [managed]);
    expect(on.list.map((e) => [e.verdict, e.reason, e.observed?.rounds])).toEqual([
      ['proven', 'EnforcementObserved', 3],
    ]);
    const off = new Facts('network-isolation');
    await enforce(depsWith(new FakeNetwork(false), ['10.88.0.5', '10.88.0.6']), off, [managed]);
    expect(off.list.map((e) => [e.verdict, e.reason, e.subject, e.field?.replace(/:\d+$/, ':P')])).toEqual([
      ['contradicted', 'DeniedPeerConnected', 'pod sbx/p1', 'dial 10.88.0.5:P'],
    ]);
    expect(off.list[0]!.objects).toEqual(['sbx/shell-network-policy']);
  });
  test('one sandbox, or loopback pod IPs (kwok stand-ins on the host): not testable, nothing run', async () => {
    for (const [ips, field, value] of [
      [['10.88.0.5'], 'probe sandboxes', '1'],
      [['127.20.0.5', '127.20.0.6'], 'pod IP', '127.20.0.5'],
    ] as const) {
      const net = new FakeNetwork(false);
      const f = new Facts('network-isolation');
      await enforce(depsWith(net, [...ips]), f, [managed]);
      expect(f.list.map((e) => [e.verdict, e.reason, e.field, e.value])).toEqual([
        ['unknown', 'EnforcementNotTestable', field, value],
      ]);
      expect(net.calls).toEqual([]);
    }
  });
  test('policies that admit the pair leave the test undone: not testable', async () => {
    const f = new Facts('network-isolation');
    await enforce(depsWith(new FakeNetwork(true), ['10.88.0.5', '10.88.0.6']), f, []);
    expect(f.list.map((e) => [e.verdict, e.reason, e.field, e.value])).toEqual([
      ['unknown', 'EnforcementNotTestable', 'policy prediction', 'allow'],
    ]);
  });
});
