/**
 * The reads a run's probes share: one request however many probes ask, a failed read read again, and a new run (a new
 * Cluster) reads anew. FAKE, and why: a counting stand-in for ClusterReads, since what is under test is how often the
 * memo calls it; the bench (bench/verify.ts) counts the same requests against the test cluster.
 */
import type { Cluster } from '../../../src/adapter/kubernetes/cluster.js';
import type { ClusterReads } from '../../../src/adapter/kubernetes/reads.js';
import { loadRelease, type SandboxKind } from '../../../src/releases/index.js';
import { ClusterReads as RealClusterReads } from '../../../src/adapter/kubernetes/reads.js';
import { SharedReads, sharedReadsOf } from '../../../src/verify/probes/shared-reads.js';
import { schemaComparison } from '../../../src/verify/tuple-reader.js';
import { MIRROR } from '../../mirror.js';

function countingReads(answers: Array<'ok' | 'failed'>): { read: ClusterReads; calls: () => number } {
  let calls = 0;
  const answer = async (value: unknown) => {
    const kind = answers[Math.min(calls, answers.length - 1)]!;
    calls += 1;
    return kind === 'ok'
      ? { kind: 'ok', value }
      : { kind: 'failed', error: { category: 'timeout', message: 'deadline', retryable: true } };
  };
  const read = {
    runtimeClass: (name: string) => answer({ name, handler: 'runsc' }),
    networkPolicies: () => answer([]),
  } as unknown as ClusterReads;
  return { read, calls: () => calls };
}

test('probes asking at once and later share one read of a RuntimeClass', async () => {
  const { read, calls } = countingReads(['ok']);
  const s = new SharedReads(read);
  const [a, b] = await Promise.all([s.runtimeClass('gvisor'), s.runtimeClass('gvisor')]);
  const c = await s.runtimeClass('gvisor');
  expect([a.kind, b.kind, c.kind]).toEqual(['ok', 'ok', 'ok']);
  expect(calls()).toBe(1);
  await s.runtimeClass('kata');
  expect(calls()).toBe(2);
});

test('a failed read is not kept: the next probe reads again', async () => {
  const { read, calls } = countingReads(['failed', 'ok']);
  const s = new SharedReads(read);
  expect((await s.templateNetworkPolicies('sbx')).kind).toBe('failed');
  expect((await s.templateNetworkPolicies('sbx')).kind).toBe('ok');
  expect((await s.templateNetworkPolicies('sbx')).kind).toBe('ok');
  expect(calls()).toBe(2);
});

test('each run (its own Cluster) reads anew', async () => {
  const { read, calls } = countingReads(['ok']);
  const run1 = {} as Cluster;
  const run2 = {} as Cluster;
  await sharedReadsOf(run1, () => read).runtimeClass('gvisor');
  await sharedReadsOf(run1, () => read).runtimeClass('gvisor');
  await sharedReadsOf(run2, () => read).runtimeClass('gvisor');
  expect(calls()).toBe(2);
});

test("the tuple's schema comparison reuses the CRDs the install probe read in the same run", async () => {
  const loaded = await loadRelease('v0.5.6', { mirror: MIRROR });
  const asked: string[] = [];
  // A Cluster whose only used call is `crd` (every CRD absent): what is under test is how often it is asked.
  const run = {
    crd: async (name: string) => {
      asked.push(name);
      return { kind: 'ok', value: undefined };
    },
  } as unknown as Cluster;
  const names = (Object.keys(loaded.facts.crds) as SandboxKind[]).map((k) => loaded.facts.crds[k].crdName);
  const viaProbe = sharedReadsOf(run, () => new RealClusterReads(run));
  await Promise.all(names.map((n) => viaProbe.crd(n)));
  await schemaComparison(run, loaded);
  expect(asked.sort()).toEqual([...names].sort());
});
