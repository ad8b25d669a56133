/**
 * Benchmark of `agentplane verify` on the `dev-gvisor` example against the running test cluster (test-cluster/README.md):
 * wall time of a verify run against the unavoidable waits inside it (controller reconcile + pod Ready, measured as the
 * time the verifier spent in watch-based waits, and the runtime calls), and API requests per second while waiting.
 *
 * Steps: synthesize examples/dev-gvisor in-process; server-side apply its Namespace, RuntimeClass, SandboxTemplate and
 * ConfigMap to the test cluster (the install itself is already there: the controller runs as a local process); run the
 * verifier `BENCH_RUNS` times (default 3) as in `agentplane verify --controller external --transport direct
 * --router-url …` and print medians as a Markdown table. A last row runs the same template under a RuntimeClass that
 * no node matches, so the verifier waits its whole 10 s ready deadline: the requests/s of a long wait.
 *
 * Usage: `npm run cluster:up` (or set AGENTPLANE_TEST_CLUSTER_RUN), then `npx tsx bench/verify.ts`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { KubeClient } from '../src/adapter/kubernetes/client.js';
import { loadEnvironmentModule } from '../src/synth/environment-module.js';
import { synthesizeEnvironment, writeSynthesis } from '../src/synth/index.js';
import { planFromDescriptor, runVerify } from '../src/verify/index.js';
import * as k8s from '@kubernetes/client-node';
import { kubeConfigFrom, readClusterInfo, serverSideApply, type KubeObject } from '../test-cluster/kube.js';

/** Deletes the bench's own extra objects (a template and a RuntimeClass). */
async function k8sDelete(kc: k8s.KubeConfig, ...objs: KubeObject[]): Promise<void> {
  const api = k8s.KubernetesObjectApi.makeApiClient(kc);
  for (const o of objs) await api.delete(o).catch(() => undefined);
}

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const ROOT = resolve(import.meta.dirname, '..');
const MIRROR = resolve(process.env['AGENTPLANE_MIRROR'] ?? resolve(ROOT, '../shared/agent-sandbox/releases'));
const APPLIED_KINDS = new Set([
  'Namespace',
  'RuntimeClass',
  'SandboxTemplate',
  'SandboxWarmPool',
  'NetworkPolicy',
  'ConfigMap',
]);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const info = readClusterInfo();
if (info.ports.routerHttp === null)
  throw new Error('the test cluster runs v0.4.6 (no router, no sandboxd): start a v0.5.6 cluster');
const [env] = await loadEnvironmentModule(join(ROOT, 'examples/dev-gvisor/environment.ts'), { mirror: MIRROR });
const synth = synthesizeEnvironment(env!);
const dir = mkdtempSync(join(tmpdir(), 'agentplane-bench-verify-'));
writeSynthesis(dir, synth);
const objects = synth.objects.map((o) => o.object as KubeObject).filter((o) => APPLIED_KINDS.has(o.kind));
await serverSideApply(info.kubeconfig, objects);
process.stderr.write(`applied ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}\n`);

const plan = planFromDescriptor(synth.descriptor, dir, {
  transport: 'direct',
  routerUrl: `http://127.0.0.1:${info.ports.routerHttp}`,
  probeTimeoutMs: 5_000,
  readyTimeoutMs: 120_000,
});
const rows: Array<{
  wallMs: number;
  waitMs: number;
  waits: number;
  execMs: number;
  requests: number;
  waitRequests: number;
  outcome: string;
  states: string;
}> = [];
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  const { report, cluster } = await runVerify({
    plan,
    client: KubeClient.connect({ kubeconfig: info.kubeconfig }),
    loaded: synth.release,
    controllerMode: 'external',
    progress: () => undefined,
  });
  const wallMs = performance.now() - t0;
  const s = cluster.stats();
  const execMs = report.capabilities
    .flatMap((c) => c.evidence)
    .filter((e) => e.capability === 'runtime-exec' && e.step === 'verified' && e.field?.startsWith('Execute'))
    .reduce((n, e) => n + (e.durationMs ?? 0), 0);
  rows.push({
    wallMs,
    waitMs: s.waitingMs,
    waits: s.waits,
    execMs,
    requests: s.requests,
    waitRequests: s.requestsWhileWaiting,
    outcome: report.outcome,
    states: report.capabilities.map((c) => `${c.name}=${c.state}`).join(' '),
  });
  process.stderr.write(
    `run ${i + 1}: ${Math.round(wallMs)} ms, ${s.waits} waits ${s.waitingMs} ms, ${s.requestsWhileWaiting} requests while waiting, ${s.requests} requests in all; ${report.outcome}\n`,
  );
}
// A long wait: the same template under a RuntimeClass no node matches, so the claim never gets a Ready Sandbox and the
// verifier waits its full ready deadline (10 s) on its watches.
const kc = kubeConfigFrom(info.kubeconfig);
const shell = objects.find((o) => o.kind === 'SandboxTemplate')!;
const stuckClass = {
  apiVersion: 'node.k8s.io/v1',
  kind: 'RuntimeClass',
  metadata: { name: 'bench-nowhere' },
  handler: 'runsc',
  scheduling: { nodeSelector: { 'agentplane.dev/no-such-node': 'true' } },
} as KubeObject;
const stuck = JSON.parse(JSON.stringify(shell)) as KubeObject & {
  spec: { podTemplate: { spec: { runtimeClassName: string } } };
};
stuck.metadata = { name: 'bench-stuck', namespace: shell.metadata.namespace! };
stuck.spec.podTemplate.spec.runtimeClassName = 'bench-nowhere';
await serverSideApply(info.kubeconfig, [stuckClass, stuck]);
const stuckPlan = {
  ...plan,
  templates: [{ ...plan.templates[0]!, name: 'bench-stuck', runtimeClassName: 'bench-nowhere' }],
  runtimeClasses: [],
  readyTimeoutMs: 10_000,
};
const t1 = performance.now();
const long = await runVerify({
  plan: stuckPlan,
  client: KubeClient.connect({ kubeconfig: info.kubeconfig }),
  loaded: synth.release,
  controllerMode: 'external',
  progress: () => undefined,
});
const longWall = performance.now() - t1;
const ls = long.cluster.stats();
await k8sDelete(kc, stuck, stuckClass);

const m = (k: 'wallMs' | 'waitMs' | 'execMs' | 'requests' | 'waitRequests' | 'waits'): number =>
  median(rows.map((r) => r[k]));
const unavoidable = m('waitMs') + m('execMs');
process.stdout.write(
  [
    `| runs | wall time | unavoidable waits (watch waits + runtime calls) | overhead | waits | API requests (all) | requests while waiting | requests/s while waiting | outcome |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
    `| ${RUNS} | ${Math.round(m('wallMs'))} ms | ${Math.round(unavoidable)} ms (${m('waitMs')} + ${Math.round(m('execMs'))}) | ${Math.round(m('wallMs') - unavoidable)} ms | ${m('waits')} | ${m('requests')} | ${m('waitRequests')} | ${(m('waitRequests') / Math.max(0.001, m('waitMs') / 1000)).toFixed(2)} | ${rows[0]!.outcome} |`,
    `| 1 (claim never Ready, 10 s deadline) | ${Math.round(longWall)} ms | ${ls.waitingMs} ms waited | ${Math.round(longWall - ls.waitingMs)} ms | ${ls.waits} | ${ls.requests} | ${ls.requestsWhileWaiting} | ${(ls.requestsWhileWaiting / (ls.waitingMs / 1000)).toFixed(2)} | ${long.report.outcome} |`,
    '',
    `states (run 1): ${rows[0]!.states}`,
    '',
  ].join('\n'),
);
