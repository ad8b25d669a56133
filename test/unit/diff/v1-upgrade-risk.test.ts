/**
 * `agentplane diff` between the v0.5.6 and the v1.0.3 synthesis of the same environment: each Agent Sandbox CRD
 * drops v1alpha1 and its conversion webhook (`k8s/crds/*.yaml@v1.0.3`), and both are labelled breaking.
 */
import { diffManifests } from '../../../src/diff/index.js';
import type { KubeObject } from '../../../src/releases/index.js';
import { newEnvironment, objectsOf, release } from '../constructs/fixture.js';

const synth = async (tag: 'v0.5.6' | 'v1.0.3'): Promise<KubeObject[]> =>
  objectsOf(newEnvironment(await release(tag))) as KubeObject[];

test('v0.5.6 -> v1.0.3: every CRD loses v1alpha1 and the conversion webhook, both labelled breaking', async () => {
  const [base, head] = await Promise.all([synth('v0.5.6'), synth('v1.0.3')]);
  const report = diffManifests({ label: 'v0.5.6', objects: base }, { label: 'v1.0.3', objects: head });
  const crds = report.risks.filter((r) => r.rule === 'crd-schema-change');
  expect(crds.map((r) => [r.subject?.kind, r.subject?.unserved, r.subject?.breaking])).toEqual(
    [
      ['SandboxClaim', 'extensions.agents.x-k8s.io'],
      ['Sandbox', 'agents.x-k8s.io'],
      ['SandboxTemplate', 'extensions.agents.x-k8s.io'],
      ['SandboxWarmPool', 'extensions.agents.x-k8s.io'],
    ].map(([kind, group]) => [kind, [`${group}/v1alpha1`], ['version-unserved', 'conversion-removed']]),
  );
  // the reverse move adds them back: nothing breaking about that
  const back = diffManifests({ label: 'v1.0.3', objects: head }, { label: 'v0.5.6', objects: base });
  expect(back.risks.filter((r) => r.rule === 'crd-schema-change').map((r) => r.subject?.breaking)).toEqual([
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});
