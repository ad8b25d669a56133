/**
 * Case crd-annotation-too-long, diff side: the diff works from live state, never from the
 * client-side `last-applied-configuration` annotation, which large CRDs applied server-side do not carry and which
 * goes stale whenever anything but `kubectl apply` edits the object.
 */
import { diffManifests } from '../../src/diff/index.js';
import { crdObject, loadRelease, type KubeObject } from '../../src/releases/index.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

describe('case crd-annotation-too-long (diff)', () => {
  let crd: KubeObject;
  beforeAll(async () => {
    crd = crdObject(await loadRelease('v0.5.6'), 'Sandbox');
  });

  it('compares live state: a stale last-applied annotation on an otherwise equal object is no change', () => {
    const live = structuredClone(crd);
    live.metadata = {
      ...live.metadata,
      annotations: {
        ...(live.metadata?.annotations as Record<string, string>),
        [LAST_APPLIED]: JSON.stringify({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'old' },
        }),
      },
    };
    const report = diffManifests({ label: 'live', objects: [live] }, { label: 'dist', objects: [crd] });
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1 });
  });

  it('reports a live edit even when last-applied still equals the desired object', () => {
    const live = structuredClone(crd) as KubeObject & { spec: { versions: Array<{ served: boolean }> } };
    live.spec.versions[1]!.served = false;
    live.metadata = {
      ...live.metadata,
      annotations: {
        ...(live.metadata?.annotations as Record<string, string>),
        [LAST_APPLIED]: '{"note":"would say nothing changed"}',
      },
    };
    const report = diffManifests({ label: 'live', objects: [live] }, { label: 'dist', objects: [crd] });
    expect(report.objects[0]?.fields).toEqual([
      { path: 'spec.versions[name=v1alpha1].served', op: 'changed', before: false, after: true },
    ]);
    expect(report.objects[0]?.unified).not.toContain(LAST_APPLIED);
    expect(report.risks.find((r) => r.rule === 'crd-schema-change')?.details).toEqual([
      'Sandbox v1alpha1: served false -> true',
    ]);
  });
});
