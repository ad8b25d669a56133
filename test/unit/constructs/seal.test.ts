/**
 * `seal()` (which synthesis calls) guards every way a part joins an environment: `env.add*` and `new X(env, ...)`
 * alike, since a part added after synthesis would be missing from the output. The refused part is taken out of the
 * construct tree again, so a later `app.synth()` does not write it either.
 */
import { jest } from '@jest/globals';
import {
  ConstructError,
  SandboxClaim,
  SandboxRuntimeClass,
  SandboxTemplate,
  SandboxWarmPool,
  synthesizeEnvironment,
} from '../../../src/index.js';
import { thrownBy } from '../thrown.js';
import { newEnvironment, podSpec, release } from './fixture.js';

jest.setTimeout(120_000);

test('after seal, new SandboxTemplate / SandboxRuntimeClass / SandboxWarmPool / SandboxClaim (env as scope) are refused like add*', async () => {
  const env = newEnvironment(await release('v0.5.6'), 'sealed', { install: false, claimLifecycle: 'unbounded' });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const tpl = env.addTemplate('shell', { runtimeClass: rc, podSpec: podSpec() });
  const pool = env.addWarmPool('pool', { template: tpl, replicas: 1 });
  const before = synthesizeEnvironment(env).objects.length;
  const parts: Array<[string, () => unknown]> = [
    ['late-template', () => new SandboxTemplate(env, 'late-template', { runtimeClass: rc, podSpec: podSpec() })],
    ['late-rc', () => new SandboxRuntimeClass(env, 'late-rc', { preset: 'gvisor', allNodes: true, name: 'late' })],
    ['late-pool', () => new SandboxWarmPool(env, 'late-pool', { template: tpl, replicas: 1 })],
    ['late-claim', () => new SandboxClaim(env, 'late-claim', { pool })],
    ['late-add', () => env.addTemplate('late-add', { runtimeClass: rc, podSpec: podSpec() })],
  ];
  for (const [id, create] of parts) {
    const err = thrownBy(create, ConstructError, 'EnvironmentSealed');
    expect(err.path).toBe(`sealed/${id}`);
    expect(env.node.tryFindChild(id)).toBeUndefined();
  }
  expect(env.templates.map((t) => t.name)).toEqual(['shell']);
  expect(synthesizeEnvironment(env).objects.length).toBe(before);
});
