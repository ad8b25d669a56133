/**
 * Case package-duplicate-cdk8s-copies: a second, real copy of cdk8s (or of constructs) on disk, as npm nests one under
 * a library, loaded next to the project's. A construct of this package under a root of the other copy fails at
 * construction with a typed error naming both module files; a value of ours computed at render time resolves under
 * either copy's objects (no cdk8s `Lazy`, whose `instanceof` test fails across copies). The packaging test installs the
 * packed tarball into a duplicated npm layout as well.
 */
import { jest } from '@jest/globals';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import type * as cdk8s from 'cdk8s';
import type * as constructs from 'constructs';
import { AgentEnvironment, DuplicatePackageCopyError, SandboxRuntimeClass } from '../../src/index.js';
import { lazy } from '../../src/constructs/lazy.js';
import { release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

jest.setTimeout(120_000);

const nodeRequire = createRequire(import.meta.url);
let dir: string;
let other: typeof cdk8s;
let otherConstructs: typeof constructs;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentplane-copies-'));
  // cdk8s copied (its bundled dependencies with it), sharing the project's constructs as a nested layout does.
  mkdirSync(join(dir, 'cdk8s-copy/node_modules'), { recursive: true });
  cpSync(
    realpathSync(join(nodeRequire.resolve('cdk8s/package.json'), '..')),
    join(dir, 'cdk8s-copy/node_modules/cdk8s'),
    {
      recursive: true,
    },
  );
  symlinkSync(
    realpathSync(join(nodeRequire.resolve('constructs/package.json'), '..')),
    join(dir, 'cdk8s-copy/node_modules/constructs'),
  );
  // constructs copied alone
  mkdirSync(join(dir, 'constructs-copy/node_modules'), { recursive: true });
  cpSync(
    realpathSync(join(nodeRequire.resolve('constructs/package.json'), '..')),
    join(dir, 'constructs-copy/node_modules/constructs'),
    { recursive: true },
  );
  other = nodeRequire(join(dir, 'cdk8s-copy/node_modules/cdk8s')) as typeof cdk8s;
  otherConstructs = nodeRequire(join(dir, 'constructs-copy/node_modules/constructs')) as typeof constructs;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the copies are distinct classes (the set-up holds)', () => {
  expect(other.App).not.toBe(App);
  expect(otherConstructs.Construct).not.toBe(nodeRequire('constructs').Construct);
});

test('an environment under an App of a second cdk8s copy: DuplicatePackageCopy naming both cdk8s module files', async () => {
  const rel = await release('v0.5.6');
  const err = thrownBy(
    () => new AgentEnvironment(new other.App(), 'dev', { release: rel }),
    DuplicatePackageCopyError,
    'DuplicatePackageCopy',
  );
  expect(err.path).toBe('dev');
  expect(err.packageName).toBe('cdk8s');
  expect(err.theirs.startsWith(join(dir, 'cdk8s-copy/node_modules/cdk8s/'))).toBe(true);
  expect(err.ours).toBe(nodeRequire.resolve('cdk8s'));
});

test('a construct in a chart of a second cdk8s copy: the same error, with the construct path', () => {
  const chart = new other.Chart(new other.App(), 'lib');
  const err = thrownBy(
    () => new SandboxRuntimeClass(chart, 'gvisor', { preset: 'gvisor', allNodes: true }),
    DuplicatePackageCopyError,
    'DuplicatePackageCopy',
  );
  expect(err.path).toBe('lib/gvisor');
  expect(err.packageName).toBe('cdk8s');
});

test('a construct under a root of a second constructs copy: DuplicatePackageCopy naming both constructs module files', () => {
  const root = new otherConstructs.Construct(undefined as never, '');
  const err = thrownBy(
    () => new SandboxRuntimeClass(root as never, 'gvisor', { preset: 'gvisor', allNodes: true }),
    DuplicatePackageCopyError,
    'DuplicatePackageCopy',
  );
  expect(err.packageName).toBe('constructs');
  expect(err.theirs.startsWith(join(dir, 'constructs-copy/node_modules/constructs/'))).toBe(true);
  expect(err.ours).toBe(nodeRequire.resolve('constructs'));
});

test('a render-time value of ours resolves in an object of either cdk8s copy', () => {
  const data = (): Record<string, string> => ({ k: 'v' });
  for (const [name, lib] of [
    ['project', { App, Chart, ApiObject: nodeRequire('cdk8s').ApiObject as typeof cdk8s.ApiObject }],
    ['copy', other],
  ] as const) {
    const chart = new lib.Chart(new lib.App(), name);
    const obj = new lib.ApiObject(chart, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', data: lazy(data) } as never);
    expect(obj.toJson()).toMatchObject({ data: { k: 'v' } });
  }
});

test('one copy: the environment is made and its runtime class is known as ours across instanceof', async () => {
  const env = new AgentEnvironment(new App(), 'dev', { release: await release('v0.5.6') });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  expect(rc).toBeInstanceOf(SandboxRuntimeClass);
  expect(env).toBeInstanceOf(AgentEnvironment);
  // a Chart that is not an environment is not one (Chart's own instanceof test answers for every chart)
  expect(new Chart(new App(), 'plain')).not.toBeInstanceOf(AgentEnvironment);
});
