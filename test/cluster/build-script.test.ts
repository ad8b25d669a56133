/**
 * build.sh, the cached build of the test cluster's binaries. An unfetchable module is simulated with the real `go`,
 * `GOPROXY=off` and an empty module cache (an unreachable proxy cannot be produced on demand otherwise): exit 2, the
 * modules named, the command to re-run, nothing compiled. Two builds of one component at once share one result (flock).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('an unfetchable module: exit 2, the module named, nothing cached', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'agentplane-build-'));
  try {
    const r = spawnSync('bash', ['test-cluster/scripts/build.sh', 'etcd'], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        GOPROXY: 'off',
        GOFLAGS: '-modcacherw',
        GOMODCACHE: path.join(tmp, 'mod'),
        AGENTPLANE_TEST_CLUSTER_CACHE: path.join(tmp, 'cache'),
      },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("cannot fetch the Go modules of component 'etcd'");
    const listed =
      /(\d+) module\(s\) not obtained:\n((?: {4}\S+@\S+: module lookup disabled by GOPROXY=off\n)+) {4}… and (\d+) more/.exec(
        r.stderr,
      );
    expect(listed).not.toBeNull();
    expect(listed![2]!.trim().split('\n')).toHaveLength(20);
    expect(Number(listed![1])).toBe(20 + Number(listed![3])); // etcd's whole graph (~100 modules) is missing
    expect(r.stderr).toContain('re-run: bash test-cluster/scripts/build.sh etcd');
    expect(r.stderr).not.toContain('compiling');
    expect(existsSync(path.join(tmp, 'cache', 'bin', 'etcd'))).toBe(false);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, 60_000);

test('two builds of one component at once: one compiles, the other waits on the lock and reuses its result', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'agentplane-build-'));
  try {
    const env = { ...process.env, AGENTPLANE_TEST_CLUSTER_CACHE: path.join(tmp, 'cache') };
    const run = () =>
      new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const p = spawn('bash', ['test-cluster/scripts/build.sh', 'etcd'], {
          cwd: repo,
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        p.on('close', (status) => resolve({ status, stderr }));
      });
    const [a, b] = await Promise.all([run(), run()]);
    expect([a.status, b.status]).toEqual([0, 0]);
    const built = [a, b].filter((r) => /etcd: built in \d+s ->/.test(r.stderr));
    const waited = [a, b].filter(
      (r) =>
        r.stderr.includes('another build holds the lock; waiting') &&
        r.stderr.includes('etcd: built by the other process'),
    );
    expect(built).toHaveLength(1);
    expect(waited).toHaveLength(1);
    const dirs = readdirSync(path.join(tmp, 'cache', 'bin', 'etcd'));
    expect(dirs).toHaveLength(1); // no temp dir left behind
    expect(readdirSync(path.join(tmp, 'cache', 'bin', 'etcd', dirs[0]!)).sort()).toEqual(['.ok', 'etcd']);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, 300_000);
