/**
 * Jest global teardown of the `cluster` project: drops this run's holder file; stops the test cluster if a jest
 * global set-up started it (`<run dir>/started-by-jest`) and no other live jest run holds it.
 * `AGENTPLANE_TEST_CLUSTER_KEEP=1` keeps it running. Self-contained (see global-setup.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const runDir = process.env.AGENTPLANE_TEST_CLUSTER_RUN ?? path.join(repo, 'test-cluster', '.run');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export default async function globalTeardown(): Promise<void> {
  const holders = path.join(runDir, 'holders');
  rmSync(path.join(holders, String(process.pid)), { force: true });
  const others = existsSync(holders)
    ? readdirSync(holders)
        .map(Number)
        .filter((pid) => pid !== process.pid && alive(pid))
    : [];
  if (
    !existsSync(path.join(runDir, 'started-by-jest')) ||
    others.length > 0 ||
    process.env.AGENTPLANE_TEST_CLUSTER_KEEP === '1'
  )
    return;
  const down = spawnSync('bash', ['test-cluster/scripts/down.sh'], {
    cwd: repo,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (down.status !== 0) throw new Error(`npm run cluster:down failed (exit ${down.status})`);
}
