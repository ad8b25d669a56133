/**
 * Smoke test on Agent Sandbox v1.0.3 (v1beta1 only, no conversion webhook, sandboxd with `--listen-host` —
 * `k8s/crds/*.yaml@v1.0.3`, `cmd/agent-sandbox-controller/main.go@v1.0.3`, `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`):
 * a second cluster beside the global one (own run dir `test-cluster/.run-v1.0.3-<pid>`, its own pod net, kwok nodes
 * only), started and stopped here. The environment is test-cluster/env/v1.0.3.ts (AgentPlane constructs). The CRDs
 * serve and store v1beta1 only and convert with strategy None; a v1beta1 SandboxClaim on the env's warm pool reaches
 * Ready through the real v1.0.3 controller (started without any webhook flag); the v1.0.3 sandboxd binds the pod IP
 * itself and answers there, directly and through the v1.0.3 router; a v1alpha1 request is a 404; deleting the claim
 * removes the Sandbox and its Pod.
 */
import * as k8s from '@kubernetes/client-node';
import { readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { SMOKE_NAMESPACE } from '../../test-cluster/env/v1.0.3.js';
import { readRuntimes } from '../../test-cluster/runtime.js';
import { grpcExecute, httpGet, isGone, readyCondition, secondCluster, waitFor, type Cluster } from './helpers.js';

// kwok nodes only: this cluster needs no real node. Release and pod net are its own (secondCluster): an inherited
// AGENTPLANE_TEST_CLUSTER_POD_NET (scripts/gen-compat-matrix.ts sets one for the global cluster) would hand out the global
// cluster's pod IPs here too, and two sandboxd would contend for the same <pod IP>:8080.
const cluster = secondCluster('v1.0.3', { release: 'v1.0.3', podNet: 14 });
const { runDir } = cluster;
const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };
const CORE = { group: 'agents.x-k8s.io', version: 'v1beta1' };
const CRDS = [
  'sandboxes.agents.x-k8s.io',
  'sandboxtemplates.extensions.agents.x-k8s.io',
  'sandboxwarmpools.extensions.agents.x-k8s.io',
  'sandboxclaims.extensions.agents.x-k8s.io',
];
let c: Cluster;

beforeAll(() => {
  c = cluster.start();
}, 240_000);

afterAll(() => cluster.stop(), 60_000);

/** argv and executable of a process up.sh started (pid file `<run>/pids/<name>.pid`). */
function processOf(name: string): { exe: string; argv: string[] } {
  const pid = readFileSync(path.join(runDir, 'pids', `${name}.pid`), 'utf8').trim();
  return {
    exe: readlinkSync(`/proc/${pid}/exe`),
    argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean),
  };
}

test('the v1.0.3 CRDs serve and store v1beta1 only, with no conversion webhook; the controller runs without webhook flags', async () => {
  expect(c.info.release).toBe('v1.0.3');
  const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const name of CRDS) {
    const crd = await ext.readCustomResourceDefinition({ name });
    expect({ name, versions: crd.spec.versions.map((v) => [v.name, v.served, v.storage]) }).toEqual({
      name,
      versions: [['v1beta1', true, true]],
    });
    expect(crd.status?.storedVersions).toEqual(['v1beta1']);
    // The shipped CRDs have no spec.conversion; the apiserver defaults the absent stanza to strategy None.
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
  }
  const ctrl = processOf('agent-sandbox-controller');
  expect(ctrl.exe).toContain(`${path.sep}agent-sandbox-v1.0.3${path.sep}`);
  expect(ctrl.argv.filter((a) => a.includes('webhook'))).toEqual([]);
  const router = processOf('sandbox-router');
  expect(router.argv.some((a) => a.includes(`${path.sep}agent-sandbox-v1.0.3${path.sep}`))).toBe(true);
  expect(c.info.ports.routerHttp).toEqual(expect.any(Number));
});

test('a v1beta1 claim on the warm pool reaches Ready through the v1.0.3 controller; sandboxd answers on the pod IP; v1alpha1 is a 404; deleting the claim removes Sandbox and Pod', async () => {
  const template = (await c.custom.getNamespacedCustomObject({
    ...EXT,
    namespace: SMOKE_NAMESPACE,
    plural: 'sandboxtemplates',
    name: 'sandboxd',
  })) as {
    metadata: { labels?: Record<string, string> };
    spec: { podTemplate: { spec: { runtimeClassName?: string } } };
  };
  expect(template.metadata.labels?.['agentplane.dev/environment']).toBe('test-cluster');
  expect(template.spec.podTemplate.spec.runtimeClassName).toBe('standin');
  await waitFor('warm pool sandboxd readyReplicas >= 1', 60_000, async () => {
    const pool = (await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: SMOKE_NAMESPACE,
      plural: 'sandboxwarmpools',
      name: 'sandboxd',
    })) as { status?: { readyReplicas?: number } };
    return (pool.status?.readyReplicas ?? 0) >= 1 ? true : undefined;
  });

  const ns = SMOKE_NAMESPACE;
  const claimName = `smoke-${Math.random().toString(36).slice(2, 8)}`;
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxclaims',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxClaim',
      metadata: { name: claimName },
      spec: { warmPoolRef: { name: 'sandboxd' } },
    },
  });
  const claim = await waitFor('claim Ready=True', 60_000, async () => {
    const obj = (await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxclaims',
      name: claimName,
    })) as {
      metadata: { generation?: number; uid?: string };
      status?: { sandbox?: { name?: string }; conditions?: { type: string; observedGeneration?: number }[] };
    };
    return readyCondition(obj)?.status === 'True' && obj.status?.sandbox?.name ? obj : undefined;
  });
  // v1.0.x: the claim's Ready condition carries the claim's own generation
  // (`extensions/controllers/sandboxclaim_controller.go@v1.0.3`).
  expect(claim.status?.conditions?.find((x) => x.type === 'Ready')?.observedGeneration).toBe(claim.metadata.generation);
  const sandboxName = claim.status!.sandbox!.name!;
  const sandbox = await c.custom.getNamespacedCustomObject({
    ...CORE,
    namespace: ns,
    plural: 'sandboxes',
    name: sandboxName,
  });
  expect(readyCondition(sandbox)).toMatchObject({ status: 'True', reason: 'DependenciesReady' });

  const pod = await c.core.readNamespacedPod({ namespace: ns, name: sandboxName });
  expect(pod.status?.phase).toBe('Running');
  const podIP = pod.status!.podIP!;
  expect(podIP).toMatch(new RegExp(`^127\\.${c.info.podNet}\\.\\d+\\.\\d+$`));

  // The stand-in ran v1.0.3's sandboxd with --listen-host=<pod IP>: it binds the pod IP's ports itself.
  const runtime = await waitFor('sandboxd for the pod', 15_000, async () =>
    readRuntimes(runDir).find((r) => r.uid === pod.metadata?.uid),
  );
  expect(runtime).toMatchObject({
    mode: 'sandboxd',
    podIP,
    restPort: 8080,
    grpcPort: 9090,
    listenHost: podIP,
    localRestPort: 8080,
    localGrpcPort: 9090,
  });
  const sandboxd = readFileSync(`/proc/${runtime.pid}/cmdline`, 'utf8').split('\0');
  expect(sandboxd).toContain(`--listen-host=${podIP}`);
  expect(sandboxd.some((a) => a.includes(`${path.sep}agent-sandbox-v1.0.3${path.sep}`))).toBe(true);

  const health = await waitFor('sandboxd /v1/health on the pod IP', 15_000, async () => {
    const r = await httpGet(8080, '/v1/health', {}, 2000, podIP).catch(() => undefined);
    return r?.status === 200 ? r : undefined;
  });
  expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
  const meta = await httpGet(8080, '/v1/metadata', {}, 2000, podIP);
  expect((JSON.parse(meta.body) as { env: Record<string, string> }).env).toMatchObject({
    SANDBOX_POD_NAME: sandboxName,
    SANDBOX_POD_IP: podIP,
  });
  const exec = await grpcExecute(podIP, 9090, ['sh', '-c', 'id -u; echo "$SANDBOX_POD_NAME"']);
  expect(exec).toEqual({
    exitCode: 0,
    stdout: `${process.getuid?.() === 0 ? 65534 : process.getuid?.()}\n${sandboxName}\n`,
    stderr: '',
  });
  // The v1.0.3 router: sandbox name + namespace only -> router cache -> pod IP:8080 -> sandboxd.
  const headers = { 'X-Sandbox-Id': sandboxName, 'X-Sandbox-Namespace': ns, 'X-Sandbox-Port': '8080' };
  const routed = await waitFor('router /v1/health 200', 15_000, async () => {
    const r = await httpGet(c.info.ports.routerHttp!, '/v1/health', headers);
    return r.status === 200 ? r : undefined;
  });
  expect(JSON.parse(routed.body)).toMatchObject({ status: 'ok' });

  // v1alpha1 is gone: no conversion, the apiserver does not serve that version at all.
  const alpha = await c.custom
    .getNamespacedCustomObject({ ...CORE, version: 'v1alpha1', namespace: ns, plural: 'sandboxes', name: sandboxName })
    .then(
      () => 'found',
      (err: unknown) => (err instanceof k8s.ApiException ? err.code : String(err)),
    );
  expect(alpha).toBe(404);

  await c.custom.deleteNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxclaims', name: claimName });
  await waitFor('Sandbox and Pod deleted', 30_000, async () =>
    (await isGone(() =>
      c.custom.getNamespacedCustomObject({ ...CORE, namespace: ns, plural: 'sandboxes', name: sandboxName }),
    )) && (await isGone(() => c.core.readNamespacedPod({ namespace: ns, name: sandboxName })))
      ? true
      : undefined,
  );
  await waitFor('stand-in stopped the runtime', 10_000, async () =>
    readRuntimes(runDir).some((r) => r.uid === pod.metadata?.uid) ? undefined : true,
  );
}, 150_000);
