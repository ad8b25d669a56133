/**
 * Jest global set-up of the `cluster` project: builds whatever test-cluster binary is missing (a no-op when the cache
 * is warm; a cold build takes tens of minutes), then starts the loopback test cluster once per run — or reuses one
 * already up (`npm run cluster:up`). Global teardown stops it only if this run started it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterStartedAt, STARTED_FLAG } from './cluster-state.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default async function globalSetup(): Promise<void> {
  const build = spawnSync('bash', ['test-cluster/scripts/build.sh'], { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) {
    throw new Error(`test-cluster binaries could not be built (build.sh exit ${build.status}); see the messages above, fix, then run: bash test-cluster/scripts/build.sh`);
  }
  const before = clusterStartedAt();
  const up = spawnSync('bash', ['test-cluster/scripts/up.sh'], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (up.status !== 0) throw new Error(`npm run cluster:up failed (exit ${up.status}); its log is above and in test-cluster/.run/logs`);
  const after = clusterStartedAt();
  (globalThis as Record<string, unknown>)[STARTED_FLAG] = after !== undefined && after !== before;
  process.stderr.write(`test cluster: kubeconfig ${up.stdout.trim()} (${after !== before ? 'started for this run' : 'reused'})\n`);
}
