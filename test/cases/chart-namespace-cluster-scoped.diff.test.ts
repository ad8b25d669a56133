/**
 * Case chart-namespace-cluster-scoped, diff half: a cdk8s Chart namespace stamped onto cluster-scoped objects (the
 * RuntimeClass, the four pinned CRDs, the controller ClusterRole/ClusterRoleBinding, the Namespace) is ignored by the
 * API server, so the diff drops it before keying and comparing: no drift, no risk. Namespaced objects keep theirs.
 */
import { jest } from '@jest/globals';
import { ApiObject, Chart } from 'cdk8s';
import { diffManifests, renderText } from '../../src/diff/index.js';
import { AgentSandboxInstall, SandboxRuntimeClass, synthesizeEnvironment } from '../../src/index.js';
import type { KubeObject } from '../../src/releases/index.js';
import { newEnvironment, release } from '../unit/constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const CLUSTER_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Namespace', 'RuntimeClass'];

/** The synthesized reproduction: RuntimeClass and install in a Chart with namespace `sbx`, plus a namespaced ConfigMap. */
async function reproduction(): Promise<KubeObject[]> {
  const rel = await release('v0.5.6');
  const env = newEnvironment(rel, 'env', { install: false });
  const chart = new Chart(env, 'c', { namespace: 'sbx' });
  new SandboxRuntimeClass(chart, 'gvisor', { preset: 'gvisor', allNodes: true });
  new AgentSandboxInstall(chart, 'install', { release: rel });
  new ApiObject(chart, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' } });
  return synthesizeEnvironment(env).objects.map((o) => o.object);
}

/** What cdk8s wrote before the fix: the chart namespace on every cluster-scoped object. */
const stamped = (objects: readonly KubeObject[]): KubeObject[] =>
  objects.map((o) => (CLUSTER_KINDS.includes(o.kind) ? { ...o, metadata: { ...o.metadata, namespace: 'sbx' } } : o));

describe('case chart-namespace-cluster-scoped: the diff never reports namespace drift on cluster-scoped objects', () => {
  let synthesized: KubeObject[];
  beforeAll(async () => {
    synthesized = await reproduction();
  });

  test('the reproduction holds every cluster-scoped kind of the case', () => {
    expect([...new Set(synthesized.filter((o) => CLUSTER_KINDS.includes(o.kind)).map((o) => o.kind))].sort()).toEqual(
      CLUSTER_KINDS,
    );
    expect(synthesized.filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(4);
  });

  test.each([
    ['BASE', true],
    ['HEAD', false],
  ])('a stray namespace on the %s side: no object changed, added or removed, no risk', (_side, onBase) => {
    const withNs = { label: 'stamped', objects: stamped(synthesized) };
    const clean = { label: 'dist', objects: synthesized };
    const report = onBase ? diffManifests(withNs, clean) : diffManifests(clean, withNs);
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: synthesized.length });
    expect(report.risks).toEqual([]);
    expect(renderText(report)).toBe(
      `diff ${report.base} -> ${report.head}: 0 changed, 0 added, 0 removed, ${synthesized.length} unchanged\n`,
    );
  });

  test('a namespaced object whose namespace changed is still one removed and one added', () => {
    const moved = synthesized.map((o) =>
      o.metadata?.name === 'plain' ? { ...o, metadata: { ...o.metadata, namespace: 'other' } } : o,
    );
    const report = diffManifests(
      { label: 'stamped', objects: stamped(synthesized) },
      { label: 'dist', objects: moved },
    );
    expect(report.objects.map((o) => [o.change, o.key])).toEqual([
      ['added', 'v1/ConfigMap/other/plain'],
      ['removed', 'v1/ConfigMap/sbx/plain'],
    ]);
    expect(report.counts.unchanged).toBe(synthesized.length - 1);
  });
});
