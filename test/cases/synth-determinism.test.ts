/**
 * Case synth-determinism: same code, same bytes — across runs, declaration orders and the iteration order of
 * object literals, Sets and Maps. Lists keep declared order (env order carries meaning); the stdout stream separates
 * documents with `---`. (The CLI side, `synth --stdout` twice, is in test/unit/synth/cli.test.ts.)
 */
import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { App } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import {
  AgentEnvironment,
  synthesizeEnvironment,
  yamlStream,
  type EnvironmentSynthesis,
  type LoadedRelease,
} from '../../src/index.js';
import { podSpec, release } from '../unit/constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

/** Two environments whose labels come from an object literal, a Set and a Map, built in the given orders. */
function build(rel: LoadedRelease, opts: { reverse: boolean }): EnvironmentSynthesis[] {
  const app = new App();
  const labelPairs: Array<[string, string]> = [
    ['team', 'agents'],
    ['cost-center', '42'],
    ['tier', 'sandbox'],
  ];
  const labels = new Map(opts.reverse ? [...labelPairs].reverse() : labelPairs);
  const features = new Set(opts.reverse ? ['b', 'a', 'c'] : ['a', 'c', 'b']);
  const literal: Record<string, string> = opts.reverse ? { z: '1', a: '2' } : { a: '2', z: '1' };
  const names = opts.reverse ? ['two', 'one'] : ['one', 'two'];
  const out: EnvironmentSynthesis[] = [];
  for (const envName of names) {
    const env = new AgentEnvironment(app, envName, { release: rel, install: false, defaultNamespace: `ns-${envName}` });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true, name: `gvisor-${envName}` });
    const templates = opts.reverse ? ['beta', 'alpha'] : ['alpha', 'beta'];
    for (const t of templates) {
      // env order is declared order and must survive: FEATURES then A then Z, whatever the Set/literal iteration order
      const env_: k8s.EnvVar[] = [
        { name: 'FEATURES', value: [...features].sort().join(',') },
        { name: 'A', value: literal['a']! },
        { name: 'Z', value: literal['z']! },
      ];
      env.addTemplate(t, {
        runtimeClass: rc,
        podSpec: podSpec(undefined, { env: env_ }),
        podMetadata: { labels: Object.fromEntries(labels), annotations: { ...literal } },
      });
    }
    out.push(synthesizeEnvironment(env));
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

function digest(syntheses: EnvironmentSynthesis[]): string {
  const h = createHash('sha256');
  for (const s of syntheses) for (const f of s.files) h.update(f.path).update('\0').update(f.content).update('\0');
  return h.digest('hex');
}

describe('case synth-determinism: synthesis determinism', () => {
  test('two runs and reversed declaration/iteration orders give byte-identical output', async () => {
    const rel = await release('v0.5.6');
    const first = digest(build(rel, { reverse: false }));
    expect(digest(build(rel, { reverse: false }))).toBe(first);
    expect(digest(build(rel, { reverse: true }))).toBe(first);
  });

  test('env order is kept, keys are sorted, objects ordered by kind/namespace/name', async () => {
    const [one] = build(await release('v0.5.6'), { reverse: true });
    const templates = one!.objects
      .filter((o) => o.object.kind === 'SandboxTemplate')
      .map(
        (o) =>
          o.object as unknown as {
            metadata: { name: string };
            spec: { podTemplate: { spec: { containers: Array<{ env: Array<{ name: string }> }> } } };
          },
      );
    expect(templates.map((t) => t.metadata.name)).toEqual(['alpha', 'beta']);
    expect(templates[0]!.spec.podTemplate.spec.containers[0]!.env.map((e) => e.name)).toEqual(['FEATURES', 'A', 'Z']);
    const text = one!.files.find((f) => f.path === 'one/06-templates.yaml')!.content;
    expect(text.indexOf('cost-center: "42"')).toBeLessThan(text.indexOf('team: agents'));
    expect(text).not.toMatch(/[0-9]{4}-[0-9]{2}-[0-9]{2}T/); // no timestamps
  });

  test('the stream form separates every document with ---', async () => {
    const syntheses = build(await release('v0.5.6'), { reverse: false });
    const objects = syntheses.flatMap((s) => s.objects.map((o) => o.object));
    const stream = yamlStream(objects);
    expect(stream.match(/^---$/gm)).toHaveLength(objects.length);
    expect(stream.startsWith('---\n')).toBe(true);
  });
});
