/**
 * Case package-esm-only-client-in-cjs-consumers, on the built package (lib/, `npm run build`) in a plain Node process:
 * the construct entry loads no ES-module-only dependency (the Kubernetes client sits behind /adapter, /verify and
 * /diff, ES module entries a CommonJS module loads with import()); `require` and `import` of the package resolve to one
 * CommonJS file and meet one class. The packaging test repeats this from the packed tarball in fresh CommonJS, ES
 * module and esbuild-bundled projects, with a Jest snapshot test under the cdk8s template's CommonJS configuration.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs an ES module script in `ROOT` (the package resolves itself by name there) and parses its JSON line. */
function probe(script: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (r.status !== 0) throw new Error(`probe exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as Record<string, unknown>;
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'lib/cjs/index.cjs'))) throw new Error('lib/ is missing: run `npm run build` first');
});

test('require() of the construct entry loads no @kubernetes/client-node module and no ES module', () => {
  const out = probe(`
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(join(ROOT, 'package.json'))});
    const entry = require('cdk8s-agentplane');
    const loaded = Object.keys(require.cache);
    console.log(JSON.stringify({
      entry: require.resolve('cdk8s-agentplane'),
      hasConstructs: typeof entry.AgentEnvironment === 'function',
      clientNode: loaded.filter((f) => f.includes('@kubernetes/client-node')).length,
      esm: loaded.filter((f) => f.endsWith('.mjs')).length,
    }));`);
  expect(out).toEqual({
    entry: join(ROOT, 'lib/cjs/index.cjs'),
    hasConstructs: true,
    clientNode: 0,
    esm: 0,
  });
});

test('import and require of the package meet one file and one SandboxRuntimeClass', () => {
  const out = probe(`
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(join(ROOT, 'package.json'))});
    const imported = await import('cdk8s-agentplane');
    const required = require('cdk8s-agentplane');
    console.log(JSON.stringify({
      importResolves: import.meta.resolve('cdk8s-agentplane', ${JSON.stringify(`file://${ROOT}/package.json`)}),
      sameClass: imported.SandboxRuntimeClass === required.SandboxRuntimeClass,
      sameEnvironment: imported.AgentEnvironment === required.AgentEnvironment,
    }));`);
  expect(out).toEqual({
    importResolves: `file://${join(ROOT, 'lib/cjs/index.cjs')}`,
    sameClass: true,
    sameEnvironment: true,
  });
});

test('the subpaths are ES module entries a CommonJS module loads with import()', () => {
  const out = probe(`
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(join(ROOT, 'package.json'))});
    const verify = await import('cdk8s-agentplane/verify');
    let requireCode;
    try { require.resolve('cdk8s-agentplane/verify'); } catch (err) { requireCode = err.code; }
    console.log(JSON.stringify({ meets: verify.meets('verified', 'configured'), requireCode }));`);
  expect(out).toEqual({ meets: true, requireCode: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
});
