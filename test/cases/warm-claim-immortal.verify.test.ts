/**
 * Case warm-claim-immortal (verifier side): live claims and sandboxes with no expiry older than the threshold (24 h)
 * are listed as findings — unknown evidence on the controller's `verified` step, so they show without lowering the
 * configured state the environment requires. Sandboxes owned by a claim follow their claim, pool members are meant to
 * wait. FAKE, and why: the unit project has no API server and the real one cannot back-date creationTimestamp; the
 * cluster here answers only the two list calls the probe makes.
 */
import { claimView, sandboxView } from '../../src/adapter/kubernetes/views.js';
import type { Cluster } from '../../src/adapter/kubernetes/cluster.js';
import type { ProbeDeps } from '../../src/verify/probes/common.js';
import {
  UNBOUNDED_LIFETIME_THRESHOLD_MS,
  unboundedLifetimesProbe,
  unboundedObjects,
} from '../../src/verify/probes/unbounded-lifetimes.js';
import { settle } from '../../src/verify/states.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const ago = (hours: number): string => new Date(NOW - hours * 3_600_000).toISOString();
const claim = (name: string, hours: number, lifecycle?: Record<string, unknown>) => ({
  metadata: { name, namespace: 'sbx', creationTimestamp: ago(hours) },
  spec: { warmPoolRef: { name: 'py-pool' }, ...(lifecycle ? { lifecycle } : {}) },
});
const sandbox = (name: string, hours: number, owner?: string, shutdownTime?: string) => ({
  metadata: {
    name,
    namespace: 'sbx',
    creationTimestamp: ago(hours),
    ...(owner ? { ownerReferences: [{ kind: owner, name: 'x', uid: 'u', controller: true }] } : {}),
  },
  spec: { podTemplate: {}, ...(shutdownTime ? { shutdownTime } : {}) },
});

const CLAIMS = [
  claim('immortal', 72), // c1 of the case, three days on
  claim('retained-no-expiry', 30, { shutdownPolicy: 'Retain' }), // a policy but no expiry: still unbounded
  claim('young', 2), // below the threshold
  claim('ttl', 72, { shutdownPolicy: 'Delete', ttlSecondsAfterFinished: 0 }),
  claim('dated', 72, { shutdownPolicy: 'Delete', shutdownTime: '2026-12-02T00:00:00Z' }),
];
const SANDBOXES = [
  sandbox('bare', 48), // made by hand, no expiry
  sandbox('claimed', 72, 'SandboxClaim'),
  sandbox('warm', 72, 'SandboxWarmPool'),
  sandbox('bare-dated', 48, undefined, '2026-12-03T00:00:00Z'),
];

describe('case warm-claim-immortal (verifier)', () => {
  test('lists exactly the claims and unowned sandboxes with no expiry older than 24 h, oldest first', () => {
    expect(UNBOUNDED_LIFETIME_THRESHOLD_MS).toBe(86_400_000);
    expect(
      unboundedObjects(
        CLAIMS.map((c) => claimView(c, 'v0.5')),
        SANDBOXES.map((s) => sandboxView(s, 'v0.5')),
        NOW,
      ).map((u) => [u.kind, u.name, u.ageMs / 3_600_000]),
    ).toEqual([
      ['SandboxClaim', 'immortal', 72],
      ['Sandbox', 'bare', 48],
      ['SandboxClaim', 'retained-no-expiry', 30],
    ]);
  });

  test('the probe reports them as unknown on controller/verified and leaves the configured state alone', async () => {
    const calls: string[] = [];
    const cluster = {
      async listCustom(ref: { plural: string; namespace: string }) {
        calls.push(`${ref.plural}/${ref.namespace}`);
        return { kind: 'ok', value: ref.plural === 'sandboxclaims' ? CLAIMS : SANDBOXES };
      },
    } as unknown as Cluster;
    const deps = {
      cluster,
      plan: { templates: [{ namespace: 'sbx', name: 'py' }], warmPools: [{ namespace: 'sbx', name: 'py-pool' }] },
      facts: { tag: 'v0.5.6', family: 'v0.5' },
    } as unknown as ProbeDeps;
    const probe = unboundedLifetimesProbe(deps, () => NOW);
    const evidence = await probe.run({
      signal: new AbortController().signal,
      deadlineMs: 1000,
      evidence: [],
      note: () => {},
    });
    expect(calls).toEqual(['sandboxclaims/sbx', 'sandboxes/sbx']);
    expect(evidence.map((e) => [e.capability, e.step, e.verdict, e.subject, e.reason, e.field])).toEqual([
      ['controller', 'verified', 'unknown', 'SandboxClaim sbx/immortal', 'UnboundedLifetime', 'spec.lifecycle'],
      ['controller', 'verified', 'unknown', 'Sandbox sbx/bare', 'UnboundedLifetime', 'spec.shutdownTime'],
      [
        'controller',
        'verified',
        'unknown',
        'SandboxClaim sbx/retained-no-expiry',
        'UnboundedLifetime',
        'spec.lifecycle',
      ],
    ]);
    expect(evidence[0]!.observed).toEqual({ ageMs: 72 * 3_600_000 });
    const configured = ['discovered', 'compatible', 'configured'].map((step) => ({
      capability: 'controller' as const,
      step: step as 'configured',
      verdict: 'proven' as const,
      subject: 'controller',
      reason: 'ProbeNotRun' as const,
      message: 'ok',
      at: new Date(NOW).toISOString(),
    }));
    expect(settle([...configured, ...evidence]).state).toBe('configured');
  });
});
