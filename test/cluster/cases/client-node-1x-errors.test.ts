/**
 * Case client-node-1x-errors on the real API server with the real client-node 1.4: one classifier maps 404 (API not
 * served vs object missing), 403 (verb, resource, user named), 401 (context and user named, never the token) and a refused
 * connection to typed outcomes.
 */
import * as k8s from '@kubernetes/client-node';
import net from 'node:net';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { detectRelease } from '../../../src/adapter/kubernetes/release.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { writeKubeconfig } from '../adapter/kube-env.js';

let c: Cluster;
let ns: string;
let admin: KubeClient;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'case22');
  admin = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
}, 30_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

const listSandboxes = (client: KubeClient, version: string, group = 'agents.x-k8s.io') =>
  client.call(`list sandboxes.${group} in ${ns}`, () =>
    client.api(k8s.CustomObjectsApi).listNamespacedCustomObject({ group, version, namespace: ns, plural: 'sandboxes' }),
  );

test('404 on a list: the version is not served / the CRD is not installed -> not-found, missing api', async () => {
  for (const r of [await listSandboxes(admin, 'v9'), await listSandboxes(admin, 'v1', 'not-installed.example.com')]) {
    expect(r.kind).toBe('failed');
    if (r.kind !== 'failed') continue;
    expect(r.error).toMatchObject({ category: 'not-found', missing: 'api', code: 404, request: { verb: 'list' } });
  }
});

test('404 on a named object: not-found, missing object, with the name', async () => {
  const r = await admin.call('get sandboxes.agents.x-k8s.io', () =>
    admin.api(k8s.CustomObjectsApi).getNamespacedCustomObject({
      group: 'agents.x-k8s.io',
      version: 'v1beta1',
      namespace: ns,
      plural: 'sandboxes',
      name: 'absent',
    }),
  );
  expect(r.kind === 'failed' && r.error).toMatchObject({
    category: 'not-found',
    missing: 'object',
    reason: 'NotFound',
    code: 404,
  });
  expect(r.kind === 'failed' && r.error.request?.name).toBe('absent');
});

test('403 names verb, resource and user; 401 names context and user, never the token', async () => {
  await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'nobody' } } });
  const tr = await c.core.createNamespacedServiceAccountToken({
    namespace: ns,
    name: 'nobody',
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const sa = KubeClient.connect({ kubeconfig: writeKubeconfig(c.info, 'nobody-user', { token: tr.status!.token }) });
  const forbidden = await listSandboxes(sa, 'v1beta1');
  expect(forbidden.kind).toBe('failed');
  if (forbidden.kind === 'failed') {
    expect(forbidden.error).toMatchObject({
      category: 'forbidden',
      code: 403,
      reason: 'Forbidden',
      request: { verb: 'list', resource: 'sandboxes.agents.x-k8s.io', user: 'nobody-user', context: 'ctx' },
    });
    // The API server's own words name the identity it resolved the token to.
    // prose: the API server's Status message, upstream words carried through
    expect(forbidden.error.request?.serverMessage).toContain(`system:serviceaccount:${ns}:nobody`);
  }
  // Discovery needs no grant: the family is still detectable with that identity.
  const rel = await detectRelease(sa);
  expect(rel.kind === 'ok' && rel.value.family).toBe('v0.5');

  const secret = 'not-a-valid-token-3f9a1c';
  const bad = KubeClient.connect({ kubeconfig: writeKubeconfig(c.info, 'ci', { token: secret }) });
  const unauth = await listSandboxes(bad, 'v1beta1');
  expect(unauth.kind).toBe('failed');
  if (unauth.kind === 'failed') {
    expect(unauth.error).toMatchObject({
      category: 'unauthenticated',
      code: 401,
      request: { user: 'ci', context: 'ctx' },
    });
    expect(JSON.stringify(unauth.error)).not.toContain(secret);
  }
}, 30_000);

test('a server that refuses connections: unreachable, no HTTP status', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const down = KubeClient.connect({
    kubeconfig: writeKubeconfig(c.info, 'ci', { token: 'x' }, `https://127.0.0.1:${port}`),
  });
  const r = await listSandboxes(down, 'v1beta1');
  expect(r.kind === 'failed' && r.error).toMatchObject({ category: 'unreachable', errno: 'ECONNREFUSED' });
  expect(r.kind === 'failed' && [r.error.code, r.error.request]).toEqual([undefined, undefined]);
});
