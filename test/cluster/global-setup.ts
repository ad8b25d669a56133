/**
 * Jest global set-up of the `cluster` project: builds whatever test-cluster binary is missing (a no-op when the cache
 * is warm; a cold build takes tens of minutes), then starts the loopback test cluster once per run — or reuses one
 * already up (`npm run cluster:up`). Each jest run registers itself as a holder (`<run dir>/holders/<pid>`); when it
 * starts the cluster it also leaves `<run dir>/started-by-jest`, and the last live holder's teardown stops that cluster
 * (several engineers' jest runs share one work tree). Self-contained: jest loads this file outside its module mapper,
 * so it imports no project file.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const runDir = process.env.AGENTPLANE_TEST_CLUSTER_RUN ?? path.join(repo, 'test-cluster', '.run');

function startedAt(): string | undefined {
  const file = path.join(runDir, 'cluster.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { startedAt?: string }).startedAt : undefined;
}

export default async function globalSetup(): Promise<void> {
  const build = spawnSync('bash', ['test-cluster/scripts/build.sh'], {
    cwd: repo,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (build.status !== 0) {
    throw new Error(
      `test-cluster binaries could not be built (build.sh exit ${build.status}); see the messages above, fix, then run: bash test-cluster/scripts/build.sh`,
    );
  }
  const before = startedAt();
  const up = spawnSync('bash', ['test-cluster/scripts/up.sh'], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (up.status !== 0)
    throw new Error(
      `npm run cluster:up failed (exit ${up.status}); its messages are above, process logs in ${runDir}/logs`,
    );
  const after = startedAt();
  const started = after !== undefined && after !== before;
  if (started) writeFileSync(path.join(runDir, 'started-by-jest'), `${after}\n`);
  mkdirSync(path.join(runDir, 'holders'), { recursive: true });
  writeFileSync(path.join(runDir, 'holders', String(process.pid)), `${after}\n`);
  process.stderr.write(
    `test cluster: kubeconfig ${up.stdout.trim()} (${started ? 'started for this run' : 'reused'})\n`,
  );
}
