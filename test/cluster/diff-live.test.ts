/**
 * Issue 5 live parts on the real test cluster (v0.5.6): `agentplane diff --live` compares live objects with a
 * server-side dry run of the synthesized ones (no drift right after an apply, a real change and a changed Secret
 * reported with the value redacted), and `agentplane plan-upgrade --kubeconfig` reads live storedVersions.
 * Runs the CLI as a user would (node bin/agentplane.js).
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { connect, freshNamespace, type Cluster } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SECRET_V1 = 'contract-token-one-4f1c';
const SECRET_V2 = 'contract-token-two-9b2e';
let c: Cluster;
let ns: string;

function desired(replicas: number, token: string): Array<Record<string, unknown>> {
  const meta = (name: string): Record<string, unknown> => ({
    name,
    namespace: ns,
    labels: { 'app.kubernetes.io/managed-by': 'agentplane' },
  });
  return [
    {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      metadata: meta('difflive'),
      spec: {
        podTemplate: {
          spec: {
            containers: [
              {
                name: 'main',
                image: 'registry.k8s.io/pause:3.10',
                env: [
                  { name: 'B', value: '2' },
                  { name: 'A', value: '1' },
                ],
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: meta('difflive'),
      spec: { replicas, sandboxTemplateRef: { name: 'difflive' } },
    },
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('difflive'), type: 'Opaque', stringData: { token } },
  ];
}

function writeDir(objects: Array<Record<string, unknown>>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-difflive-'));
  writeFileSync(path.join(dir, 'env.yaml'), objects.map((o) => `---\n${stringify(o)}`).join(''));
  return dir;
}

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/agentplane.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'difflive');
  const api = k8s.KubernetesObjectApi.makeApiClient(c.kc);
  for (const o of desired(0, SECRET_V1))
    await api.patch(
      o as k8s.KubernetesObject,
      undefined,
      undefined,
      'agentplane',
      true,
      k8s.PatchStrategy.ServerSideApply,
    );
}, 60_000);

afterAll(async () => {
  await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

test('diff --live right after applying: no change (server defaults, status, managedFields and controller labels cancel out)', () => {
  const r = cli('diff', '--live', writeDir(desired(0, SECRET_V1)), '--kubeconfig', c.info.kubeconfig, '-o', 'json');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(JSON.parse(r.stdout).counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 3 });
}, 120_000);

test('objects the cluster refuses (missing namespace, a 422) are named on stderr and left out; the rest is compared; exit 4', () => {
  const refused = [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'orphan', namespace: `${ns}-missing` }, data: { a: '1' } },
    {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'broken', namespace: ns },
      spec: { replicas: -1, sandboxTemplateRef: { name: 'difflive' } },
    },
  ];
  const r = cli(
    'diff',
    '--live',
    writeDir([...desired(0, SECRET_V1), ...refused]),
    '--kubeconfig',
    c.info.kubeconfig,
    '-o',
    'json',
  );
  expect(r.status).toBe(4);
  expect(JSON.parse(r.stdout).counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 3 });
  const lines = r.stderr.trim().split('\n');
  expect(lines.filter((l) => l.startsWith('error [LiveObjectRefused]: not compared: '))).toEqual([
    expect.stringMatching(
      new RegExp(
        `^error \\[LiveObjectRefused\\]: not compared: server-side dry run of ConfigMap ${ns}-missing/orphan: .*not found`,
      ),
    ),
    expect.stringMatching(
      new RegExp(
        `^error \\[LiveObjectRefused\\]: not compared: server-side dry run of SandboxWarmPool ${ns}/broken: .*replicas`,
      ),
    ),
  ]);
  expect(lines.filter((l) => l.startsWith('hint: '))).toHaveLength(2);
}, 120_000);

test('diff --live reports a changed pool and a changed Secret, exit 1, and never prints the Secret value', () => {
  const r = cli('diff', '--live', writeDir(desired(2, SECRET_V2)), '--kubeconfig', c.info.kubeconfig, '-o', 'json');
  expect(r.status).toBe(1);
  const report = JSON.parse(r.stdout) as {
    objects: Array<{ kind: string; fields: Array<{ path: string; before: unknown; after: unknown }> }>;
    risks: Array<{ rule: string }>;
  };
  expect(report.objects.map((o) => [o.kind, o.fields.map((f) => [f.path, f.before, f.after])])).toEqual([
    ['SandboxWarmPool', [['spec.replicas', 0, 2]]],
    ['Secret', [['data.token', '(redacted: old value)', '(redacted: new value)']]],
  ]);
  expect(report.risks.map((x) => x.rule)).toEqual(['secret-change']);
  for (const leaked of [
    SECRET_V1,
    SECRET_V2,
    Buffer.from(SECRET_V1).toString('base64'),
    Buffer.from(SECRET_V2).toString('base64'),
  ]) {
    expect(r.stdout + r.stderr).not.toContain(leaked);
  }
}, 120_000);

test('plan-upgrade --kubeconfig reads live storedVersions: to v0.4.6 is blocked (v1beta1 is stored, exit 11), to v0.5.6 is safe (exit 0)', () => {
  const down = cli(
    'plan-upgrade',
    '--to',
    'v0.4.6',
    '--from',
    'v0.5.6',
    '--kubeconfig',
    c.info.kubeconfig,
    '-o',
    'json',
  );
  expect(down.status).toBe(11);
  const plan = JSON.parse(down.stdout) as {
    verdict: string;
    storedVersionsSource: string;
    findings: Array<{ severity: string; reason: string; subject?: Record<string, unknown> }>;
  };
  expect(plan.verdict).toBe('blocked');
  expect(plan.storedVersionsSource).toMatch(/^live \(context /);
  expect(plan.findings.filter((f) => f.severity === 'block').map((f) => [f.reason, f.subject])).toContainEqual([
    'StoredVersionNotServed',
    expect.objectContaining({ kind: 'SandboxClaim', storedVersions: ['v1beta1'], served: ['v1alpha1'] }),
  ]);
  const same = cli(
    'plan-upgrade',
    '--to',
    'v0.5.6',
    '--from',
    'v0.5.6',
    '--kubeconfig',
    c.info.kubeconfig,
    '-o',
    'json',
  );
  expect(same.status).toBe(0);
  expect((JSON.parse(same.stdout) as { verdict: string }).verdict).toBe('safe');
}, 120_000);
