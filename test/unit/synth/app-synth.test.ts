/**
 * A user's own cdk8s app gets the objects `agentplane synth` writes: `app.synth()` of each example environment and
 * the phase files of `agentplane synth`, object by object as JSON text (key order included), in the same order.
 * (test/packaging does the same with the packed package in fresh CommonJS and ESM projects.)
 */
import { jest } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { AgentEnvironment } from '../../../src/constructs/index.js';
import { synthesizeEnvironment } from '../../../src/synth/index.js';
import { release } from '../constructs/fixture.js';
import { EXAMPLES, type ExampleName } from './helpers.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

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
    app.synth();
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
