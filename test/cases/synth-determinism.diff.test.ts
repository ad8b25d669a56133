/**
 * Case synth-determinism, diff side: map key order and object order never make a change,
 * list order does, multi-document streams separated by `---` are read document by document, and the rendered diff
 * is byte-identical however the inputs were ordered.
 */
import { diffManifests, parseManifests, renderDiff, type ManifestSet } from '../../src/diff/index.js';
import type { KubeObject } from '../../src/releases/index.js';

/** Builds the same objects from a Map and a Set, inserting entries in the given order (as two synth runs on two Node versions might). */
function build(order: 'forward' | 'reverse', env: readonly string[]): KubeObject[] {
  const labelPairs: Array<[string, string]> = [
    ['app.kubernetes.io/name', 'agentplane'],
    ['app.kubernetes.io/version', 'v0.5.6'],
    ['team', 'platform'],
  ];
  const labels = new Map(order === 'forward' ? labelPairs : [...labelPairs].reverse());
  const namespaces = new Set(order === 'forward' ? ['agents', 'tools'] : ['tools', 'agents']);
  const objects: KubeObject[] = [...namespaces].map((ns) => ({
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxTemplate',
    metadata: { name: 'python', namespace: ns, labels: Object.fromEntries(labels) },
    spec: {
      podTemplate: {
        spec: {
          containers: [
            {
              name: 'runtime',
              image: 'img@sha256:' + 'a'.repeat(64),
              env: env.map((name) => ({ name, value: name.toLowerCase() })),
            },
          ],
        },
      },
    },
  }));
  return order === 'forward' ? objects : objects.reverse();
}

const set = (label: string, objects: KubeObject[]): ManifestSet => ({ label, objects });

describe('case synth-determinism (diff)', () => {
  it('two runs with different insertion orders give no change', () => {
    const report = diffManifests(
      set('run-1', build('forward', ['A', 'B'])),
      set('run-2', build('reverse', ['A', 'B'])),
    );
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 2 });
  });

  it('an env order difference is a change, never sorted away', () => {
    const report = diffManifests(
      set('run-1', build('forward', ['A', 'B'])),
      set('run-2', build('forward', ['B', 'A'])),
    );
    expect(report.counts.changed).toBe(2);
    expect(report.objects.every((o) => o.fields.every((f) => f.op === 'moved'))).toBe(true);
  });

  it('renders byte-identical output for inputs that differ only in order', () => {
    for (const format of ['text', 'markdown', 'json'] as const) {
      const a = renderDiff(
        diffManifests(set('base', build('forward', ['A'])), set('head', build('forward', ['A', 'B']))),
        format,
      );
      const b = renderDiff(
        diffManifests(set('base', build('reverse', ['A'])), set('head', build('reverse', ['A', 'B']))),
        format,
      );
      expect(b).toBe(a);
      expect(a).toMatch(/\+\s+- name: B/);
    }
  });

  it('reads a multi-document stream separated by ---, including empty documents', () => {
    const text =
      '---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: agents\n---\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: verifier\n  namespace: agents\n';
    expect(parseManifests('stdout', text).map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual([
      'Namespace/agents',
      'ServiceAccount/verifier',
    ]);
  });
});
