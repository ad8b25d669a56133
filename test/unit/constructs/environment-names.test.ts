/**
 * Two environments of one app with the same name would share their lock entries (`<name>/<role>`), their descriptor
 * ConfigMap and dist/<name>/: the environment's own check refuses it, so `app.synth()` and `synthesizeEnvironment`
 * agree with `agentplane synth` (which refuses it across modules too).
 */
import { jest } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { AgentEnvironment, EnvironmentInvalidError, synthesizeEnvironment } from '../../../src/index.js';
import { thrownBy } from '../thrown.js';
import { release } from './fixture.js';

jest.setTimeout(120_000);

test('two environments named alike in one app: EnvironmentNameClash on each, under app.synth() and synthesis', async () => {
  const rel = await release('v0.5.6');
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'agentplane-names-')) });
  const a = new AgentEnvironment(app, 'a', { release: rel, name: 'same', install: false, lockFile: false });
  new AgentEnvironment(app, 'b', { release: rel, name: 'same', install: false, lockFile: false });
  const err = thrownBy(() => synthesizeEnvironment(a), EnvironmentInvalidError, 'EnvironmentInvalid');
  expect(err.problems.map((p) => [p.path, p.reason])).toEqual([['a', 'EnvironmentNameClash']]);
  // cdk8s validations carry text: each environment's line names the other's construct path
  // prose: cdk8s's validation error is one text listing every construct's messages
  expect(() => app.synth()).toThrow(/\[a\] .*"same" is also used by b[^]*\[b\] .*"same" is also used by a/);
});

test('environments with distinct names in one app synthesize', async () => {
  const rel = await release('v0.5.6');
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'agentplane-names-')) });
  const a = new AgentEnvironment(app, 'a', { release: rel, name: 'one', install: false, lockFile: false });
  new AgentEnvironment(app, 'b', { release: rel, name: 'two', install: false, lockFile: false });
  expect(synthesizeEnvironment(a).objects.length).toBeGreaterThan(0);
  expect(() => app.synth()).not.toThrow();
});
