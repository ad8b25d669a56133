/**
 * Benchmark of the time to first instruction on the test cluster's real node: from a claim created through the
 * adapter's `createFromTemplate` to the first command (`true`) answered through `startExecution` over the default
 * transport (port-forward through the API server, kubelet and containerd), for a warm pool member (a pool of 1 that is
 * Ready before the claim) and for a cold start (a pool of 0: the controller makes the Sandbox for the claim). The
 * template runs sandboxd v0.5.6 under gVisor (handler runsc), as examples/dev-gvisor does. `BENCH_RUNS` (default 3)
 * claims of each kind; the row prints the median and the range, and the claim → Ready part of it.
 *
 * Needs a real-node cluster (`AGENTPLANE_TEST_CLUSTER_RUN=<dir> bash test-cluster/scripts/up.sh --real-node-only`,
 * then `AGENTPLANE_TEST_CLUSTER_RUN=<dir> npx tsx bench/first-instruction.ts`); the controller is the cluster's local
 * process. Without a real node it prints that the row is skipped and exits 0.
 */
import * as k8s from '@kubernetes/client-node';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { KubeCapabilityAdapter } from '../src/adapter/adapter.js';
import { KubeClient } from '../src/adapter/kubernetes/client.js';
import { PortForwardTransport } from '../src/adapter/transports/port-forward.js';
import type { SessionRef } from '../src/adapter/types.js';
import { readClusterInfo } from '../test-cluster/kube.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const IMAGE = 'registry.local/agentplane-test/sandboxd:v0.5.6';
const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };

const info = readClusterInfo();
if (info.realNode === null) {
  process.stdout.write('| time to first instruction on the real node | skipped: the test cluster has no real node |\n');
  process.exit(0);
}
const node = info.realNode;
const kc = new k8s.KubeConfig();
kc.loadFromFile(info.kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const nodeApi = kc.makeApiClient(k8s.NodeV1Api);
const suffix = Math.random().toString(36).slice(2, 7);
const ns = `bench-tti-${suffix}`;
const rc = `bench-gvisor-${suffix}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await core.createNamespace({ body: { metadata: { name: ns } } });
await nodeApi.createRuntimeClass({ body: { metadata: { name: rc }, handler: 'runsc' } });
const [key, effect] = node.taint ? node.taint.split(':') : [];
const [tkey, tvalue] = key ? key.split('=') : [];
await custom.createNamespacedCustomObject({
  ...EXT,
  namespace: ns,
  plural: 'sandboxtemplates',
  body: {
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxTemplate',
    metadata: { name: 'sbx' },
    spec: {
      podTemplate: {
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node.name },
          ...(tkey ? { tolerations: [{ key: tkey, operator: 'Equal', value: tvalue, effect }] } : {}),
          runtimeClassName: rc,
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'sandboxd',
              image: IMAGE,
              imagePullPolicy: 'Never',
              args: ['--grpc-port=9090', '--rest-port=8080', '--root-dir=/workspace'],
              ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
              volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
            },
          ],
          volumes: [{ name: 'workspace', emptyDir: {} }],
        },
      },
    },
  },
});
for (const [name, replicas] of [
  ['warm', 1],
  ['cold', 0],
] as const)
  await custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name },
      spec: { replicas, sandboxTemplateRef: { name: 'sbx' } },
    },
  });

const client = KubeClient.connect({ kubeconfig: info.kubeconfig });
const transport = new PortForwardTransport(client);
const adapter = new KubeCapabilityAdapter({
  client,
  executions: {
    transport,
    // The bench measures latency, not the gate: the verifier's runtime-exec proof is taken as given here.
    supportStates: () => 'verified',
    runtimes: () => ({ kind: 'sandboxd' }),
  },
});

/** Waits until the pool has `n` Ready members (counted from its Sandboxes, not its status). */
async function poolReady(pool: string, n: number): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    const list = (await custom.listNamespacedCustomObject({
      group: 'agents.x-k8s.io',
      version: 'v1beta1',
      namespace: ns,
      plural: 'sandboxes',
    })) as {
      items: Array<{
        metadata: { ownerReferences?: Array<{ name: string; kind: string }> };
        status?: { conditions?: Array<{ type: string; status: string }> };
      }>;
    };
    const ready = list.items.filter(
      (s) =>
        s.metadata.ownerReferences?.some((o) => o.kind === 'SandboxWarmPool' && o.name === pool) &&
        s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    if (ready >= n) return;
    await sleep(500);
  }
  throw new Error(`pool ${pool} never had ${n} Ready member(s)`);
}

/** One claim → first command answered; returns both times, ms. */
async function once(
  pool: 'warm' | 'cold',
  i: number,
): Promise<{ totalMs: number; readyMs: number; refused: string[] }> {
  const refused: string[] = [];
  const t0 = performance.now();
  const made = await adapter.createFromTemplate({ namespace: ns, template: 'sbx', warmPool: pool }, '', `${pool}-${i}`);
  if (made.kind !== 'ok') throw new Error(`claim refused: ${JSON.stringify(made)}`);
  const ref: SessionRef = made.value;
  for (;;) {
    const o = await adapter.observe(ref);
    if (o.kind === 'ok' && o.value.phase === 'Ready') break;
    if (performance.now() - t0 > 300_000) throw new Error('claim never Ready');
    await sleep(100);
  }
  const readyMs = performance.now() - t0;
  const id = `tti-${pool}-${i}-${suffix}`;
  for (;;) {
    const started = await adapter.startExecution(id, { session: ref, argv: ['true'], timeoutMs: 30_000 });
    if (started.kind === 'ok') break;
    refused.push(started.kind === 'rejected' || started.kind === 'unsupported' ? started.reason : started.kind);
    // A claim adopted from the pool is Ready before the controller has written the template annotation the adapter needs.
    if (performance.now() - t0 > 300_000) throw new Error(`startExecution refused: ${JSON.stringify(started)}`);
    await sleep(100);
  }
  for (;;) {
    const q = await adapter.queryExecution(id);
    if (q.kind === 'ok' && q.value.state !== 'running') {
      if (q.value.outcome?.kind !== 'completed' || q.value.outcome.exitCode !== 0)
        throw new Error(`first command did not succeed: ${JSON.stringify(q.value.outcome)}`);
      break;
    }
    await sleep(20);
  }
  const totalMs = performance.now() - t0;
  await adapter.terminate(ref, '');
  return { totalMs, readyMs, refused };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
try {
  for (const pool of ['warm', 'cold'] as const) {
    const rows: Array<{ totalMs: number; readyMs: number; refused: string[] }> = [];
    for (let i = 0; i < RUNS; i += 1) {
      if (pool === 'warm') await poolReady('warm', 1);
      rows.push(await once(pool, i));
    }
    const totals = rows.map((r) => r.totalMs);
    process.stdout.write(
      `| time to first instruction, ${pool === 'warm' ? 'warm pool member' : 'cold start'} (gVisor, port-forward) | ${fmt(median(totals))} median (${fmt(Math.min(...totals))}–${fmt(Math.max(...totals))}), claim → Ready ${fmt(median(rows.map((r) => r.readyMs)))} | ${RUNS} claims, load ${loadavg()[0]!.toFixed(1)}; startExecution refused before the first start: ${[...new Set(rows.flatMap((r) => r.refused))].join(', ') || 'never'} (${rows.reduce((n, r) => n + r.refused.length, 0)}×) |\n`,
    );
  }
} finally {
  await transport.close();
  await core.deleteNamespace({ name: ns }).catch(() => undefined);
  await nodeApi.deleteRuntimeClass({ name: rc }).catch(() => undefined);
}
process.exit(0);
