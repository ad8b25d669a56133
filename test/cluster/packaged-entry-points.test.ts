/**
 * The packed package against the test cluster: `npm pack`, installed into a fresh CommonJS and a fresh ES module
 * project (the newest peers, as the packaging test), each running a fixture that loads /adapter, /verify and /diff its
 * own way (import() from CommonJS, import from the ES module) and uses them on the cluster with its kubeconfig file:
 * the adapter's capabilities and one session's lifecycle on a SandboxTemplate made here, a live diff through a reader
 * on the adapter's client, the compatibility worksheet, and a report stored in a ConfigMap and read back (and one
 * that is not there). Needs the npm registry (or a warm npm cache).
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { stringify } from 'yaml';
import { buildIfStale, FIXTURE, freshProject, jsonOf, pack, pkg } from '../packaging/project.js';
import { connect, freshNamespace, sandboxdPodTemplate, type Cluster } from './helpers.js';

jest.setTimeout(10 * 60_000);

const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };
const TEMPLATE = {
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxTemplate',
  metadata: { name: 'sbx' },
  spec: { podTemplate: sandboxdPodTemplate(), networkPolicyManagement: 'Unmanaged' },
};
const POOL = {
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxWarmPool',
  metadata: { name: 'pool' },
  spec: { replicas: 1, sandboxTemplateRef: { name: 'sbx' } },
};

/** A v0.5.6 environment descriptor declaring the template made here and no router. */
function descriptor(namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'agentplane.dev/v1alpha1',
    kind: 'EnvironmentDescriptor',
    name: 'packaged',
    release: {
      tag: 'v0.5.6',
      commit: '211b7579cabed9460c1a692eb687084ff4c5879d',
      family: 'v0.5',
      apiVersions: { Sandbox: 'agents.x-k8s.io/v1beta1' },
    },
    install: {
      namespace: 'agent-sandbox-system',
      controllerDeployment: 'agent-sandbox-controller',
      controllerImage: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
      extensions: true,
      certificates: 'external',
      serverSideApply: [],
    },
    runtimeClasses: [],
    templates: [
      {
        namespace,
        name: 'sbx',
        runtimeClassName: '',
        networkPolicyManagement: 'Unmanaged',
        podLabels: { app: 'smoke' },
        runtime: { kind: 'sandboxd', container: 'sandboxd', ports: [8080, 9090] },
        images: [{ container: 'sandboxd', image: 'sandboxd:v0.5.6' }],
      },
    ],
    warmPools: [],
    claims: [],
    router: null,
    networkPolicies: [],
    images: {},
    capabilities: [{ capability: 'sandbox-api', required: 'verified' }],
  };
}

let c: Cluster;
let ns: string;
let work: string;
let tarball: string;
let args: Record<string, unknown>;

beforeAll(async () => {
  buildIfStale();
  work = mkdtempSync(join(tmpdir(), 'agentplane-packaged-live-'));
  tarball = pack(work).tarball;
  c = connect();
  ns = await freshNamespace(c, 'packaged');
  for (const [plural, body] of [
    ['sandboxtemplates', TEMPLATE],
    ['sandboxwarmpools', POOL],
  ] as const)
    await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural, body });
  writeFileSync(join(work, 'environment.json'), JSON.stringify(descriptor(ns)));
  // The desired objects: the template with one label more than the cluster holds, the pool as it is.
  const desired = [
    { ...TEMPLATE, metadata: { ...TEMPLATE.metadata, namespace: ns, labels: { tier: 'packaged' } } },
    { ...POOL, metadata: { ...POOL.metadata, namespace: ns } },
  ]
    .map((o) => stringify(o))
    .join('---\n');
  args = {
    kubeconfig: c.info.kubeconfig,
    context: 'agentplane-test',
    namespace: ns,
    environmentDir: work,
    desired,
  };
});

afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A fresh project with the tarball, the newest peers and the Kubernetes client the fixture's diff reader uses. */
function project(name: string, extra: Record<string, unknown>): string {
  const dir = freshProject(work, tarball, {
    name,
    extra,
    more: { '@kubernetes/client-node': pkg.devDependencies['@kubernetes/client-node']! },
  });
  copyFileSync(join(FIXTURE, 'cluster-run.mjs'), join(dir, 'cluster-run.mjs'));
  return dir;
}

/** The fixture's JSON line: the values the cluster gave, the same from either module system. */
async function expectLive(out: Record<string, unknown>, reportName: string): Promise<void> {
  expect(out).toEqual({
    required: 'function',
    // v0.5.6 serves v1beta1 and v1alpha1 of both groups and converts through the webhook with the run's CA
    capabilities: [
      ['sandbox-api', 'compatible', 'VersionServed'],
      ['extensions-api', 'compatible', 'VersionServed'],
      ['conversion', 'compatible', 'ConversionWebhookReady'],
    ],
    session: {
      via: 'claim',
      namespace: ns,
      uid: true,
      ready: ['Ready', 'Ready'],
      podIP: expect.stringMatching(new RegExp(`^127\\.${c.info.podNet}\\.`)),
      terminated: 'deleted',
      after: ['Gone', 'ObjectNotFound'],
    },
    // the label the desired template adds, nothing else: server defaults and status cancel out
    diff: {
      counts: { added: 0, removed: 0, changed: 1, unchanged: 1 },
      changed: [['changed', 'SandboxTemplate', 'sbx', ['metadata.labels']]],
      unreadable: 0,
    },
    worksheet: {
      release: 'v0.5.6',
      rows: [
        ['kubernetes', 'v1.36.3', 'yes'],
        ['crdRelease', 'v0.5.6', 'yes'],
        ['controller', 'out-of-cluster (assumed v0.5.6, the pinned release)', 'yes'],
        ['extensions', 'v0.5.6', 'yes'],
        ['router', 'not deployed', 'not deployed'],
        ['runtimeServer', 'sandboxd (sandboxd:v0.5.6)', 'yes'],
        ['clientSdk', `${pkg.name} ${pkg.version}`, 'n/a'],
        // kwok's nodes report kwok; the real node, when it runs, its containerd as well
        ['containerRuntime', c.info.realNode ? expect.stringContaining('kwok-0.8.0') : 'kwok-0.8.0', 'yes'],
        ['cni', 'unknown', 'n/a'],
      ],
      unknownParts: [],
      failedReads: 0,
    },
    // no probe ran: the requirement stays unmet, the next evidence named by its code
    stored: {
      written: 'ok',
      run: 'packaged',
      exitCode: 3,
      outcome: 'not-verified',
      capabilities: [['sandbox-api', 'absent', 'verified', false, 'NoEvidence']],
      sameTuple: true,
    },
    missing: {
      typed: true,
      reason: 'StoredReportUnusable',
      category: 'not-found',
      configMap: `${ns}/${reportName}-absent`,
    },
  });
  // The report ConfigMap as the API server holds it.
  const cm = await c.core.readNamespacedConfigMap({ namespace: ns, name: reportName });
  expect(cm.metadata?.annotations).toMatchObject({
    'agentplane.dev/run': 'packaged',
    'agentplane.dev/release': 'v0.5.6',
    'agentplane.dev/exit-code': '3',
  });
  expect(cm.metadata?.labels).toMatchObject({
    'agentplane.dev/environment': 'packaged',
    'agentplane.dev/outcome': 'not-verified',
  });
  // The terminated session's claim is gone from the API server, not only from the adapter's view.
  const claims = (await c.custom.listNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxclaims',
    labelSelector: 'agentplane.dev/test=packaged',
  })) as { items: unknown[] };
  expect(claims.items).toEqual([]);
}

test('CommonJS project: /adapter, /verify and /diff loaded with import() and used against the cluster', async () => {
  const dir = project('cjs-live', {});
  copyFileSync(join(FIXTURE, 'cluster.cjs'), join(dir, 'cluster.cjs'));
  await expectLive(jsonOf(dir, ['cluster.cjs', JSON.stringify({ ...args, reportName: 'report-cjs' })]), 'report-cjs');
});

test('ES module project: /adapter, /verify and /diff imported and used against the cluster', async () => {
  const dir = project('esm-live', { type: 'module' });
  copyFileSync(join(FIXTURE, 'cluster.mjs'), join(dir, 'cluster.mjs'));
  await expectLive(jsonOf(dir, ['cluster.mjs', JSON.stringify({ ...args, reportName: 'report-esm' })]), 'report-esm');
});
