/**
 * Fixture for case storedversions-upgrade-path: "a release that serves only v1beta1". No pinned release does, so it is
 * v0.5.6's pinned facts and CRDs with v1alpha1 removed from every CRD, tagged v0.6.0. Used by the unit and cluster
 * halves of the case.
 */
import {
  releaseFacts,
  type KubeObject,
  type LoadedRelease,
  type ReleaseFacts,
  type ReleaseTag,
} from '../../src/releases/index.js';

export function betaOnlyRelease(r056: LoadedRelease): LoadedRelease {
  const facts = releaseFacts('v0.5.6');
  const crds = Object.fromEntries(
    Object.entries(facts.crds).map(([kind, crd]) => [
      kind,
      { ...crd, versions: crd.versions.filter((v) => v.name !== 'v1alpha1') },
    ]),
  );
  const objects = new Map(
    [...r056.objects].map(([file, docs]) => [
      file,
      docs.map((d) =>
        d.kind !== 'CustomResourceDefinition'
          ? d
          : ({
              ...d,
              spec: {
                ...(d.spec as object),
                versions: (d.spec as { versions: Array<{ name: string }> }).versions.filter(
                  (v) => v.name !== 'v1alpha1',
                ),
              },
            } as KubeObject),
      ),
    ]),
  );
  return {
    ...r056,
    facts: { ...facts, tag: 'v0.6.0' as ReleaseTag, crds: crds as unknown as ReleaseFacts['crds'] },
    objects,
  };
}
