/**
 * The `/adapter` and `/verify` entry points export a value that connects (`connect`, `KubeClient.connect`): a user can
 * build the KubeClient that KubeCapabilityAdapter and runVerify take. No cluster: a kubeconfig naming a closed loopback
 * port resolves its context and server, and the first call fails as `unreachable`.
 */
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as adapter from '../../../src/adapter/adapter.js';
import * as verify from '../../../src/verify/index.js';

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

test.each([
  ['adapter', adapter],
  ['verify', verify],
] as const)('/%s: connect() resolves the kubeconfig and the first call is typed unreachable', async (_name, mod) => {
  const port = await closedPort();
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'agentplane-connect-')), 'config');
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}, {name: d, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}, {name: other, context: {cluster: d, user: u}}]\n`,
  );
  const client = mod.connect({ kubeconfig: file });
  expect(client).toBeInstanceOf(mod.KubeClient);
  expect([client.context, client.server]).toEqual(['t', `https://127.0.0.1:${port}`]);
  expect(mod.connect({ kubeconfig: [file], context: 'other' }).server).toBe('https://127.0.0.1:1');
  expect(mod.KubeClient.connect({ kubeconfig: file }).server).toBe(client.server);
  const r = await client.call('list namespaces', () => client.api(k8s.CoreV1Api).listNamespace());
  expect(r.kind === 'failed' ? r.error.category : r.kind).toBe('unreachable');
  expect(() => mod.connect({ kubeconfig: file, context: 'nope' })).toThrow(mod.KubeconfigError);
});
