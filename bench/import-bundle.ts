/**
 * The reproduction bundle of case import-release-bundle, shared by its test
 * (test/cases/import-release-bundle.test.ts: what the import produces) and its benchmark (bench/import.ts: how long it
 * takes and how much memory it needs), so the figure is measured on the input the test checks.
 */
import { stringify } from 'yaml';
import type { LoadedRelease, SandboxKind } from '../src/releases/index.js';

/** A small CRD whose `openAPIV3Schema` is open at the top (`x-kubernetes-preserve-unknown-fields: true`, no `spec`). */
export const OPEN_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.com' },
  spec: {
    group: 'example.com',
    names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/**
 * One multi-document YAML text (~820 KB for v0.5.6): a Namespace, ServiceAccount, ClusterRole and Deployment, the
 * four pinned CRD files of `release` as released (`k8s/crds/*.yaml@<tag>`), an empty and a comment-only document
 * between them, a Service, then {@link OPEN_CRD}. Documents are joined with `---\n`.
 */
export function releaseBundle(release: LoadedRelease): string {
  const crd = (kind: SandboxKind): string => release.files.get(release.facts.crds[kind].file)!.toString('utf8');
  return [
    stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'agent-sandbox-system' } }),
    stringify({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'controller', namespace: 'agent-sandbox-system' },
    }),
    stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'controller' },
      rules: [],
    }),
    stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'controller', namespace: 'agent-sandbox-system' },
      spec: { replicas: 1 },
    }),
    crd('Sandbox'),
    crd('SandboxClaim'),
    '',
    crd('SandboxTemplate'),
    '# only a comment in this document\n',
    crd('SandboxWarmPool'),
    stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'webhook', namespace: 'agent-sandbox-system' },
      spec: { ports: [{ port: 443 }] },
    }),
    stringify(OPEN_CRD),
  ].join('---\n');
}
