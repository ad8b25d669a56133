/** Scope for the diff: a cluster-scoped object's stray namespace is dropped before keying; namespaced and unknown kinds keep theirs. */
import {
  clusterScopedBy,
  diffManifests,
  scopeLookupFromObjects,
  scopeLookupFromRelease,
  withoutClusterNamespaces,
} from '../../../src/diff/index.js';
import { crdObject, loadRelease, type KubeObject } from '../../../src/releases/index.js';

const quotaCrd = (scope: 'Cluster' | 'Namespaced'): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'tenantquotas.platform.example.com' },
  spec: {
    group: 'platform.example.com',
    scope,
    names: { kind: 'TenantQuota', plural: 'tenantquotas' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});
const quota = (namespace?: string): KubeObject => ({
  apiVersion: 'platform.example.com/v1',
  kind: 'TenantQuota',
  metadata: { name: 'team-a', ...(namespace ? { namespace } : {}) },
  spec: { sandboxes: 10 },
});

describe('diff scope', () => {
  it('a custom kind known as cluster-scoped only from a CRD in the HEAD set: its stray BASE namespace is no drift', () => {
    const report = diffManifests(
      { label: 'base', objects: [quota('sbx')] },
      { label: 'head', objects: [quotaCrd('Cluster'), quota()] },
    );
    expect(report.objects.map((o) => `${o.change} ${o.key}`)).toEqual([
      'added apiextensions.k8s.io/v1/CustomResourceDefinition//tenantquotas.platform.example.com',
    ]);
    expect(report.counts.unchanged).toBe(1);
  });

  it('the same kind declared Namespaced (or not declared at all) keeps its namespace: one removed, one added', () => {
    for (const crds of [[quotaCrd('Namespaced')], []]) {
      const report = diffManifests(
        { label: 'base', objects: [...crds, quota('sbx')] },
        { label: 'head', objects: [...crds, quota()] },
      );
      expect(report.objects.map((o) => `${o.change} ${o.key}`)).toEqual([
        'added platform.example.com/v1/TenantQuota//team-a',
        'removed platform.example.com/v1/TenantQuota/sbx/team-a',
      ]);
    }
  });

  it('a core cluster-scoped kind whose only change is a stray namespace is unchanged, and a real change on it still shows', () => {
    const rc = (handler: string, namespace?: string): KubeObject => ({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'gvisor', ...(namespace ? { namespace } : {}) },
      handler,
    });
    const quiet = diffManifests(
      { label: 'base', objects: [rc('runsc', 'sbx')] },
      { label: 'head', objects: [rc('runsc')] },
    );
    expect([quiet.counts, quiet.risks]).toEqual([{ added: 0, removed: 0, changed: 0, unchanged: 1 }, []]);
    const changed = diffManifests(
      { label: 'base', objects: [rc('runsc', 'sbx')] },
      { label: 'head', objects: [rc('runc')] },
    );
    expect(changed.objects.map((o) => [o.key, o.change, o.fields.map((f) => f.path)])).toEqual([
      ['node.k8s.io/v1/RuntimeClass//gvisor', 'changed', ['handler']],
    ]);
    expect(changed.risks.map((r) => [r.rule, r.details])).toEqual([
      ['runtimeclass-change', ['handler: "runsc" -> "runc"']],
    ]);
  });

  it('withoutClusterNamespaces copies only the objects it changes, and returns the same array when nothing is dropped', () => {
    const scoped = clusterScopedBy(scopeLookupFromObjects([quotaCrd('Cluster')]));
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'sbx' } };
    const input = [cm, quota('sbx')];
    const out = withoutClusterNamespaces(input, scoped);
    expect(out[0]).toBe(cm);
    expect(out[1]).toEqual(quota());
    expect(input[1]).toEqual(quota('sbx'));
    expect(withoutClusterNamespaces([cm, quota()], scoped)).toEqual([cm, quota()]);
    const same = [cm];
    expect(withoutClusterNamespaces(same, scoped)).toBe(same);
  });

  it('the pinned release gives the scope of the Agent Sandbox kinds (v0.5.6: all Namespaced) and agrees with its CRD objects', async () => {
    const rel = await loadRelease('v0.5.6');
    const fromRelease = scopeLookupFromRelease(rel);
    const fromCrds = scopeLookupFromObjects(
      (['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'] as const).map((k) => crdObject(rel, k)),
    );
    for (const [apiVersion, kind] of [
      ['agents.x-k8s.io/v1beta1', 'Sandbox'],
      ['extensions.agents.x-k8s.io/v1alpha1', 'SandboxWarmPool'],
    ] as const) {
      expect([fromRelease(apiVersion, kind), fromCrds(apiVersion, kind)]).toEqual([false, false]);
    }
    expect(fromRelease('node.k8s.io/v1', 'RuntimeClass')).toBeUndefined();
    const sandbox = (namespace: string): KubeObject => ({
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name: 'dev', namespace },
      spec: { podTemplate: { spec: { containers: [{ name: 'c', image: 'img:v1' }] } } },
    });
    const report = diffManifests(
      { label: 'base', objects: [sandbox('a')] },
      { label: 'head', objects: [sandbox('b')] },
      { scopeFor: fromRelease },
    );
    expect(report.counts).toEqual({ added: 1, removed: 1, changed: 0, unchanged: 0 });
  });
});
