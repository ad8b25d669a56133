/** Jest global teardown of the `cluster` project: stops the test cluster if global-setup started it (keep it with AGENTPLANE_TEST_CLUSTER_KEEP=1). */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { STARTED_FLAG } from './cluster-state.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default async function globalTeardown(): Promise<void> {
  if ((globalThis as Record<string, unknown>)[STARTED_FLAG] !== true || process.env.AGENTPLANE_TEST_CLUSTER_KEEP === '1') return;
  const down = spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'] });
  if (down.status !== 0) throw new Error(`npm run cluster:down failed (exit ${down.status})`);
}
