/**
 * `agentplane verify` as a real process: exit codes for "could not run" (a kubeconfig pointing at a closed loopback
 * port; a kubeconfig naming a missing context) and for an invalid descriptor. The verified / not-verified exits are
 * covered on the real test cluster (test/cluster/verify/).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DESCRIPTOR } from './fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

function cli(args: string[]): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/agentplane.js'), ...args], {
    encoding: 'utf8',
    cwd: ROOT,
    env: { ...process.env, KUBECONFIG: '' },
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

function kubeconfig(server: string, context = 'test'): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-kc-'));
  const file = path.join(dir, 'config');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `current-context: ${context}`,
      'clusters:',
      `- name: c`,
      `  cluster: {server: "${server}", insecure-skip-tls-verify: true}`,
      'users:',
      '- name: u',
      '  user: {token: not-a-real-token}',
      'contexts:',
      '- name: test',
      '  context: {cluster: c, user: u}',
      '',
    ].join('\n'),
  );
  return file;
}

function envDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-env-'));
  writeFileSync(path.join(dir, 'environment.json'), JSON.stringify(DESCRIPTOR));
  return dir;
}

describe('agentplane verify exit codes', () => {
  test('unreachable cluster: exit 7, "could not run", naming the context', async () => {
    const port = await closedPort();
    const r = cli(['verify', '--env', envDir(), '--kubeconfig', kubeconfig(`https://127.0.0.1:${port}`), '-o', 'json']);
    expect(r.status).toBe(7);
    expect(r.stderr).toContain(
      'error [ClusterUnreachable]: could not run: cannot use the cluster: cannot reach the API server of context "test" (ECONNREFUSED)',
    );
    // no report: -o json holds the error document instead (test/unit/cli/error-document.test.ts)
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'Error', reason: 'ClusterUnreachable', exitCode: 7 });
  }, 60_000);

  test('a context that is not in the kubeconfig: a usage error (exit 2) naming it', () => {
    const r = cli([
      'verify',
      '--env',
      envDir(),
      '--kubeconfig',
      kubeconfig('https://127.0.0.1:1'),
      '--context',
      'nope',
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^error \[KubeconfigUnusable\]: context "nope" is not in kubeconfig .* \(contexts: test\); pass --context with one of the listed contexts \(in code: the context option of connect\(\)\)\n\(run agentplane verify --help for usage\)\n$/,
    );
  }, 60_000);

  test('an invalid descriptor: exit 4 with a hint', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-env-'));
    writeFileSync(path.join(dir, 'environment.json'), JSON.stringify({ ...DESCRIPTOR, kind: 'Other' }));
    const r = cli(['verify', '--env', dir, '--kubeconfig', kubeconfig('https://127.0.0.1:1')]);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/is not a valid environment descriptor: kind: .*\nhint: re-run `agentplane synth`/);
  }, 60_000);
});
