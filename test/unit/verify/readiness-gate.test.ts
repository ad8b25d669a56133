/** The readiness gate before probing: CRDs Established, controller Available at its generation, pools Ready. */
import { waitForReadiness, pendingNow, type ReadinessReads } from '../../../src/verify/readiness-gate.js';
import type { KubeObject } from '../../../src/releases/index.js';
import { crdView, deploymentView, warmPoolView } from '../../../src/adapter/kubernetes/views.js';

const crd = (established: boolean): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'sandboxes.agents.x-k8s.io' },
  status: { conditions: [{ type: 'Established', status: established ? 'True' : 'False' }] },
});
const deployment = (generation: number, observed: number | undefined, available: boolean): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'agent-sandbox-controller', namespace: 'agent-sandbox-system', generation },
  status: {
    ...(observed === undefined ? {} : { observedGeneration: observed }),
    updatedReplicas: 1,
    conditions: [{ type: 'Available', status: available ? 'True' : 'False', reason: 'MinimumReplicasUnavailable' }],
  },
});
const pool = (generation: number, status: Record<string, unknown>): KubeObject => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxWarmPool',
  metadata: { name: 'py-pool', namespace: 'sbx', generation },
  spec: { replicas: 2 },
  status,
});

function reads(objs: { crd?: KubeObject; deployment?: KubeObject; pool?: KubeObject }): ReadinessReads {
  return {
    crd: async () => (objs.crd ? crdView(objs.crd) : undefined),
    deployment: async () => (objs.deployment ? deploymentView(objs.deployment) : undefined),
    warmPool: async () => (objs.pool ? warmPoolView(objs.pool) : undefined),
  };
}

const targets = (release: 'v0.5.0' | 'v0.5.6' = 'v0.5.6') => ({
  release,
  crds: ['sandboxes.agents.x-k8s.io'],
  controller: { namespace: 'agent-sandbox-system', name: 'agent-sandbox-controller' },
  pools: [{ namespace: 'sbx', name: 'py-pool' }],
});

describe('readiness gate', () => {
  test('each part pending with its reason code until ready', async () => {
    const reasons = async (o: Parameters<typeof reads>[0], release?: 'v0.5.0' | 'v0.5.6') =>
      (await pendingNow(targets(release), reads(o))).map((p) => p.reason);
    expect(await reasons({})).toEqual(['NotFound', 'NotFound', 'NotFound']);
    expect(
      await reasons({
        crd: crd(false),
        deployment: deployment(2, 1, true),
        pool: pool(1, { readyReplicas: 1, observedGeneration: 1 }),
      }),
    ).toEqual(['CrdNotEstablished', 'StaleObservedGeneration', 'PoolMembersNotReady']);
    expect(
      await reasons({
        crd: crd(true),
        deployment: deployment(2, 2, false),
        pool: pool(2, { readyReplicas: 2, observedGeneration: 1 }),
      }),
    ).toEqual(['ControllerNotAvailable', 'StaleObservedGeneration']);
    // v0.5.0 writes no observedGeneration on pools: the counters alone decide
    expect(
      await reasons(
        { crd: crd(true), deployment: deployment(1, 1, true), pool: pool(3, { readyReplicas: 2 }) },
        'v0.5.0',
      ),
    ).toEqual([]);
    const failing: ReadinessReads = { ...reads({}), crd: () => Promise.reject(new Error('connection refused')) };
    expect((await pendingNow({ ...targets(), controller: undefined, pools: [] } as never, failing))[0]).toMatchObject({
      reason: 'ReadFailed',
    });
  });

  test('waits, logs each change, and ends ready once everything is', async () => {
    let t = 0;
    const states: Array<Parameters<typeof reads>[0]> = [
      {},
      { crd: crd(true), deployment: deployment(1, undefined, false) },
      { crd: crd(true), deployment: deployment(1, 1, true), pool: pool(1, { observedGeneration: 1 }) },
      {
        crd: crd(true),
        deployment: deployment(1, 1, true),
        pool: pool(1, { observedGeneration: 1, readyReplicas: 2 }),
      },
    ];
    let i = 0;
    const r: ReadinessReads = {
      crd: async () => reads(states[i]!).crd(''),
      deployment: async () => reads(states[i]!).deployment('', ''),
      warmPool: async () => reads(states[i]!).warmPool('', ''),
    };
    const lines: string[] = [];
    const result = await waitForReadiness(targets(), r, {
      deadlineMs: 60_000,
      intervalMs: 1000,
      now: () => t,
      sleep: async (ms) => {
        t += ms;
        i = Math.min(i + 1, states.length - 1);
      },
      progress: (l) => lines.push(l),
    });
    expect(result).toEqual({ ready: true, waitedMs: 3000, pending: [] });
    expect(lines.length).toBe(4);
    expect(lines[3]).toMatch(/^ready after 3s/);
  });

  test('gives up at the deadline with what is still pending', async () => {
    let t = 0;
    const lines: string[] = [];
    const result = await waitForReadiness(targets(), reads({ crd: crd(true), deployment: deployment(1, 1, false) }), {
      deadlineMs: 10_000,
      intervalMs: 2000,
      now: () => t,
      sleep: async (ms) => {
        t += ms;
      },
      progress: (l) => lines.push(l),
    });
    expect(result.ready).toBe(false);
    expect(result.waitedMs).toBeLessThanOrEqual(10_000);
    expect(result.pending.map((p) => p.reason)).toEqual(['ControllerNotAvailable', 'NotFound']);
    expect(lines).toHaveLength(2); // one "waiting" line (nothing changed), one "gave up"
    expect(lines[1]).toMatch(
      /^gave up after \d+s: Deployment agent-sandbox-system\/agent-sandbox-controller: ControllerNotAvailable/,
    );
  });
});

describe('readiness gate: a pool member that can never start (case test-node-runsc-registration)', () => {
  test('ends at once with PoolMembersCannotStart instead of waiting out the deadline; asked only while not Ready', async () => {
    let t = 0;
    const asked: string[] = [];
    const notReady = pool(1, { observedGeneration: 1, readyReplicas: 1 });
    const withFault = (fault: string | undefined, p: KubeObject): ReadinessReads => ({
      ...reads({ crd: crd(true), deployment: deployment(1, 1, true), pool: p }),
      poolPodFault: async (namespace, name) => {
        asked.push(`${namespace}/${name}`);
        return fault;
      },
    });
    const opts = { deadlineMs: 120_000, intervalMs: 2000, now: () => t, sleep: async (ms: number) => void (t += ms) };
    const result = await waitForReadiness(targets(), withFault('pod sbx/py-pool-x can never start', notReady), opts);
    expect([result.ready, result.waitedMs]).toEqual([false, 0]);
    expect(result.pending.map((p) => p.reason)).toEqual(['PoolMembersCannotStart']);
    // A slow pool with no permanent fault is still waited for; a Ready pool is not asked about.
    t = 0;
    const slow = await waitForReadiness(targets(), withFault(undefined, notReady), { ...opts, deadlineMs: 6_000 });
    expect(slow.pending.map((p) => p.reason)).toEqual(['PoolMembersNotReady']);
    expect(slow.waitedMs).toBeGreaterThanOrEqual(4_000);
    asked.length = 0;
    const ready = await waitForReadiness(
      targets(),
      withFault('x', pool(1, { observedGeneration: 1, readyReplicas: 2 })),
      opts,
    );
    expect([ready.ready, asked]).toEqual([true, []]);
  });
});

describe('verify --wait-ready targets', () => {
  test("the release's CRDs, the controller unless external, every declared pool", async () => {
    const { readinessTargets } = await import('../../../src/cli/commands/verify.js');
    const plan = {
      release: 'v0.5.6',
      templates: [{ namespace: 'sbx', name: 'py' }],
      warmPools: [{ namespace: 'sbx', name: 'py-pool', template: 'py', replicas: 2 }],
      controller: { namespace: 'agent-sandbox-system', deployment: 'agent-sandbox-controller' },
    } as never;
    expect(readinessTargets(plan, 'deployment')).toEqual({
      release: 'v0.5.6',
      crds: [
        'sandboxes.agents.x-k8s.io',
        'sandboxtemplates.extensions.agents.x-k8s.io',
        'sandboxwarmpools.extensions.agents.x-k8s.io',
        'sandboxclaims.extensions.agents.x-k8s.io',
      ],
      controller: { namespace: 'agent-sandbox-system', name: 'agent-sandbox-controller' },
      pools: [{ namespace: 'sbx', name: 'py-pool' }],
    });
    expect(readinessTargets(plan, 'external')).not.toHaveProperty('controller');
  });
});
