/**
 * `agentplane compat --controller external` as a real process against the test cluster, whose controller is the
 * harness's local process: it matches the committed matrix's `agent-sandbox-controller v0.5.6 (local process)` row,
 * and a part the environment does not deploy (here: no router) is `not deployed`, not a gap, so the exit is 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ErrorDocumentSchema } from '../../src/cli/error-document-schema.js';
import { writeKubeconfig } from './adapter/kube-env.js';
import { connect, freshNamespace } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A v0.5.6 descriptor with one sandboxd template and no router (the worksheet reads only what it declares). */
function envDir(): string {
  const d = {
    apiVersion: 'agentplane.dev/v1alpha1',
    kind: 'EnvironmentDescriptor',
    name: 'compat-cli',
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
        namespace: 'compat-cli',
        name: 'shell',
        runtimeClassName: '',
        networkPolicyManagement: 'Managed',
        podLabels: { app: 'sandbox' },
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
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-compat-'));
  writeFileSync(path.join(dir, 'environment.json'), JSON.stringify(d));
  return dir;
}

test('out-of-cluster controller of the pinned release is covered; no router is "not deployed"; exit 0', () => {
  const c = connect();
  const r = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'compat',
      '--env',
      envDir(),
      '--kubeconfig',
      c.info.kubeconfig,
      '--controller',
      'external',
      '-o',
      'json',
    ],
    { encoding: 'utf8', cwd: ROOT, timeout: 60_000 },
  );
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout) as { release: string; rows: Array<{ part: string; live: string; tested: string }> };
  expect(out.release).toBe('v0.5.6');
  expect(out.rows.map((row) => [row.part, row.tested])).toEqual([
    ['kubernetes', 'yes'],
    ['crdRelease', 'yes'],
    ['controller', 'yes'],
    ['extensions', 'yes'],
    ['router', 'not deployed'],
    ['runtimeServer', 'yes'],
    ['clientSdk', 'n/a'],
    ['containerRuntime', 'yes'],
    ['cni', 'n/a'],
  ]);
  expect(out.rows.find((row) => row.part === 'controller')!.live).toBe(
    'out-of-cluster (assumed v0.5.6, the pinned release)',
  );
  // The real node's runtime as its kubelet reports it; its CNI (kube-router, a local process here) shows in no
  // DaemonSet and no node annotation: unknown, never guessed.
  const live = (part: string) => out.rows.find((row) => row.part === part)!.live;
  const runtimes = live('containerRuntime').split(', ');
  if (c.info.realNode) expect(runtimes).toEqual(expect.arrayContaining([expect.stringMatching(/^containerd:\/\/2\./)]));
  expect(live('cni')).toBe('unknown');
  expect(r.status).toBe(0);
}, 90_000);

function compat(kubeconfig: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin/agentplane.js'), 'compat', '--env', envDir(), '--kubeconfig', kubeconfig, '-o', 'json'],
    { encoding: 'utf8', cwd: ROOT, timeout: 60_000 },
  );
}

test('credentials refused (401): exit 8 before any worksheet, naming the user and never the token', () => {
  const c = connect();
  const token = 'not-a-valid-token-compat-7c1e';
  const r = compat(writeKubeconfig(c.info, 'ci', { token }));
  // -o json: no worksheet, the error document instead (src/cli/error-document.ts)
  expect(ErrorDocumentSchema.parse(JSON.parse(r.stdout))).toMatchObject({
    kind: 'Error',
    command: 'compat',
    reason: 'CredentialsRejected',
    exitCode: 8,
    details: { category: 'unauthenticated', commandReason: 'ClusterUnusable' },
  });
  expect(r.stdout).not.toContain(token);
  expect(r.stderr).toMatch(
    /^error \[CredentialsRejected\]: cannot use the cluster for the worksheet: the API server rejected the credentials of user "ci" \(context "ctx"\)/,
  );
  expect(r.stderr).toMatch(/\nhint: .+\n$/);
  expect(r.stderr).not.toContain(token);
  expect(r.status).toBe(8);
}, 90_000);

test('a ServiceAccount with no rights (403): the worksheet of what could be read, each refused read named, exit 9', async () => {
  const c = connect();
  const ns = await freshNamespace(c, 'compat-cli-403');
  try {
    await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'nobody' } } });
    const tr = await c.core.createNamespacedServiceAccountToken({
      namespace: ns,
      name: 'nobody',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const r = compat(writeKubeconfig(c.info, 'nobody-user', { token: tr.status!.token }));
    const out = JSON.parse(r.stdout) as {
      rows: Array<{ part: string; live: string }>;
      failedReads: Array<{ call: string; category: string }>;
    };
    // /version needs no grant; everything else the worksheet reads is refused.
    expect(out.rows.find((row) => row.part === 'kubernetes')!.live).toMatch(/^v1\.\d+\.\d+/);
    // sorted by call: the reads run concurrently
    expect(out.failedReads).toEqual(
      [
        'crd sandboxclaims.extensions.agents.x-k8s.io',
        'crd sandboxes.agents.x-k8s.io',
        'daemonSets kube-system',
        'deployment agent-sandbox-system agent-sandbox-controller',
        'nodes',
      ].map((call) => ({ call, category: 'forbidden', message: expect.any(String) })),
    );
    const lines = r.stderr.split('\n');
    expect(lines[0]).toBe(
      'error [ClusterReadsFailed]: the worksheet is incomplete: 5 cluster read(s) failed, leaving crdRelease, controller, extensions, containerRuntime, cni unknown:',
    );
    expect(lines[2]).toMatch(
      /^  crd sandboxes\.agents\.x-k8s\.io: forbidden: user "nobody-user" \(context "ctx"\) may not get customresourcedefinitions\.apiextensions\.k8s\.io/,
    );
    expect(lines[5]).toMatch(/^  nodes: forbidden: .* may not list nodes/);
    expect(lines.slice(6)).toEqual([
      'hint: grant that identity the reads named above (the VerifierAccess construct grants every read compat makes) or use a --context that has them',
      '',
    ]);
    expect(r.status).toBe(9);
  } finally {
    await c.core.deleteNamespace({ name: ns });
  }
}, 90_000);
