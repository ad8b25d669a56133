/** Kubeconfig files for adapter tests: the admin one, or one for a given token / server (written to a temp dir). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClusterInfo } from '../../../test-cluster/kube.js';

/** Writes a kubeconfig with one context `ctx` for user `userName` (`user` stanza as given) against `server` (default: the cluster's). */
export function writeKubeconfig(
  info: ClusterInfo,
  userName: string,
  user: Record<string, unknown>,
  server = info.apiServer,
): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agentplane-kc-'));
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server, 'certificate-authority': info.caFile } }],
      users: [{ name: userName, user }],
      contexts: [{ name: 'ctx', context: { cluster: 'test', user: userName } }],
      'current-context': 'ctx',
    }),
  );
  return file;
}
