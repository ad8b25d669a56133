/**
 * Smoke test on Agent Sandbox v0.4.6 (v1alpha1 only, no conversion, no Go router — `k8s/crds/*.yaml@v0.4.6`): a second
 * cluster beside the global one (own run dir `test-cluster/.run-v0.4.6-<pid>`, its own pod net), started and stopped here.
 * A plain v1alpha1 Sandbox (sandboxd container) reaches Ready through the real v0.4.6 controller, the runtime stand-in's
 * sandboxd answers on its pod IP (v0.4.6 has no Go router), and deleting the Sandbox removes its Pod.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  connect,
  freshNamespace,
  httpGet,
  isGone,
  readyCondition,
  sandboxdPodTemplate,
  secondClusterEnv,
  waitFor,
  type Cluster,
} from './helpers.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const runDir = path.join(repo, 'test-cluster', `.run-v0.4.6-${process.pid}`); // per jest worker: runs in one work tree must not share it
// kwok nodes only: this v0.4.6 cluster needs no real node. Its own release and pod net, never the parent's.
const env = secondClusterEnv(runDir, { release: 'v0.4.6', podNet: 13 });
const SBX = { group: 'agents.x-k8s.io', version: 'v1alpha1', plural: 'sandboxes' };
let c: Cluster;
let ns: string;

beforeAll(async () => {
  const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--release', 'v0.4.6'], {
    cwd: repo,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (up.status !== 0)
    throw new Error(`starting the v0.4.6 cluster failed (exit ${up.status}); logs in ${runDir}/logs`);
  expect(up.stdout.trim()).toBe(path.join(runDir, 'kubeconfig'));
  c = connect(runDir);
  ns = await freshNamespace(c, 'smoke46');
}, 180_000);

afterAll(() => {
  if (existsSync(runDir))
    spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: repo, env, stdio: ['ignore', 'inherit', 'inherit'] });
}, 30_000);

/** pid -> alive, for every pid file of the cluster (`withRuntimes`: also the stand-in's per-pod sandboxd processes, which come and go). */
function processes(withRuntimes = true): Map<number, boolean> {
  const out = new Map<number, boolean>();
  for (const f of readdirSync(path.join(runDir, 'pids'))) {
    if (!withRuntimes && f.startsWith('sandboxd-')) continue;
    const pid = Number(readFileSync(path.join(runDir, 'pids', f), 'utf8').trim());
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    out.set(pid, alive);
  }
  return out;
}

test('a plain v1alpha1 Sandbox reaches Ready on v0.4.6; deleting it removes the Pod', async () => {
  expect(c.info.release).toBe('v0.4.6');
  await c.custom.createNamespacedCustomObject({
    ...SBX,
    namespace: ns,
    body: {
      apiVersion: 'agents.x-k8s.io/v1alpha1',
      kind: 'Sandbox',
      metadata: { name: 'plain' },
      spec: { podTemplate: sandboxdPodTemplate() },
    },
  });
  const ready = await waitFor('Sandbox plain Ready=True', 60_000, async () => {
    const obj = await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 'plain' });
    return readyCondition(obj)?.status === 'True' ? obj : undefined;
  });
  expect(readyCondition(ready)).toMatchObject({ status: 'True', reason: 'DependenciesReady' });
  const pod = await c.core.readNamespacedPod({ namespace: ns, name: 'plain' });
  expect(pod.status?.podIP).toMatch(new RegExp(`^127\\.${c.info.podNet}\\.\\d+\\.\\d+$`));
  expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Sandbox', name: 'plain', controller: true });
  // No router in v0.4.6: the runtime stand-in's sandboxd answers on the pod IP itself.
  const health = await waitFor('sandboxd /v1/health on the pod IP', 15_000, async () => {
    const r = await httpGet(8080, '/v1/health', {}, 2000, pod.status!.podIP!).catch(() => undefined);
    return r?.status === 200 ? r : undefined;
  });
  expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });

  await c.custom.deleteNamespacedCustomObject({ ...SBX, namespace: ns, name: 'plain' });
  await waitFor('Sandbox and Pod gone', 30_000, async () =>
    (await isGone(() => c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 'plain' }))) &&
    (await isGone(() => c.core.readNamespacedPod({ namespace: ns, name: 'plain' })))
      ? true
      : undefined,
  );
}, 120_000);

test('cluster:up on a running cluster reuses it; cluster:down stops every process it started and removes its state', () => {
  const before = processes(false);
  expect(before.size).toBeGreaterThanOrEqual(7); // etcd, apiserver, scheduler, controller-manager, kwok, controller, stand-in
  expect([...before.values()].every(Boolean)).toBe(true);
  const again = spawnSync('bash', ['test-cluster/scripts/up.sh', '--release', 'v0.4.6'], {
    cwd: repo,
    env,
    encoding: 'utf8',
  });
  expect(again.status).toBe(0);
  expect(again.stdout.trim()).toBe(path.join(runDir, 'kubeconfig'));
  expect(again.stderr).toContain('reusing the running cluster');
  expect([...processes(false).keys()].sort()).toEqual([...before.keys()].sort());

  const all = processes(true);
  const down = spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: repo, env, encoding: 'utf8' });
  expect(down.status).toBe(0);
  for (const pid of all.keys()) expect(() => process.kill(pid, 0)).toThrow();
  expect(existsSync(runDir)).toBe(false);
}, 60_000);
