/**
 * A user's own cdk8s app gets the objects `agentplane synth` writes: `app.synth()` of each example environment and
 * the phase files of `agentplane synth`, object by object as JSON text (key order included), in the same order.
 * (test/packaging does the same with the packed package in fresh CommonJS and ESM projects.) `app.synth()` checks the
 * lock as `agentplane synth` does: the example's committed lock holds, and a patched image is a LockMismatchError.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, JsonPatch, Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { AgentEnvironment } from '../../../src/constructs/index.js';
import { synthesizeEnvironment } from '../../../src/synth/index.js';
import { IMAGE, podSpec, release } from '../constructs/fixture.js';
import { LockMismatchError, readLock } from '../../../src/releases/index.js';
import { thrownBy } from '../thrown.js';
import { EXAMPLES, type ExampleName } from './helpers.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const EXAMPLE_DIR = join(import.meta.dirname, '../../../examples');

const objectsOf = (text: string): string[] =>
  parseAllDocuments(text)
    .map((d) => JSON.stringify(d.toJS()))
    .filter((t) => t !== 'null');

test.each(Object.keys(EXAMPLES) as ExampleName[])(
  '%s: app.synth() writes the objects of agentplane synth',
  async (name) => {
    const outdir = mkdtempSync(join(tmpdir(), 'agentplane-app-synth-'));
    const app = new App({ outdir });
    await EXAMPLES[name].build({ app, loadRelease: (tag) => release(tag as Parameters<typeof release>[0]) });
    const env = app.node.findAll().find((c): c is AgentEnvironment => c instanceof AgentEnvironment)!;
    // app.synth() checks agentplane.lock.json in the working directory: the example's own lock, the one
    // `agentplane synth` checks next to the module (it matches, so it is left as it is).
    const lock = join(EXAMPLE_DIR, name, 'agentplane.lock.json');
    const before = readFileSync(lock, 'utf8');
    const cwd = process.cwd();
    process.chdir(join(EXAMPLE_DIR, name));
    try {
      app.synth();
    } finally {
      process.chdir(cwd);
    }
    expect(readFileSync(lock, 'utf8')).toBe(before);
    const fromApp = readdirSync(outdir)
      .sort()
      .flatMap((f) => objectsOf(readFileSync(join(outdir, f), 'utf8')));
    const synthesis = synthesizeEnvironment(env);
    const fromCli = synthesis.files
      .filter((f) => /^\d\d-.*\.yaml$/.test(f.path.split('/').pop()!))
      .flatMap((f) => objectsOf(f.content));
    expect(fromApp.length).toBe(synthesis.objects.length);
    expect(fromApp).toEqual(fromCli);
  },
);

test('app.synth() checks the lock: written when absent, an image patched in since is a LockMismatchError', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-app-lock-'));
  const lockFile = join(dir, 'agentplane.lock.json');
  const build = async (image?: string): Promise<App> => {
    const app = new App({ outdir: join(dir, 'dist') });
    const rel = await release('v0.5.6');
    const env = new AgentEnvironment(app, 'dev', { release: rel, lockFile });
    const gvisor = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const t = env.addTemplate('shell', { runtimeClass: gvisor, podSpec: podSpec() });
    if (image !== undefined)
      t.apiObject.addJsonPatch(JsonPatch.replace('/spec/podTemplate/spec/containers/0/image', image));
    return app;
  };
  (await build()).synth();
  expect(readLock(lockFile)?.images).toEqual({
    'dev/controller': 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
    'dev/template/agent-sandboxes/shell/main': IMAGE,
  });
  const written = readFileSync(lockFile, 'utf8');
  const app = await build('registry.example.internal/agent-sandbox/sandboxd:v0.5.7');
  const err = thrownBy(() => app.synth(), LockMismatchError, 'LockMismatch');
  expect(err.differences).toEqual([
    {
      field: 'images',
      key: 'dev/template/agent-sandboxes/shell/main',
      locked: IMAGE,
      declared: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.7',
    },
  ]);
  expect(readFileSync(lockFile, 'utf8')).toBe(written);
  // Testing.synth() writes no output and leaves the lock alone.
  expect(
    Testing.synth((await build('registry.example.internal/agent-sandbox/sandboxd:v0.5.8')).charts[0]!).length,
  ).toBeGreaterThan(0);
});
