/**
 * Objects pair by identity whatever the file layout of each side (src/diff/pairing.ts): synth's phase directories
 * (`<env>/NN-<phase>.yaml` beside `environment.json`) against one `cdk8s synth` file, in both directions, and against
 * files named for each environment (`<env>.k8s.yaml`). Real files in a temporary directory, read by readManifestDir.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { diffManifests, readManifestDir } from '../../../src/diff/index.js';

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sandboxes.agents.x-k8s.io
spec:
  group: agents.x-k8s.io
  names: {kind: Sandbox, plural: sandboxes}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;
const namespace = (name: string): string => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;
const configMap = (ns: string, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  k: "${value}"\n`;

/** The phase files of one environment, as synth writes them. */
const phases = (ns: string, value: string): Record<string, string> => ({
  '00-crds.yaml': crd,
  '01-namespaces.yaml': namespace(ns),
  '06-templates.yaml': configMap(ns, value),
});

function dir(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'agentplane-layout-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

/** Synth's layout: one directory per environment, with its descriptor. */
const phaseDirs = (envs: Record<string, [string, string]>): string =>
  dir(
    Object.fromEntries(
      Object.entries(envs).flatMap(([env, [ns, value]]) => [
        [`${env}/environment.json`, '{"apiVersion": "agentplane.dev/v1alpha1", "kind": "Environment"}'],
        ...Object.entries(phases(ns, value)).map(([f, t]) => [`${env}/${f}`, t]),
      ]),
    ),
  );
/** The same objects as one multi-document stream. */
const stream = (ns: string, value: string): string => Object.values(phases(ns, value)).join('---\n');

async function diff(base: string, head: string) {
  return diffManifests(await readManifestDir(base, 'base'), await readManifestDir(head, 'head'));
}

describe('diff pairs objects by identity whatever the file layout', () => {
  const phased = phaseDirs({ 'dev-gvisor': ['dev-sandboxes', '1'] });
  const single = dir({ 'dev.k8s.yaml': stream('dev-sandboxes', '1') });
  const singleChanged = dir({ 'dev.k8s.yaml': stream('dev-sandboxes', '2') });

  it.each([
    ['phase directories -> one cdk8s file', phased, single],
    ['one cdk8s file -> phase directories', single, phased],
  ])('%s: every object unchanged, no risk', async (_, base, head) => {
    const report = await diff(base, head);
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 3 });
    expect(report.risks.map((r) => r.rule)).toEqual([]);
  });

  it.each([
    ['phase directories -> one cdk8s file', phased, singleChanged, ['1', '2']],
    ['one cdk8s file -> phase directories', singleChanged, phased, ['2', '1']],
  ])('%s: a changed field is a change of the paired object', async (_, base, head, [before, after]) => {
    const report = await diff(base, head);
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 2 });
    expect(report.objects.map((o) => [o.key, o.fields])).toEqual([
      ['v1/ConfigMap/dev-sandboxes/settings', [{ path: 'data.k', op: 'changed', before, after }]],
    ]);
  });

  it('files named for the environments pair with those environments, both directions', async () => {
    const envs = phaseDirs({ dev: ['sandboxes', '1'], prod: ['sandboxes', '2'] });
    const files = dir({ 'dev.k8s.yaml': stream('sandboxes', '1'), 'prod.k8s.yaml': stream('sandboxes', '3') });
    for (const [base, head, before, after] of [
      [envs, files, '2', '3'],
      [files, envs, '3', '2'],
    ] as const) {
      const report = await diff(base, head);
      expect(report.counts).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 5 });
      expect(report.objects.map((o) => [o.key, o.fields])).toEqual([
        ['prod:v1/ConfigMap/sandboxes/settings', [{ path: 'data.k', op: 'changed', before, after }]],
      ]);
    }
  });
});
