/**
 * build.sh when the Go module proxy cannot serve a module: the real `go` with `GOPROXY=off` and an empty module cache
 * (an unreachable proxy cannot be produced on demand otherwise) must fail with exit 2 and name the modules it could not
 * fetch and the command to re-run — never start compiling.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('an unfetchable module: exit 2, the module named, nothing cached', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'agentplane-build-'));
  try {
    const r = spawnSync('bash', ['test-cluster/scripts/build.sh', 'etcd'], {
      cwd: repo, encoding: 'utf8', timeout: 60_000,
      env: { ...process.env, GOPROXY: 'off', GOFLAGS: '-modcacherw', GOMODCACHE: path.join(tmp, 'mod'), AGENTPLANE_TEST_CLUSTER_CACHE: path.join(tmp, 'cache') },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("cannot fetch the Go modules of component 'etcd'");
    const listed = /(\d+) module\(s\) not obtained:\n((?: {4}\S+@\S+: module lookup disabled by GOPROXY=off\n)+) {4}… and (\d+) more/.exec(r.stderr);
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
