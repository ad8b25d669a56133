/**
 * The runtime stand-in's per-pod modes (annotation `test-cluster.agentplane.io/runtime`, test-cluster/README.md):
 * `none` reproduces "Sandbox Ready but runtime silent" (the router's dial to the pod IP is refused), `hang` a runtime that
 * accepts connections and never answers. Both Sandboxes are Ready — kwok marks pods Ready without running anything.
 */
import net from 'node:net';
import { RUNTIME_ANNOTATION, readRuntimes } from '../../test-cluster/runtime.js';
import {
  connect,
  freshNamespace,
  httpGet,
  readyCondition,
  sandboxdPodTemplate,
  waitFor,
  type Cluster,
} from './helpers.js';

const SBX = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes' };
let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'standin');
}, 30_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

async function readySandbox(name: string, mode: string): Promise<string> {
  await c.custom.createNamespacedCustomObject({
    ...SBX,
    namespace: ns,
    body: {
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name },
      spec: { podTemplate: sandboxdPodTemplate({ [RUNTIME_ANNOTATION]: mode }) },
    },
  });
  await waitFor(`Sandbox ${name} Ready`, 30_000, async () => {
    const obj = await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name });
    return readyCondition(obj)?.status === 'True' ? true : undefined;
  });
  const pod = await c.core.readNamespacedPod({ namespace: ns, name });
  const rec = await waitFor(`stand-in record for ${name}`, 10_000, async () =>
    readRuntimes().find((r) => r.uid === pod.metadata?.uid),
  );
  expect(rec).toMatchObject({ mode, podIP: pod.status?.podIP, pid: null });
  return pod.status!.podIP!;
}

test('mode none: Sandbox Ready, runtime silent — the router gets no answer from the pod IP', async () => {
  await readySandbox('silent', 'none');
  const r = await waitFor('router answers with an error status', 15_000, async () => {
    const a = await httpGet(c.info.ports.routerHttp!, '/v1/health', {
      'X-Sandbox-Id': 'silent',
      'X-Sandbox-Namespace': ns,
      'X-Sandbox-Port': '8080',
    });
    return a.status === 404 ? undefined : a; // 404 until the router cache has the pod
  });
  expect(r.status).toBeGreaterThanOrEqual(500);
}, 60_000);

test('mode hang: the pod IP accepts TCP and never answers', async () => {
  const ip = await readySandbox('hanging', 'hang');
  const direct = await new Promise<string>((resolve) => {
    const s = net.connect(8080, ip, () => {
      s.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
      setTimeout(() => {
        s.destroy();
        resolve('connected, no answer');
      }, 1500);
    });
    s.on('data', () => {
      s.destroy();
      resolve('answered');
    });
    s.on('error', (e) => resolve(`error ${e.message}`));
  });
  expect(direct).toBe('connected, no answer');
}, 60_000);
