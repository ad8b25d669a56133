/**
 * A warm pool refilling after a claim (or just applied) is read again until its members have started, within the
 * ready timeout; a pool whose shortfall is Ready stale members is judged at once. FAKE, and why: the reads are scripted
 * so that the member count changes between two reads at a known moment; on the real node the same refill follows the
 * client's claim (test/cluster/client/dev-python-client.test.ts).
 */
import { sandboxView, templateView, warmPoolView } from '../../../src/adapter/kubernetes/views.js';
import type { ProbeDeps } from '../../../src/verify/probes/common.js';
import { poolRollout, refilling, warmPoolProbe } from '../../../src/verify/probes/warm-pool.js';
import type { ProbeRun } from '../../../src/verify/runner.js';

const image = (tag: string) => `registry.example/runtime:${tag}`;
const pool = {
  metadata: { name: 'py-pool', namespace: 'sbx', generation: 1 },
  spec: { replicas: 2, sandboxTemplateRef: { name: 'py' } },
  status: { observedGeneration: 1 },
};
const template = {
  metadata: { name: 'py', namespace: 'sbx' },
  spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: image('1.1') }] } } },
};
const member = (name: string, tag: string, isReady: boolean) => ({
  metadata: {
    name,
    namespace: 'sbx',
    generation: 1,
    ownerReferences: [{ kind: 'SandboxWarmPool', name: 'py-pool', uid: 'p', controller: true }],
  },
  spec: {
    podTemplate: {
      spec: {
        containers: [{ name: 'runtime', image: image(tag) }],
        automountServiceAccountToken: false,
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['8.8.8.8', '1.1.1.1'] },
      },
    },
  },
  status: {
    conditions: [
      { type: 'Ready', status: isReady ? 'True' : 'False', reason: 'DependenciesReady', observedGeneration: 1 },
    ],
  },
});

/** The pool as its controller writes it for `members` (counters of live and Ready members, a zero omitted). */
const poolFor = (members: readonly ReturnType<typeof member>[]) => {
  const ready = members.filter((m) => m.status.conditions[0]!.status === 'True').length;
  return {
    ...pool,
    status: {
      ...pool.status,
      ...(members.length ? { replicas: members.length } : {}),
      ...(ready ? { readyReplicas: ready } : {}),
    },
  };
};

/** Each list of sandboxes answers the next of `rounds` (the last one repeats); the pool's status follows the last list. */
function depsWith(
  rounds: ReturnType<typeof member>[][],
  readyTimeoutMs: number,
  events: object[] = [],
): { deps: ProbeDeps; lists: () => number } {
  let n = 0;
  const cluster = {
    events: async () => ({ kind: 'ok', value: events }),
    getCustom: async (r: { plural: string }) => ({
      kind: 'ok',
      value:
        r.plural === 'sandboxwarmpools'
          ? poolFor(rounds[Math.max(0, Math.min(n - 1, rounds.length - 1))]!)
          : r.plural === 'sandboxtemplates'
            ? template
            : undefined,
    }),
    listCustom: async (r: { plural: string }) => {
      if (r.plural !== 'sandboxes') return { kind: 'ok', value: [] };
      const round = rounds[Math.min(n, rounds.length - 1)]!;
      n += 1;
      return { kind: 'ok', value: round };
    },
  };
  return {
    deps: { cluster, facts: { family: 'v0.5', tag: 'v0.5.6' }, plan: { readyTimeoutMs } } as unknown as ProbeDeps,
    lists: () => n,
  };
}

const run = (notes: string[]): ProbeRun => ({
  signal: new AbortController().signal,
  deadlineMs: 60_000,
  evidence: [],
  note: (text) => notes.push(text),
});

const configured = (evidence: readonly { step: string; verdict: string; reason: string; value?: string }[]) =>
  evidence.filter((e) => e.step === 'configured').map((e) => [e.verdict, e.reason, e.value]);

test('refilling: fewer members than replicas, or members not Ready; not when the shortfall is Ready stale members', () => {
  const ro = (sandboxes: object[]) =>
    poolRollout(
      warmPoolView(pool as never),
      templateView(template as never),
      sandboxes.map((o) => sandboxView(o as never, 'v0.5')),
      [],
    );
  expect(refilling(ro([member('a', '1.1', true)]))).toBe(true);
  expect(refilling(ro([member('a', '1.1', true), member('b', '1.1', false)]))).toBe(true);
  expect(refilling(ro([member('a', '1.1', true), member('b', '1.0', true)]))).toBe(false);
  expect(refilling(ro([member('a', '1.1', true), member('b', '1.1', true)]))).toBe(false);
});

test('a pool refilling after a claim is read again until its new member is Ready: PoolRolledOut, with the wait said', async () => {
  const { deps, lists } = depsWith(
    [
      [member('a', '1.1', true)],
      [member('a', '1.1', true), member('b', '1.1', false)],
      [member('a', '1.1', true), member('b', '1.1', true)],
    ],
    60_000,
  );
  const notes: string[] = [];
  const evidence = await warmPoolProbe(deps, { namespace: 'sbx', name: 'py-pool', template: 'py', replicas: 2 }).run(
    run(notes),
  );
  expect(configured(evidence)).toEqual([['proven', 'PoolRolledOut', '2']]);
  expect(lists()).toBe(3);
  expect(notes).toHaveLength(2);
  // two polls of 2 s before the third read found both members Ready
  expect(evidence.find((e) => e.reason === 'PoolRolledOut')!.observed!['waitedMs']).toBeGreaterThanOrEqual(4000);
});

test('a pool that does not refill within the ready timeout stays below configured: RolloutProgressing', async () => {
  const { deps, lists } = depsWith([[member('a', '1.1', true)]], 2_500);
  const evidence = await warmPoolProbe(deps, { namespace: 'sbx', name: 'py-pool', template: 'py', replicas: 2 }).run(
    run([]),
  );
  expect(configured(evidence)).toEqual([['missing', 'RolloutProgressing', '1']]);
  expect(lists()).toBeGreaterThanOrEqual(2);
});

test('Ready stale members are judged at once, without waiting', async () => {
  const { deps, lists } = depsWith([[member('a', '1.1', true), member('b', '1.0', true)]], 60_000);
  const evidence = await warmPoolProbe(deps, { namespace: 'sbx', name: 'py-pool', template: 'py', replicas: 2 }).run(
    run([]),
  );
  expect(configured(evidence)).toEqual([['missing', 'RolloutProgressing', '1']]);
  expect(lists()).toBe(1);
});

test('a member whose pod can never start (unknown handler) ends the wait at once: RolloutProgressing, not the ready timeout', async () => {
  const unknown = {
    type: 'Warning',
    reason: 'FailedCreatePodSandBox',
    involvedObject: { kind: 'Pod', name: 'b' },
    source: { component: 'kubelet', host: 'agentplane-node' },
    count: 2,
    message:
      'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured',
    lastTimestamp: '2026-12-05T10:00:00Z',
  };
  const { deps, lists } = depsWith([[member('a', '1.1', true), member('b', '1.1', false)]], 60_000, [unknown]);
  const started = Date.now();
  const evidence = await warmPoolProbe(deps, { namespace: 'sbx', name: 'py-pool', template: 'py', replicas: 2 }).run(
    run([]),
  );
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(lists()).toBe(2);
  expect(configured(evidence)).toEqual([['missing', 'RolloutProgressing', '1']]);
});
