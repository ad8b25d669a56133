/**
 * `npm run bench:migrate-storage`: the storage step of the v0.5 -> v1.0 upgrade, `agentplane migrate-storage --apply`,
 * over BENCH_MIGRATE_OBJECTS Sandboxes (default 10,000; suspended, so no Pods) on a kwok-only v0.5.6 test cluster the
 * bench starts in its own run dir and stops at the end. `status.storedVersions` of the Sandbox CRD is set to
 * [v1alpha1, v1beta1] first, so the run rewrites every object and prunes. Prints one row: objects, wall time of the
 * command (process start to exit), objects per second (rewrites ÷ the command's own elapsed time), the requests it
 * allowed itself (--qps, --concurrency), and whether storedVersions ended as [v1beta1] with the count unchanged.
 * Needs lib/ built (BENCH_LIB_BUILT=1 from bench/run.ts; else it builds).
 */
import * as k8s from '@kubernetes/client-node';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { kubeConfigFrom, readClusterInfo } from '../test-cluster/kube.js';

const ROOT = resolve(import.meta.dirname, '..');
const OBJECTS = Number(process.env['BENCH_MIGRATE_OBJECTS'] ?? 10_000);
const QPS = process.env['BENCH_MIGRATE_QPS'] ?? '5000';
const CONCURRENCY = process.env['BENCH_MIGRATE_CONCURRENCY'] ?? '16';
const runDir = join(ROOT, 'test-cluster', `.run-bench-migrate-${process.pid}`);
const env = {
  ...process.env,
  AGENTPLANE_TEST_CLUSTER_RUN: runDir,
  AGENTPLANE_TEST_CLUSTER_POD_NET: '49',
  AGENTPLANE_TEST_CLUSTER_REAL_NODE: '0',
};
const CRD = 'sandboxes.agents.x-k8s.io';
const CORE = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes' };
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

if (process.env['BENCH_LIB_BUILT'] !== '1')
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

function down(): void {
  if (existsSync(runDir)) spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: ROOT, env, stdio: 'ignore' });
}

async function main(): Promise<string> {
  const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--release', 'v0.5.6'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  if (up.status !== 0)
    return `| migrate-storage --apply | ${OBJECTS} | - | - | - | skipped: the bench cluster did not start (exit ${up.status}) |`;
  const info = readClusterInfo(runDir);
  const kc = kubeConfigFrom(info.kubeconfig);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const namespace = 'bench-migrate';
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const pod = { spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } };
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < OBJECTS) {
        const i = next++;
        await custom.createNamespacedCustomObject({
          ...CORE,
          namespace,
          body: {
            apiVersion: 'agents.x-k8s.io/v1beta1',
            kind: 'Sandbox',
            metadata: { name: `s-${i}` },
            spec: { podTemplate: pod, operatingMode: 'Suspended' },
          },
        });
      }
    }),
  );
  const createS = (performance.now() - t0) / 1000;
  await ext.patchCustomResourceDefinitionStatus(
    { name: CRD, body: { status: { storedVersions: ['v1alpha1', 'v1beta1'] } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  const count = async (): Promise<number> => {
    let n = 0;
    let cont: string | undefined;
    do {
      const r = (await custom.listClusterCustomObject({
        ...CORE,
        limit: 1000,
        ...(cont ? { _continue: cont } : {}),
      })) as {
        items: unknown[];
        metadata?: { _continue?: string; continue?: string };
      };
      n += r.items.length;
      cont = r.metadata?.continue ?? r.metadata?._continue ?? undefined;
      if (cont === '') cont = undefined;
    } while (cont !== undefined);
    return n;
  };
  const before = await count();
  const loadBefore = load();
  const s0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, 'bin/agentplane.js'),
      'migrate-storage',
      '--apply',
      '--kubeconfig',
      info.kubeconfig,
      '--qps',
      QPS,
      '--concurrency',
      CONCURRENCY,
      '-o',
      'json',
    ],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const wallS = (performance.now() - s0) / 1000;
  if (r.status !== 0)
    return `| migrate-storage --apply | ${OBJECTS} | - | - | - | failed: exit ${r.status}: ${r.stderr.trim().split('\n').pop() ?? ''} |`;
  const out = JSON.parse(r.stdout) as {
    rewritten: number;
    elapsedMs: number;
    objectsPerSecond: number;
    kinds: Array<{ kind: string; rewritten: number }>;
  };
  const stored = (await ext.readCustomResourceDefinition({ name: CRD })).status?.storedVersions ?? [];
  const after = await count();
  const ok = stored.length === 1 && stored[0] === 'v1beta1' && after === before;
  return (
    `| migrate-storage --apply (--qps ${QPS}, --concurrency ${CONCURRENCY}) | ${out.rewritten} (${before} Sandboxes + ${out.rewritten - before} other) | ` +
    `${wallS.toFixed(1)} s | ${out.objectsPerSecond}/s (${(out.elapsedMs / 1000).toFixed(1)} s in the command) | ` +
    `storedVersions [${stored.join(', ')}], count ${before} -> ${after}${ok ? '' : ' **wrong**'} | created in ${createS.toFixed(1)} s; load ${loadBefore} -> ${load()} |`
  );
}

const row = await main()
  .catch(
    (err: unknown) => `| migrate-storage --apply | ${OBJECTS} | - | - | - | failed: ${String(err).split('\n')[0]} |`,
  )
  .finally(down);
console.log(
  [
    `Storage step of the v0.5 -> v1.0 upgrade (bench/migrate-storage.ts), kwok-only v0.5.6 test cluster in its own run dir:`,
    '',
    '| work | objects rewritten | process wall time | objects per second | result | notes |',
    '| --- | --- | --- | --- | --- | --- |',
    row,
  ].join('\n'),
);
