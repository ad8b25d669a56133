/**
 * Case warmpool-status-fields: a pool status whose counters disagree with the members the verifier counts is
 * `PoolStatusStale`; on a release that writes `status.observedGeneration`, a missing one is
 * `PoolObservedGenerationMissing` and an old one `StaleObservedGeneration`, never a pass. Every fixture's status is
 * checked against the pinned CRD of its release first (its fields exist there, and `observedGeneration` exists exactly
 * where {@link POOL_STATUS} says). FAKE, and why: the API reads are scripted so that each release's status shape
 * (stale v0.4.6 counters after scaling to zero, omitted zero counters, an old observedGeneration) is judged at a known
 * moment; the objects are those the pinned controllers write.
 */
import { sandboxView, templateView, warmPoolView } from '../../src/adapter/kubernetes/views.js';
import { FAMILY_VERSION, POOL_STATUS, RELEASE_TAGS, type ReleaseTag } from '../../src/model/releases.js';
import { openApiSchema } from '../../src/releases/crd-schema.js';
import { loadRelease } from '../../src/releases/load.js';
import { releaseFacts } from '../../src/releases/supported.js';
import type { LoadedRelease } from '../../src/releases/types.js';
import type { ProbeDeps } from '../../src/verify/probes/common.js';
import { poolRollout, statusDisagreements, warmPoolProbe } from '../../src/verify/probes/warm-pool.js';
import { settle } from '../../src/verify/states.js';
import { SHARED_MIRROR, tempDir } from '../unit/releases/helpers.js';

const cache = tempDir('warmpool-status');
const releases = new Map<ReleaseTag, LoadedRelease>();
beforeAll(async () => {
  for (const tag of RELEASE_TAGS)
    releases.set(tag, await loadRelease(tag, { mirror: SHARED_MIRROR, cacheDir: cache.dir }));
}, 120_000);
afterAll(() => cache.cleanup());

/** The property names of the pinned SandboxWarmPool CRD's `status` at the version the release is read at. */
function statusFields(tag: ReleaseTag): string[] {
  const facts = releaseFacts(tag);
  const schema = openApiSchema(releases.get(tag)!, 'SandboxWarmPool', FAMILY_VERSION[facts.family]) as {
    properties: { status: { properties: Record<string, unknown> } };
  };
  return Object.keys(schema.properties.status.properties).sort();
}

const template = {
  metadata: { name: 'py', namespace: 'sbx' },
  spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: 'registry.example/runtime:1.1' }] } } },
};
/** A Ready pool member at the template's image, as the v0.5.6 controller writes it (its secure defaults). */
const member = (name: string) => ({
  metadata: {
    name,
    namespace: 'sbx',
    generation: 1,
    ownerReferences: [{ kind: 'SandboxWarmPool', name: 'py-pool', uid: 'p', controller: true }],
  },
  spec: {
    podTemplate: {
      spec: {
        containers: [{ name: 'runtime', image: 'registry.example/runtime:1.1' }],
        automountServiceAccountToken: false,
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['8.8.8.8', '1.1.1.1'] },
      },
    },
  },
  status: { conditions: [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 1 }] },
});

interface PoolFixture {
  metadata: { name: string; namespace: string; generation: number };
  spec: { replicas: number; sandboxTemplateRef: { name: string } };
  status: Record<string, unknown>;
}
const poolAt = (generation: number, replicas: number, status: Record<string, unknown>): PoolFixture => ({
  metadata: { name: 'py-pool', namespace: 'sbx', generation },
  spec: { replicas, sandboxTemplateRef: { name: 'py' } },
  status,
});

/** Runs the pool probe of `tag` against reads that answer `pools` in turn (the last repeats) and `members`. */
async function probe(
  tag: ReleaseTag,
  pools: readonly PoolFixture[],
  members: readonly object[],
  readyTimeoutMs = 10_000,
) {
  for (const p of pools) expect(Object.keys(p.status).filter((k) => !statusFields(tag).includes(k))).toEqual([]);
  let poolReads = 0;
  const cluster = {
    getCustom: async (r: { plural: string }) => ({
      kind: 'ok',
      value:
        r.plural === 'sandboxwarmpools'
          ? pools[Math.min(poolReads++, pools.length - 1)]
          : r.plural === 'sandboxtemplates'
            ? template
            : undefined,
    }),
    listCustom: async (r: { plural: string }) => ({ kind: 'ok', value: r.plural === 'sandboxes' ? members : [] }),
  };
  const facts = releaseFacts(tag);
  const deps = { cluster, facts, plan: { readyTimeoutMs } } as unknown as ProbeDeps;
  const evidence = await warmPoolProbe(deps, { namespace: 'sbx', name: 'py-pool', template: 'py', replicas: 0 }).run({
    signal: new AbortController().signal,
    deadlineMs: 60_000,
    evidence: [],
    note: () => undefined,
  });
  return { evidence, poolReads };
}

const configured = (evidence: readonly { step: string; verdict: string; reason: string; field?: string }[]) =>
  evidence.filter((e) => e.step === 'configured').map((e) => [e.verdict, e.reason, e.field]);

describe('case warmpool-status-fields', () => {
  test.each(RELEASE_TAGS)(
    '%s: the pinned CRD has replicas, readyReplicas, selector, and observedGeneration as POOL_STATUS says',
    (tag) => {
      const fields = statusFields(tag);
      expect(fields).toEqual(expect.arrayContaining(['readyReplicas', 'replicas', 'selector']));
      expect(fields.includes('observedGeneration')).toBe(POOL_STATUS[tag].observedGeneration);
    },
  );

  test('v0.4.6 after scaling to zero: status says 2 ready, 0 members exist: PoolStatusStale for both counters, below configured', async () => {
    const pool = poolAt(7, 0, { replicas: 2, readyReplicas: 2, selector: 'agents.x-k8s.io/pool=abc123' });
    const { evidence, poolReads } = await probe('v0.4.6', [pool], []);
    expect(configured(evidence)).toEqual([
      ['proven', 'PoolRolledOut', 'updatedReady'],
      ['unknown', 'PoolStatusStale', 'status.replicas'],
      ['unknown', 'PoolStatusStale', 'status.readyReplicas'],
    ]);
    expect(evidence.find((e) => e.field === 'status.readyReplicas')!.observed).toEqual({ written: 2, counted: 0 });
    // read once more (a status write can trail its members by a reconcile) before the status is called stale
    expect(poolReads).toBe(3);
    expect(settle(evidence).state).toBe('compatible');
  });

  test('v0.5.6 status for generation 7 of a pool at 8: StaleObservedGeneration, members not trusted to the status', async () => {
    const pool = poolAt(8, 3, { replicas: 2, readyReplicas: 2, observedGeneration: 7 });
    const { evidence } = await probe('v0.5.6', [pool], [member('a'), member('b')]);
    expect(configured(evidence)).toEqual([['unknown', 'StaleObservedGeneration', 'status.observedGeneration']]);
    expect(settle(evidence).state).toBe('compatible');
  });

  test.each(['v0.5.6', 'v1.0.3'] as const)(
    '%s status without observedGeneration is a finding, PoolObservedGenerationMissing, not a pass',
    async (tag) => {
      const pool = poolAt(1, 2, { replicas: 2, readyReplicas: 2 });
      const { evidence } = await probe(tag, [pool], [member('a'), member('b')]);
      expect(configured(evidence)).toEqual([['unknown', 'PoolObservedGenerationMissing', 'status.observedGeneration']]);
      expect(settle(evidence).state).toBe('compatible');
    },
  );

  test('v0.5.0 has no observedGeneration: the same status is judged by its members (PoolRolledOut, configured)', async () => {
    const pool = poolAt(1, 2, { replicas: 2, readyReplicas: 2 });
    const { evidence } = await probe('v0.5.0', [pool], [member('a'), member('b')]);
    expect(configured(evidence)).toEqual([['proven', 'PoolRolledOut', 'updatedReady']]);
    expect(settle(evidence).state).toBe('configured');
  });

  test('v0.5.0 with both counters omitted and no members: absent is 0 and agrees; the pool short of 2 is RolloutProgressing', async () => {
    const pool = poolAt(1, 2, { selector: 'agents.x-k8s.io/pool=abc123' });
    // readyTimeoutMs 0: the short pool is judged at once instead of waiting for members that never come
    const { evidence } = await probe('v0.5.0', [pool], [], 0);
    expect(configured(evidence)).toEqual([['missing', 'RolloutProgressing', 'updatedReady']]);
  });

  test('v0.5.0 with counters omitted but two Ready members: an absent counter is 0, which disagrees: PoolStatusStale', async () => {
    const pool = poolAt(1, 2, { selector: 'agents.x-k8s.io/pool=abc123' });
    const { evidence } = await probe('v0.5.0', [pool], [member('a'), member('b')]);
    expect(configured(evidence).filter((e) => e[1] === 'PoolStatusStale')).toEqual([
      ['unknown', 'PoolStatusStale', 'status.replicas'],
      ['unknown', 'PoolStatusStale', 'status.readyReplicas'],
    ]);
  });

  test('v1.0.3 status that trails by one reconcile and then agrees: no PoolStatusStale, configured', async () => {
    const lagging = poolAt(2, 2, { replicas: 1, readyReplicas: 1, observedGeneration: 2 });
    const caughtUp = poolAt(2, 2, { replicas: 2, readyReplicas: 2, observedGeneration: 2 });
    const { evidence, poolReads } = await probe('v1.0.3', [lagging, lagging, caughtUp], [member('a'), member('b')]);
    expect(configured(evidence)).toEqual([['proven', 'PoolRolledOut', 'updatedReady']]);
    expect(poolReads).toBe(3);
    expect(settle(evidence).state).toBe('configured');
  });

  test('statusDisagreements compares each counter with the verifier count (absent = 0)', () => {
    const ro = poolRollout(
      warmPoolView(poolAt(1, 2, { replicas: 2 }) as never),
      templateView(template as never),
      [sandboxView(member('a') as never, 'v0.5'), sandboxView(member('b') as never, 'v0.5')],
      [],
    );
    expect(statusDisagreements(warmPoolView(poolAt(1, 2, { replicas: 2 }) as never), ro)).toEqual([
      { field: 'status.readyReplicas', written: 0, counted: 2 },
    ]);
  });
});
