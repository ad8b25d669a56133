/**
 * Case recreate-adopts-stale-template (verifier side): "updated ready" counts only Ready pool members at the template's
 * current blueprint (the adapter's comparison after the controller's own); a claim bound to an old-template sandbox is
 * flagged StaleAdoption.
 */
import { claimView, sandboxView, templateView, warmPoolView } from '../../src/adapter/kubernetes/views.js';
import type { ProbeDeps } from '../../src/verify/probes/common.js';
import { poolRollout, staleness, warmPoolProbe } from '../../src/verify/probes/warm-pool.js';
import { settle } from '../../src/verify/states.js';

const ready = (gen: number) => ({
  conditions: [{ type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: gen }],
});
const podTemplate = (image: string) => ({ podTemplate: { spec: { containers: [{ name: 'runtime', image }] } } });
/** What the v0.5.6 controller writes into a member of a Managed template: its secure defaults (`ApplySandboxSecureDefaults`, `extensions/controllers/utils.go@v0.5.6`). */
const memberPodTemplate = (image: string) => ({
  podTemplate: {
    spec: {
      containers: [{ name: 'runtime', image }],
      automountServiceAccountToken: false,
      dnsPolicy: 'None',
      dnsConfig: { nameservers: ['8.8.8.8', '1.1.1.1'] },
    },
  },
});
const member = (name: string, image: string, extra: object = {}) => ({
  metadata: {
    name,
    namespace: 'sbx',
    generation: 1,
    ownerReferences: [{ kind: 'SandboxWarmPool', name: 'py-pool', uid: 'p', controller: true }],
    ...extra,
  },
  spec: memberPodTemplate(image),
  status: ready(1),
});

const pool = {
  metadata: { name: 'py-pool', namespace: 'sbx', generation: 2 },
  spec: { replicas: 2, sandboxTemplateRef: { name: 'py' }, updateStrategy: { type: 'Recreate' } },
};
const template = { metadata: { name: 'py', namespace: 'sbx' }, spec: podTemplate('registry.example/runtime:1.1') };

/** The views the probe reads the objects through (ClusterReads); `as never`: the fixtures are partial objects. */
const views = (sandboxes: readonly object[], claims: readonly object[] = []) => ({
  pool: warmPoolView(pool as never),
  template: templateView(template as never),
  sandboxes: sandboxes.map((o) => sandboxView(o as never, 'v0.5')),
  claims: claims.map((o) => claimView(o as never, 'v0.5')),
});
const sb = (o: object) => sandboxView(o as never, 'v0.5');
const tpl = (o: object) => templateView(o as never);

describe('case recreate-adopts-stale-template (verifier)', () => {
  test('two old members (one terminating) and a claim bound to an adopted old sandbox: rollout progressing, StaleAdoption flagged', () => {
    const sandboxes = [
      member('py-pool-a', 'registry.example/runtime:1.0'),
      member('py-pool-b', 'registry.example/runtime:1.0', { deletionTimestamp: '2026-11-29T10:00:00Z' }),
      {
        ...member('py-pool-c', 'registry.example/runtime:1.0'),
        metadata: {
          name: 'py-pool-c',
          namespace: 'sbx',
          generation: 1,
          ownerReferences: [{ kind: 'SandboxClaim', name: 'c7', uid: 'c', controller: true }],
        },
      },
    ];
    const claims = [
      {
        metadata: { name: 'c7' },
        spec: { warmPoolRef: { name: 'py-pool' } },
        status: { sandbox: { name: 'py-pool-c' } },
      },
    ];
    const v = views(sandboxes, claims);
    const ro = poolRollout(v.pool, v.template, v.sandboxes, v.claims);
    expect(ro).toEqual({
      replicas: 2,
      members: 1,
      ready: 1,
      updatedReady: 0,
      stale: [
        'py-pool-a: podTemplate.spec.containers[0].image: registry.example/runtime:1.0 ≠ template registry.example/runtime:1.1',
      ],
      staleAdoptions: [
        {
          claim: 'c7',
          sandbox: 'py-pool-c',
          drift: [
            'podTemplate.spec.containers[0].image: registry.example/runtime:1.0 ≠ template registry.example/runtime:1.1',
          ],
        },
      ],
      starting: [],
    });
  });

  test('the probe renders it: configured not reached while the rollout progresses, with the counts, the stale member and the StaleAdoption', async () => {
    // FAKE, and why: the case's live state mid-rollout (a member being deleted, an adopted old sandbox) is a moment the real
    // controller passes through in milliseconds; the cluster test (verify-warm-pool) covers the settled states. The fake
    // answers only the four reads the probe makes.
    const sandboxes = [
      member('py-pool-a', 'registry.example/runtime:1.0'),
      member('py-pool-b', 'registry.example/runtime:1.0', { deletionTimestamp: '2026-11-29T10:00:00Z' }),
      {
        ...member('py-pool-c', 'registry.example/runtime:1.0'),
        metadata: {
          name: 'py-pool-c',
          namespace: 'sbx',
          generation: 1,
          ownerReferences: [{ kind: 'SandboxClaim', name: 'c7', uid: 'c', controller: true }],
        },
      },
    ];
    const claims = [
      {
        metadata: { name: 'c7' },
        spec: { warmPoolRef: { name: 'py-pool' } },
        status: { sandbox: { name: 'py-pool-c' } },
      },
    ];
    // The status agrees with the members (a Ready old member counts in readyReplicas): only the rollout is at stake here.
    const livePool = { ...pool, status: { observedGeneration: 2, replicas: 1, readyReplicas: 1 } };
    const cluster = {
      getCustom: async (r: { plural: string }, name: string) => ({
        kind: 'ok',
        value:
          r.plural === 'sandboxwarmpools' && name === 'py-pool'
            ? livePool
            : r.plural === 'sandboxtemplates' && name === 'py'
              ? template
              : undefined,
      }),
      listCustom: async (r: { plural: string }) => ({
        kind: 'ok',
        value: r.plural === 'sandboxes' ? sandboxes : r.plural === 'sandboxclaims' ? claims : [],
      }),
    };
    // readyTimeoutMs 0: the one read is judged as it is (a member is missing, so the probe would otherwise wait for it).
    const deps = {
      cluster,
      facts: { family: 'v0.5', tag: 'v0.5.6' },
      plan: { readyTimeoutMs: 0 },
    } as unknown as ProbeDeps;
    const evidence = [
      ...(await warmPoolProbe(deps, { namespace: 'sbx', name: 'py-pool', template: 'py', replicas: 2 }).run(
        undefined as never,
      )),
    ];
    expect(evidence.filter((e) => e.step === 'configured').map((e) => [e.verdict, e.reason, e.value])).toEqual([
      ['missing', 'RolloutProgressing', '0'],
      ['missing', 'StaleAdoption', 'py-pool-c'],
    ]);
    expect(evidence.find((e) => e.reason === 'RolloutProgressing')!.observed).toEqual({
      updatedReady: 0,
      replicas: 2,
      members: 1,
      ready: 1,
      stale: 1,
    });
    expect(evidence.find((e) => e.reason === 'StaleAdoption')!.field).toBe('SandboxClaim c7');
    expect(settle(evidence).state).toBe('compatible');
  });

  test('members at the current image count as updated ready only when Ready at their own generation', () => {
    const fresh = member('py-pool-d', 'registry.example/runtime:1.1');
    const staleCond = {
      ...member('py-pool-e', 'registry.example/runtime:1.1'),
      metadata: { ...member('py-pool-e', 'x').metadata, generation: 2 },
    };
    const v = views([fresh, staleCond]);
    const ro = poolRollout(v.pool, v.template, v.sandboxes, v.claims);
    expect(ro).toMatchObject({ members: 2, ready: 1, updatedReady: 1, stale: [] });
  });

  test("staleness is the controller's blueprint comparison: every pod spec field with secure defaults, not only images", () => {
    const t = {
      spec: {
        networkPolicyManagement: 'Unmanaged',
        podTemplate: {
          spec: {
            runtimeClassName: 'gvisor',
            containers: [
              { name: 'a', image: 'x:1' },
              { name: 'b', image: 'y:1', env: [{ name: 'MODE', value: 'fast' }] },
            ],
          },
        },
      },
    };
    const s = {
      spec: {
        podTemplate: {
          spec: {
            containers: [
              { name: 'a', image: 'x:1' },
              { name: 'b', image: 'y:1', env: [{ name: 'MODE', value: 'safe' }] },
            ],
          },
        },
      },
    };
    expect(staleness(sb(s), tpl(t))).toEqual([
      'podTemplate.spec.containers[1].env[0].value: safe ≠ template fast',
      'podTemplate.spec.runtimeClassName: unset ≠ template gvisor',
    ]);
    // a member as the controller wrote it for a Managed template (secure defaults added) is current
    const managed = { spec: { podTemplate: { spec: { containers: [{ name: 'a', image: 'x:1' }] } } } };
    expect(
      staleness(
        sb(member('m', 'x:1')),
        tpl({ spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: 'x:1' }] } } } }),
      ),
    ).toEqual([]);
    expect(staleness(sb(managed), tpl(managed))).toEqual([
      'podTemplate.spec.dnsConfig: unset ≠ template {"nameservers":["8.8.8.8","1.1.1.1"]}',
      'podTemplate.spec.dnsPolicy: unset ≠ template None',
    ]);
  });
});
