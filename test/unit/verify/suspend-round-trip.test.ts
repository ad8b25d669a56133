/**
 * The suspend-resume round trip's decisions (src/verify/probes/workload/suspend-observe.ts, suspend-after-resume.ts,
 * src/adapter/kubernetes/workspace.ts): what counts as suspended and as resumed, judged at the Sandbox's current
 * generation, and what the runtime and the workspace must show after resume. The Sandbox and pod objects are written
 * here in the shape the controller writes (`controllers/sandbox_controller.go@{v0.4.6,v0.5.0,v0.5.6}`); the runtime is a
 * FAKE RuntimeProber, standing in for a runtime that is silent or has lost a file, which a unit test cannot start.
 * The same round trip on real parts: test/cluster/verify/verify-suspend-real-node.test.ts.
 */
import { nodeView, podView, sandboxView, type SandboxView } from '../../../src/adapter/kubernetes/views.js';
import { workspaceVolume } from '../../../src/adapter/kubernetes/workspace.js';
import { fact, type Evidence } from '../../../src/verify/evidence.js';
import type { TemplatePlan, VerifyPlan } from '../../../src/verify/plan.js';
import { Facts } from '../../../src/verify/probes/common.js';
import { afterResume, type NonceFile } from '../../../src/verify/probes/workload/suspend-after-resume.js';
import {
  judgeResumed,
  judgeSuspended,
  simulatedRuntime,
  type PodSeen,
} from '../../../src/verify/probes/workload/suspend-observe.js';
import type { RuntimeCall, RuntimeProber, RuntimeTarget } from '../../../src/verify/runtime-prober.js';
import { settle } from '../../../src/verify/states.js';
import type { Workload } from '../../../src/verify/workload.js';

type Cond = { type: string; status: string; reason: string; observedGeneration?: number };

function sandbox(
  o: { generation: number; spec: Record<string, unknown>; conditions: Cond[]; podIPs?: string[] },
  family: 'v0.5' | 'v0.4' = 'v0.5',
): SandboxView {
  return sandboxView(
    {
      metadata: { name: 's1', namespace: 'ns', generation: o.generation },
      spec: o.spec,
      status: { conditions: o.conditions, ...(o.podIPs ? { podIPs: o.podIPs } : {}) },
    },
    family,
  );
}

function pod(uid: string, ready = true): PodSeen {
  return {
    kind: 'present',
    pod: podView({
      metadata: { name: 's1', namespace: 'ns', uid },
      status: {
        phase: 'Running',
        podIP: '10.0.0.9',
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      },
    }),
  };
}

const GONE: PodSeen = { kind: 'gone' };

describe('judgeSuspended', () => {
  test('v0.5.6: Suspended=True/PodTerminated at the current generation, no pod IPs, pod gone: suspended', () => {
    const sb = sandbox({
      generation: 3,
      spec: { operatingMode: 'Suspended' },
      conditions: [
        { type: 'Suspended', status: 'True', reason: 'PodTerminated', observedGeneration: 3 },
        { type: 'Ready', status: 'False', reason: 'SandboxSuspended', observedGeneration: 3 },
      ],
    });
    expect(judgeSuspended(sb, 'v0.5', GONE).done).toBe(true);
  });

  test('a stale Suspended=True from an older generation is not a suspension (case suspended-condition-stale)', () => {
    const sb = sandbox({
      generation: 5,
      spec: { operatingMode: 'Suspended' },
      conditions: [
        { type: 'Suspended', status: 'True', reason: 'PodTerminated', observedGeneration: 4 },
        { type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 4 },
      ],
    });
    const j = judgeSuspended(sb, 'v0.5', GONE);
    expect(j.done).toBe(false);
    expect(j.seen).toContain('generation 4');
  });

  test('v0.5.0 reports Suspended=True as soon as it sent the delete: a pod still there (terminating) is not gone', () => {
    const sb = sandbox({
      generation: 3,
      spec: { operatingMode: 'Suspended' },
      conditions: [{ type: 'Suspended', status: 'True', reason: 'PodTerminated', observedGeneration: 3 }],
    });
    expect(judgeSuspended(sb, 'v0.5', pod('uid-1')).done).toBe(false);
    expect(judgeSuspended(sb, 'v0.5', { kind: 'unread', why: '403' }).done).toBe(false);
  });

  test('v0.4.6: replicas 0 only counts once the Ready condition is for the current generation and no IPs remain', () => {
    const reconciled = { type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 2 };
    const stale = { ...reconciled, observedGeneration: 1 };
    expect(
      judgeSuspended(sandbox({ generation: 2, spec: { replicas: 0 }, conditions: [reconciled] }, 'v0.4'), 'v0.4', GONE)
        .done,
    ).toBe(true);
    expect(
      judgeSuspended(sandbox({ generation: 2, spec: { replicas: 0 }, conditions: [stale] }, 'v0.4'), 'v0.4', GONE).done,
    ).toBe(false);
    expect(
      judgeSuspended(
        sandbox({ generation: 2, spec: { replicas: 0 }, conditions: [reconciled], podIPs: ['10.0.0.9'] }, 'v0.4'),
        'v0.4',
        GONE,
      ).done,
    ).toBe(false);
  });
});

describe('judgeResumed', () => {
  const readyNow = { type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 4 };
  const resumed = (conditions: Cond[]) =>
    sandbox({ generation: 4, spec: { operatingMode: 'Running' }, conditions, podIPs: ['10.0.0.9'] });

  test('Ready at the current generation with a new Ready pod: resumed, a leftover Suspended=True aside', () => {
    const leftover = { type: 'Suspended', status: 'True', reason: 'PodTerminated', observedGeneration: 3 };
    expect(judgeResumed(resumed([leftover, readyNow]), pod('uid-2'), 'uid-1').done).toBe(true);
  });

  test('the same pod UID as before suspension: not resumed, flagged as the same pod', () => {
    const j = judgeResumed(resumed([readyNow]), pod('uid-1'), 'uid-1');
    expect(j).toMatchObject({ done: false, samePod: true });
  });

  test('Ready from the generation before the resume, a pod not Ready yet, or no pod: not resumed', () => {
    expect(judgeResumed(resumed([{ ...readyNow, observedGeneration: 3 }]), pod('uid-2'), 'uid-1').done).toBe(false);
    expect(judgeResumed(resumed([readyNow]), pod('uid-2', false), 'uid-1').done).toBe(false);
    expect(judgeResumed(resumed([readyNow]), GONE, 'uid-1').done).toBe(false);
  });
});

describe('simulatedRuntime', () => {
  const node = (containerRuntimeVersion?: string) =>
    nodeView({
      metadata: { name: 'n1' },
      status: containerRuntimeVersion ? { nodeInfo: { containerRuntimeVersion } } : {},
    });
  test('a kwok node, one reporting no runtime, or no node at all cannot have stopped a container', () => {
    expect(simulatedRuntime(node('kwok-0.8.0'))).toBe('kwok-0.8.0');
    expect(simulatedRuntime(node())).toBe('');
    expect(simulatedRuntime(undefined)).toBe('');
    expect(simulatedRuntime(node('containerd://2.2.9'))).toBeUndefined();
  });
});

describe('workspaceVolume', () => {
  const withVolumes = (vcts: string[], mounts: Array<{ name: string; mountPath: string }>) =>
    sandboxView(
      {
        metadata: { name: 's1', generation: 1 },
        spec: {
          podTemplate: { spec: { containers: [{ name: 'sandboxd', volumeMounts: mounts }] } },
          volumeClaimTemplates: vcts.map((name) => ({ metadata: { name }, spec: {} })),
        },
      },
      'v0.5',
    );

  test('a root on a volumeClaimTemplate is kept; on an emptyDir or the container filesystem it is not', () => {
    expect(
      workspaceVolume(withVolumes(['workspace'], [{ name: 'workspace', mountPath: '/workspace' }]), '/workspace'),
    ).toMatchObject({ kept: true, volume: 'workspace' });
    expect(
      workspaceVolume(withVolumes(['data'], [{ name: 'workspace', mountPath: '/workspace' }]), '/workspace'),
    ).toMatchObject({ kept: false, volume: 'workspace' });
    expect(workspaceVolume(withVolumes(['data'], [{ name: 'data', mountPath: '/data' }]), '/workspace')).toMatchObject({
      kept: false,
    });
  });

  test('the deepest mount at or above the root decides', () => {
    const sb = withVolumes(
      ['home'],
      [
        { name: 'home', mountPath: '/home' },
        { name: 'scratch', mountPath: '/home/work' },
      ],
    );
    expect(workspaceVolume(sb, '/home/work/x').volume).toBe('scratch');
    expect(workspaceVolume(sb, '/home/other').kept).toBe(true);
  });
});

describe('afterResume: the runtime and the workspace on the resumed pod', () => {
  const template: TemplatePlan = {
    namespace: 'ns',
    name: 'shell',
    runtime: 'sandboxd',
    ports: { rest: 8080, grpc: 9090 },
    networkPolicyManagement: 'Managed',
  };
  const target: RuntimeTarget = {
    kind: 'sandboxd',
    transport: 'port-forward',
    namespace: 'ns',
    sandbox: 's1',
    pod: 's1',
    restPort: 8080,
    grpcPort: 9090,
  };
  const deps = (runtime: RuntimeProber) => ({
    runtime,
    plan: { probeTimeoutMs: 200, samples: 2 } as VerifyPlan,
    workload: { runId: 'abc123' } as Workload,
  });
  const answered = <T>(value: T): RuntimeCall<T> => ({ kind: 'answered', value, durationMs: 1 });
  const never = async (): Promise<never> => {
    throw new Error('not asked in this test');
  };
  /** A runtime that echoes (or is silent) and holds `file` (null: none). */
  const runtime = (o: { silent?: boolean; file: string | null }): RuntimeProber => ({
    health: async () => (o.silent ? { kind: 'silent', durationMs: 1, detail: 'connection refused' } : answered('ok')),
    execute: async (_t, argv) =>
      o.silent
        ? { kind: 'silent', durationMs: 1, detail: 'connection refused' }
        : answered({ exitCode: 0, stdout: `${argv[1]}\n`, stderr: '' }),
    fileRoundTrip: never,
    readFile: async () => answered(o.file),
    close: async () => undefined,
  });
  const file: NonceFile = { path: '.n', nonce: 'n-1', wrote: answered('n-1') };
  const onPvc = sandboxView(
    {
      metadata: { name: 's1', generation: 4 },
      spec: {
        podTemplate: { spec: { containers: [{ volumeMounts: [{ name: 'ws', mountPath: '/workspace' }] }] } },
        volumeClaimTemplates: [{ metadata: { name: 'ws' }, spec: {} }],
      },
    },
    'v0.5',
  );
  const onEmptyDir = sandboxView(
    {
      metadata: { name: 's1', generation: 4 },
      spec: { podTemplate: { spec: { containers: [{ volumeMounts: [{ name: 'ws', mountPath: '/workspace' }] }] } } },
    },
    'v0.5',
  );
  /** The lower steps and the observed suspend and resume, all proven: what the round trip had before this part. */
  const before: Evidence[] = [
    ...(['discovered', 'compatible', 'configured'] as const).map((step) =>
      fact({
        capability: 'suspend-resume',
        step,
        verdict: 'proven',
        subject: 'x',
        reason: 'SuspendSupported',
        message: 'x',
      }),
    ),
    ...(['SuspendObserved', 'ResumeObserved'] as const).map((reason) =>
      fact({ capability: 'suspend-resume', step: 'verified', verdict: 'proven', subject: 'x', reason, message: 'x' }),
    ),
  ];
  const run = async (rt: RuntimeProber, sb: SandboxView, f0: NonceFile = file) => {
    const f = new Facts('suspend-resume');
    await afterResume(deps(rt), template, f, sb, target, f0, { podState: 'pod s1' });
    return { evidence: f.list, state: settle([...before, ...f.list]).state };
  };

  test('runtime answers and the PVC kept the nonce: verified', async () => {
    const r = await run(runtime({ file: 'n-1' }), onPvc);
    expect(r.evidence.map((e) => e.reason)).toEqual(['NonceEchoed', 'WorkspaceKept']);
    expect(r.state).toBe('verified');
  });

  test('Ready after resume but the runtime is silent: below verified, the workspace not judged', async () => {
    const r = await run(runtime({ silent: true, file: 'n-1' }), onPvc);
    expect(r.evidence.map((e) => [e.reason, e.verdict])).toEqual([['RuntimeSilent', 'unknown']]);
    expect(r.state).toBe('configured');
  });

  test('the PVC the release keeps lost the nonce: missing, below verified', async () => {
    const r = await run(runtime({ file: null }), onPvc);
    expect(r.evidence.map((e) => [e.reason, e.verdict, e.value])).toEqual([
      ['NonceEchoed', 'proven', '2/2'],
      ['WorkspaceLost', 'missing', 'absent'],
    ]);
    expect(r.state).toBe('configured');
  });

  test('an emptyDir workspace: nothing promised, what was found is said (absent), verified', async () => {
    const r = await run(runtime({ file: null }), onEmptyDir);
    expect(r.evidence.map((e) => [e.reason, e.verdict, e.value])).toEqual([
      ['NonceEchoed', 'proven', '2/2'],
      ['WorkspaceNotKept', 'proven', 'absent'],
    ]);
    expect(r.state).toBe('verified');
  });

  test('the nonce could not be written before suspension: the workspace is unchecked, below verified', async () => {
    const r = await run(runtime({ file: null }), onPvc, {
      ...file,
      wrote: { kind: 'timeout', durationMs: 200, detail: 'no answer' },
    });
    expect(r.evidence.map((e) => [e.reason, e.verdict])).toEqual([
      ['NonceEchoed', 'proven'],
      ['WorkspaceUnchecked', 'unknown'],
    ]);
    expect(r.state).toBe('configured');
  });
});
