/**
 * Exit statuses a CI gate reads, with `agentplane` as a real process (bin/agentplane.js): a closed stdout pipe
 * (`agentplane diff A B | head -1`) keeps the command's own status, and `compat` against a cluster it cannot reach
 * (a closed loopback port) is the error every command gives it (7), never "covered" (0). No cluster is needed.
 */
import { jest } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MIRROR } from '../constructs/fixture.js';
import { DESCRIPTOR } from '../verify/fixtures.js';

jest.setTimeout(120_000);

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(ROOT, 'bin/agentplane.js');
const DEV = path.join(ROOT, 'examples/dev-gvisor/environment.ts');
const ENV = { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', AGENTPLANE_MIRROR: MIRROR };

function tmp(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `agentplane-exit-${prefix}-`));
}

interface Piped {
  readonly status: number | null;
  readonly firstLine: string;
  readonly stderr: string;
}

/**
 * Runs the CLI with stdout on a real pipe, reads its first line, then closes the read end (what `| head -1` does)
 * while the command is still writing; resolves with the exit status.
 */
function pipedFirstLine(args: string[]): Promise<Piped> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let buffered = '';
    let firstLine: string | undefined;
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (firstLine !== undefined) return;
      buffered += d;
      const end = buffered.indexOf('\n');
      if (end < 0) return;
      firstLine = buffered.slice(0, end);
      child.stdout.destroy();
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, firstLine: firstLine ?? '', stderr }));
  });
}

describe('a stdout closed early (| head -1) keeps the exit status of the command', () => {
  let synthesized: string;
  beforeAll(() => {
    const out = tmp('dist');
    const r = spawnSync(process.execPath, [BIN, 'synth', DEV, '--out', out], { cwd: ROOT, env: ENV, encoding: 'utf8' });
    expect(r.status).toBe(0);
    synthesized = path.join(out, 'dev-gvisor');
  });

  test('diff with changes: 1, as unpiped', async () => {
    const empty = tmp('empty');
    // ~900 KB of JSON: far more than a pipe buffer, so the command is still writing when the pipe closes.
    const args = ['diff', empty, synthesized, '-o', 'json'];
    expect(
      spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env: ENV, encoding: 'utf8', maxBuffer: 64 << 20 })
        .status,
    ).toBe(1);
    const r = await pipedFirstLine(args);
    expect(r.firstLine).toBe('{');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
  });

  test('synth --stdout: 0, and nothing but its notes on stderr', async () => {
    const r = await pipedFirstLine(['synth', DEV, '--stdout']);
    expect(r.firstLine).toBe('---');
    expect(r.stderr).toMatch(/^(note: dev-gvisor: [^\n]+\n)+$/);
    expect(r.status).toBe(0);
  });
});

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

test('compat against an unreachable cluster: exit 7, the error and hint on stderr, no worksheet', async () => {
  const dir = tmp('compat');
  mkdirSync(path.join(dir, 'env'));
  writeFileSync(path.join(dir, 'env', 'environment.json'), JSON.stringify(DESCRIPTOR));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const port = await closedPort();
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\n`,
  );
  for (const output of ['markdown', 'json']) {
    const r = spawnSync(
      process.execPath,
      [BIN, 'compat', '--env', path.join(dir, 'env'), '--kubeconfig', kubeconfig, '-o', output],
      { cwd: ROOT, env: ENV, encoding: 'utf8' },
    );
    expect(r.stderr).toBe(
      'error [ClusterUnreachable]: cannot use the cluster for the worksheet: cannot reach the API server of context "t" (ECONNREFUSED)\nhint: check that the cluster is running and the kubeconfig server address is right\n',
    );
    // no worksheet: -o json holds the error document (error-document.test.ts), markdown nothing
    if (output === 'json')
      expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'Error', reason: 'ClusterUnreachable', exitCode: 7 });
    else expect(r.stdout).toBe('');
    expect(r.status).toBe(7);
  }
});

test('an API server that accepts connections and never answers: verify and compat exit 7 once the call deadline passes, the process does not linger', async () => {
  // A loopback listener that accepts and stays silent stands in for a hung API server (a fault a real one gives only
  // under overload): the client's 30 s call deadline reports it, and the process must still end.
  const silent = net.createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as net.AddressInfo).port;
  const dir = tmp('silent');
  mkdirSync(path.join(dir, 'env'));
  writeFileSync(path.join(dir, 'env', 'environment.json'), JSON.stringify(DESCRIPTOR));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\n`,
  );
  const run = (command: string): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          BIN,
          command,
          '--env',
          path.join(dir, 'env'),
          '--kubeconfig',
          kubeconfig,
          '--controller',
          'external',
          '-o',
          'json',
        ],
        { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'ignore'] },
      );
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      // far past the deadline: a process still running then lingers, and is killed so the test reports it
      const kill = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('error', reject);
      child.on('close', (status, signal) => {
        clearTimeout(kill);
        resolve({ status, signal, stdout });
      });
    });
  try {
    const [verify, compat] = await Promise.all([run('verify'), run('compat')]);
    expect([verify.signal, verify.status, compat.signal, compat.status]).toEqual([null, 7, null, 7]);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      reason: 'ClusterTimeout',
      details: { category: 'timeout', commandReason: 'VerifyCouldNotRun' },
    });
    expect(JSON.parse(compat.stdout)).toMatchObject({
      reason: 'ClusterTimeout',
      details: { category: 'timeout', commandReason: 'ClusterUnusable' },
    });
  } finally {
    silent.close();
  }
});
