/**
 * `agentplane synth` run as a real process (node + tsx, like bin/agentplane.js), against the shared mirror or a
 * corrupted copy of it.
 */
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { MIRROR } from '../constructs/fixture.js';
import { sha256 } from './helpers.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const ROOT = process.cwd();
const DEV = resolve(ROOT, 'examples/dev-gvisor/environment.ts');

function run(
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', resolve(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', AGENTPLANE_MIRROR: MIRROR, ...env },
    timeout: 120_000,
    maxBuffer: 64 << 20, // two environments on --stdout are ~1.7 MB; the 1 MiB default would kill the child
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function tmp(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `agentplane-cli-${prefix}-`));
}

describe('agentplane synth', () => {
  test('--all-examples writes every example environment, reports them and leaves the committed locks unchanged', () => {
    const out = tmp('out');
    const cache = tmp('cache');
    const r = run(['--cache-dir', cache, 'synth', '--all-examples', '--out', out, '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      environments: Array<{ environment: string; lock: { outcome: string }; notes: string[] }>;
    };
    expect(report.environments.map((e) => [e.environment, e.lock.outcome])).toEqual([
      ['dev-gvisor', 'unchanged'],
      ['dev-python-client', 'unchanged'],
      ['prod-kata', 'unchanged'],
    ]);
    expect(report.environments[0]!.notes[0]).toMatch(
      /sandboxes.agents.x-k8s.io, sandboxtemplates.extensions.agents.x-k8s.io: .*ServerSideApply=true; apply the files of dev-gvisor\/ with kubectl apply --server-side/,
    );
    expect(readdirSync(join(out, 'prod-kata')).sort()).toEqual([
      '00-crds.yaml',
      '01-namespaces.yaml',
      '02-rbac.yaml',
      '03-controller.yaml',
      '04-runtime-classes.yaml',
      '05-policies.yaml',
      '06-templates.yaml',
      '07-warm-pools.yaml',
      '10-environment.yaml',
      '11-verify.yaml',
      'environment.json',
    ]);
  }, 180_000);

  test('--stdout twice gives identical bytes, every document starts with ---', () => {
    const cache = tmp('cache');
    const a = run(['--cache-dir', cache, 'synth', DEV, '--stdout']);
    const b = run(['--cache-dir', tmp('cache2'), 'synth', DEV, '--stdout', '-o', 'yaml']);
    expect(a.code).toBe(0);
    expect(sha256(a.stdout)).toBe(sha256(b.stdout));
    expect(a.stdout.startsWith('---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n')).toBe(
      true,
    );
    const docs = a.stdout.split(/^---\n/m).slice(1);
    expect(docs).toHaveLength(29);
    expect(docs.every((d) => d.startsWith('apiVersion: '))).toBe(true);
    expect(a.stderr).toMatch(/^note: dev-gvisor: .*ServerSideApply=true/m);
  }, 180_000);

  test('--stdout: stdout holds YAML objects only; the notes go to stderr and speak of the stream, never of files', () => {
    const r = run(['--cache-dir', tmp('cache'), 'synth', '--all-examples', '--stdout']);
    expect(r.code).toBe(0);
    const docs = parseAllDocuments(r.stdout);
    expect(docs.flatMap((d) => [...d.errors, ...d.warnings])).toEqual([]);
    const objects = docs.map((d) => d.toJS() as unknown);
    // dev-gvisor 29 + dev-python-client 25 (allow-all and no Pod-IP cache: no tokenreview binding, no pods ClusterRole
    // or its binding), both v0.5.6, + prod-kata 30 (v1.0.3: no webhook Service, Role or RoleBinding)
    expect(objects).toHaveLength(84);
    for (const o of objects) {
      expect(o).toEqual(
        expect.objectContaining({
          apiVersion: expect.any(String),
          kind: expect.any(String),
          metadata: expect.objectContaining({ name: expect.any(String) }),
        }),
      );
    }
    const order =
      'the stream holds CRDs and objects of their kinds: apply it in one go (kubectl apply --server-side -f -) only to a cluster that already has these CRDs established; ' +
      'on a fresh cluster write the phase files instead (agentplane synth without --stdout) and apply them in file order';
    const ssa =
      'sandboxes.agents.x-k8s.io, sandboxtemplates.extensions.agents.x-k8s.io: pinned manifests larger than 256 KiB, annotated argocd.argoproj.io/sync-options: ServerSideApply=true; ' +
      'apply them with kubectl apply --server-side (client-side apply keeps a copy of each object in an annotation limited to 256 KiB)';
    const dnsTargets =
      'pods kube-system/k8s-app=kube-dns, 169.254.20.10/32 (node-local cache), 10.96.0.10/32 (DNS Service IP) on UDP+TCP 53';
    expect(r.stderr.split('\n')).toEqual([
      `note: dev-gvisor: ${order}`,
      `note: dev-gvisor: ${ssa}`,
      `note: dev-python-client: ${order}`,
      `note: dev-python-client: ${ssa}`,
      // v1.0.3's CRDs are under 256 KiB (no v1alpha1 schema): no server-side-apply note
      `note: prod-kata: ${order}`,
      // each NetworkPolicy's DNS targets, printed (case netpol-dns-nodelocal)
      `note: prod-kata: NetworkPolicy sandboxes/agent-sandbox-policy admits DNS to ${dnsTargets}`,
      `note: prod-kata: NetworkPolicy sandboxes/shell-sandbox-policy admits DNS to ${dnsTargets}`,
      '',
    ]);
    expect(r.stderr).not.toMatch(/apply the files/);

    const j = run(['--cache-dir', tmp('cache'), 'synth', DEV, '--stdout', '-o', 'json']);
    expect(j.code).toBe(0);
    const list = JSON.parse(j.stdout) as { apiVersion: string; kind: string; items: unknown[] };
    expect([list.apiVersion, list.kind, list.items.length]).toEqual(['v1', 'List', 29]);
    expect(j.stderr).toBe(`note: dev-gvisor: ${order}\nnote: dev-gvisor: ${ssa}\n`);
  }, 180_000);

  test('one flipped byte in a mirrored file stops synthesis with exit 3, naming the file and both hashes', () => {
    const mirror = tmp('mirror');
    cpSync(join(MIRROR, 'v0.5.6'), join(mirror, 'v0.5.6'), { recursive: true });
    const file = join(mirror, 'v0.5.6/k8s/crds/extensions.agents.x-k8s.io_sandboxwarmpools.yaml');
    const bytes = readFileSync(file);
    bytes[100] = bytes[100]! ^ 0x01;
    writeFileSync(file, bytes);
    const out = tmp('out');
    const r = run(['--mirror', mirror, '--cache-dir', tmp('cache'), 'synth', DEV, '--out', out]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('checksum mismatch for k8s/crds/extensions.agents.x-k8s.io_sandboxwarmpools.yaml');
    expect(r.stderr).toContain(`got ${sha256(bytes)}`);
    expect(existsSync(join(out, 'dev-gvisor'))).toBe(false);
  }, 180_000);

  test('a lock that disagrees stops with exit 5 and the difference; --update-lock rewrites it', () => {
    const dir = tmp('lock');
    const lock = join(dir, 'agentplane.lock.json');
    const original = JSON.parse(readFileSync(resolve(ROOT, 'examples/dev-gvisor/agentplane.lock.json'), 'utf8')) as {
      images: Record<string, string>;
    };
    original.images['dev-gvisor/controller'] = 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.0';
    writeFileSync(lock, JSON.stringify(original));
    const cache = tmp('cache');
    const r = run(['--cache-dir', cache, 'synth', DEV, '--lock', lock, '--out', tmp('out')]);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/dev-gvisor\/controller/);
    expect(r.stderr).toContain('agent-sandbox-controller:v0.5.0');
    const u = run([
      '--cache-dir',
      cache,
      'synth',
      DEV,
      '--lock',
      lock,
      '--update-lock',
      '--out',
      tmp('out'),
      '-o',
      'json',
    ]);
    expect(u.code).toBe(0);
    expect(JSON.parse(readFileSync(lock, 'utf8')).images['dev-gvisor/controller']).toBe(
      'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
    );
  }, 180_000);

  test('usage errors exit 2; a module without defineEnvironments exits 4', () => {
    expect(run(['synth']).code).toBe(2);
    expect(run(['synth', DEV, '--stdout', '-o', 'table']).code).toBe(2);
    const bad = join(tmp('mod'), 'environment.mjs');
    writeFileSync(bad, 'export default 42;\n');
    const r = run(['synth', bad, '--out', tmp('out')]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('the default export is not made with defineEnvironments(...)');
  }, 180_000);

  test('--help documents the exit codes', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /Exit codes, the same failure the same code in every command .*:\n\s+0 .*\n\s+1 .*\n\s+2 .*\n\s+3 +release error/,
    );
  }, 180_000);
});
