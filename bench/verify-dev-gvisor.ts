/**
 * Benchmark of `agentplane verify --env dist/dev-gvisor` on the test cluster's real node, with the default transport
 * (port-forward through the API server, kubelet and containerd), as the README's reproduction does: wall time, the
 * verifier's API requests, the time its watch-based waits took and their own requests per second of waiting.
 *
 * Needs a real-node-only cluster (`AGENTPLANE_TEST_CLUSTER_RUN=<dir> bash test-cluster/scripts/up.sh --real-node-only`,
 * then `AGENTPLANE_TEST_CLUSTER_RUN=<dir> npx tsx bench/verify-dev-gvisor.ts`) and `npm run build` (synth runs the
 * CLI). It synthesizes examples/dev-gvisor, applies its phase files in order (the CRD phase aside, as the README
 * says), then runs the verifier `BENCH_RUNS` times (default 3) in-process with the controller as the cluster's local
 * process (`--controller external`). Without a real node it prints that the row is skipped and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseAllDocuments } from 'yaml';
import { KubeClient } from '../src/adapter/kubernetes/client.js';
import { loadRelease } from '../src/releases/index.js';
import { planFromDescriptor, readEnvironment, runVerify } from '../src/verify/index.js';
import { readClusterInfo, serverSideApply, type KubeObject } from '../test-cluster/kube.js';
import { MIRROR } from './mirror.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const ROOT = resolve(import.meta.dirname, '..');
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

const info = readClusterInfo();
if (info.realNode === null) {
  process.stdout.write('| dev-gvisor on the real node | skipped: the test cluster has no real node |\n');
  process.exit(0);
}

const out = mkdtempSync(join(tmpdir(), 'agentplane-bench-devgvisor-'));
const synth = spawnSync('node', ['bin/agentplane.js', 'synth', 'examples/dev-gvisor/environment.ts', '--out', out], {
  cwd: ROOT,
  env: { ...process.env, AGENTPLANE_MIRROR: MIRROR },
  encoding: 'utf8',
});
if (synth.status !== 0) throw new Error(`synth failed (exit ${synth.status}): ${synth.stderr}`);
const dir = join(out, 'dev-gvisor');
for (const f of readdirSync(dir)
  .filter((f) => /^\d\d-.*\.yaml$/.test(f) && f !== '00-crds.yaml')
  .sort()) {
  const objects = parseAllDocuments(readFileSync(join(dir, f), 'utf8'))
    .map((d) => d.toJS() as KubeObject)
    .filter((o) => o !== null);
  await serverSideApply(info.kubeconfig, objects);
}

const { descriptor } = readEnvironment(dir);
const loaded = await loadRelease(descriptor.release.tag as 'v0.5.6', { mirror: MIRROR });
const plan = planFromDescriptor(descriptor, dir, { transport: 'port-forward' });
const rows: Array<{
  wallMs: number;
  requests: number;
  waits: number;
  waitingMs: number;
  own: number;
  outcome: string;
}> = [];
const loadBefore = load();
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  const { report, cluster } = await runVerify({
    plan,
    client: KubeClient.connect({ kubeconfig: info.kubeconfig }),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
  });
  const s = cluster.stats();
  rows.push({
    wallMs: performance.now() - t0,
    requests: s.requests,
    waits: s.waits,
    waitingMs: s.waitingMs,
    own: s.requestsWhileWaiting,
    outcome: report.outcome,
  });
  process.stderr.write(
    `run ${i + 1}: ${Math.round(rows[i]!.wallMs)} ms, ${s.requests} requests, ${s.waits} waits ${s.waitingMs} ms, ${s.requestsWhileWaiting} of the waits' own; ${report.outcome}\n`,
  );
}
/** The median run by wall time, with its own counts. */
const m = [...rows].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(rows.length / 2)]!;
process.stdout.write(
  [
    "| what | runs | wall time (median) | API requests | waits | time in waits | waits' own requests | per second of waiting | outcomes | load avg (before → after) |",
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| verify --env dist/dev-gvisor, real node, port-forward | ${RUNS} | ${(m.wallMs / 1000).toFixed(1)} s | ${m.requests} | ${m.waits} | ${(m.waitingMs / 1000).toFixed(1)} s | ${m.own} | ${(m.own / Math.max(m.waitingMs / 1000, 0.001)).toFixed(2)} | ${rows.map((r) => r.outcome).join(', ')} | ${loadBefore} → ${load()} |`,
    '',
  ].join('\n'),
);
