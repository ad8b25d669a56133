/** Shared by global-setup/teardown: whether this jest run started the cluster, and the start stamp up.sh writes. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RUN_DIR } from '../../test-cluster/kube.js';

/** globalThis key set by global-setup to true when it started (not reused) the cluster. */
export const STARTED_FLAG = '__AGENTPLANE_TEST_CLUSTER_STARTED__';

/** `startedAt` of the running cluster's cluster.json, or undefined when none is recorded. */
export function clusterStartedAt(): string | undefined {
  const file = path.join(RUN_DIR, 'cluster.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { startedAt?: string }).startedAt;
}
