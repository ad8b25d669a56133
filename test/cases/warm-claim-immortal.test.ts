/**
 * Case warm-claim-immortal, construct side: a claim without a lifecycle fails with its
 * construct path unless it or the environment opts into 'unbounded'; a claim with a lifecycle is written with an
 * explicit shutdownPolicy (never left to the CRD default Retain) and its expiry, on every supported family, and passes
 * the pinned CRD schema. The verifier side is warm-claim-immortal.verify.test.ts.
 */
import { jest } from '@jest/globals';
import {
  ConstructPropsError,
  synthesizeEnvironment,
  UnboundedLifetimeError,
  type AgentEnvironment,
} from '../../src/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';
import type { ReleaseTag } from '../../src/model/releases.js';

jest.setTimeout(120_000);

async function withPool(
  tag: ReleaseTag = 'v0.5.6',
  props: Parameters<typeof newEnvironment>[2] = {},
): Promise<AgentEnvironment> {
  const env = newEnvironment(await release(tag), 'sbx', { defaultNamespace: 'sbx', ...props });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const tpl = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
  env.addWarmPool('py-pool', { template: tpl, replicas: 1 });
  return env;
}

function claimSpec(env: AgentEnvironment, name: string): Record<string, unknown> {
  const obj = synthesizeEnvironment(env).objects.find(
    (o) => o.object.kind === 'SandboxClaim' && o.object.metadata?.name === name,
  )!.object;
  return obj.spec as Record<string, unknown>;
}

describe('case warm-claim-immortal', () => {
  test('c1 (no lifecycle) fails with its construct path and reason unbounded-lifetime', async () => {
    const env = await withPool();
    let err: unknown;
    try {
      env.addClaim('c1', { pool: 'py-pool' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnboundedLifetimeError);
    expect((err as UnboundedLifetimeError).reason).toBe('UnboundedLifetime');
    expect((err as UnboundedLifetimeError).path).toBe('sbx/c1');
    expect((err as UnboundedLifetimeError).what).toBe('claim sbx/c1');
  });

  test.each(['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'] as const)(
    '%s: c2 (ttlSecondsAfterFinished: 0) is written with shutdownPolicy Delete and passes the pinned schema',
    async (tag) => {
      const env = await withPool(tag);
      env.addClaim('c2', { pool: 'py-pool', lifecycle: { ttlSecondsAfterFinished: 0 } });
      expect(claimSpec(env, 'c2')['lifecycle']).toEqual({ shutdownPolicy: 'Delete', ttlSecondsAfterFinished: 0 });
    },
  );

  test('an explicit policy and shutdownTime are written as given', async () => {
    const env = await withPool();
    env.addClaim('c3', {
      pool: 'py-pool',
      lifecycle: { shutdownPolicy: 'Retain', shutdownTime: '2026-12-31T00:00:00Z' },
    });
    expect(claimSpec(env, 'c3')['lifecycle']).toEqual({
      shutdownPolicy: 'Retain',
      shutdownTime: '2026-12-31T00:00:00Z',
    });
  });

  test("lifecycle: 'unbounded' is the named opt-in: no expiry, but the policy is still explicit", async () => {
    const env = await withPool();
    const c = env.addClaim('c4', { pool: 'py-pool', lifecycle: 'unbounded' });
    expect(c.lifecycle).toEqual({ shutdownPolicy: 'Delete', unbounded: true });
    expect(claimSpec(env, 'c4')['lifecycle']).toEqual({ shutdownPolicy: 'Delete' });
  });

  test('the environment default applies to claims that set none; a claim of its own overrides it', async () => {
    const env = await withPool('v0.5.6', { claimLifecycle: { ttlSecondsAfterFinished: 3600 } });
    env.addClaim('c5', { pool: 'py-pool' });
    env.addClaim('c6', { pool: 'py-pool', lifecycle: { shutdownTime: '2027-01-01T00:00:00Z' } });
    expect(claimSpec(env, 'c5')['lifecycle']).toEqual({ shutdownPolicy: 'Delete', ttlSecondsAfterFinished: 3600 });
    expect(claimSpec(env, 'c6')['lifecycle']).toEqual({
      shutdownPolicy: 'Delete',
      shutdownTime: '2027-01-01T00:00:00Z',
    });
    const open = await withPool('v0.5.6', { claimLifecycle: 'unbounded' });
    expect(open.addClaim('c7', { pool: 'py-pool' }).lifecycle.unbounded).toBe(true);
  });

  test('a lifecycle with neither expiry field, or a malformed time, is refused with the value as JSON', async () => {
    const env = await withPool();
    expect(() => env.addClaim('c8', { pool: 'py-pool', lifecycle: { shutdownPolicy: 'Delete' } })).toThrow(
      ConstructPropsError,
    );
    const noExpiry = thrownBy(
      () => env.addClaim('c9', { pool: 'py-pool', lifecycle: { shutdownPolicy: 'Delete' } }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(noExpiry.problems.map((p) => [p.prop, p.reason, p.value])).toEqual([
      ['lifecycle', 'NoExpiry', { shutdownPolicy: 'Delete' }],
    ]);
    const malformed = thrownBy(
      () => env.addClaim('c10', { pool: 'py-pool', lifecycle: { shutdownTime: 'tomorrow' } }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(malformed.problems.map((p) => [p.prop, p.reason, p.value])).toEqual([
      ['lifecycle.shutdownTime', 'InvalidFormat', 'tomorrow'],
      ['lifecycle.shutdownTime', 'NotADate', 'tomorrow'],
    ]);
  });
});
