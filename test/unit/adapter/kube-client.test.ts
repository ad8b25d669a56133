/**
 * KubeClient.connect's kubeconfig errors, and `call`'s deadline. The deadline test needs an API server that accepts the
 * connection and never answers, a fault the real API server cannot be made to produce: a loopback TCP listener plays it.
 */
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { KubeconfigError } from '../../../src/adapter/kubernetes/errors.js';
import { thrownBy } from '../thrown.js';

function kubeconfig(body: object): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'agentplane-kc-')), 'config');
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'Config', ...body }));
  return file;
}
const cluster = (server: string) => ({ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } });

test('connect: each unusable kubeconfig gives a KubeconfigError saying what to do', () => {
  const refused = (opts: Parameters<typeof KubeClient.connect>[0]) =>
    thrownBy(() => KubeClient.connect(opts), KubeconfigError, 'KubeconfigUnusable').details;
  expect(refused({ kubeconfig: '/nonexistent/kubeconfig' })).toEqual({
    problem: 'file-missing',
    name: '/nonexistent/kubeconfig',
  });
  const file = kubeconfig({
    clusters: [cluster('https://127.0.0.1:1')],
    users: [
      { name: 'u', user: { token: 't' } },
      { name: 'e', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', args: ['x'] } } },
    ],
    contexts: [
      { name: 'a', context: { cluster: 'c', user: 'u' } },
      { name: 'b', context: { cluster: 'c', user: 'ghost' } },
    ],
    'current-context': 'a',
  });
  expect(refused({ kubeconfig: file, context: 'nope' })).toEqual({
    problem: 'context-unknown',
    name: 'nope',
    known: ['a', 'b'],
  });
  expect(refused({ kubeconfig: file, context: 'b' })).toEqual({ problem: 'user-missing', name: 'ghost' });
  const ok = KubeClient.connect({ kubeconfig: file });
  expect([ok.context, ok.user, ok.server]).toEqual(['a', 'u', 'https://127.0.0.1:1']);
});

test('connect: an exec user without a command is refused up front', () => {
  const file = kubeconfig({
    clusters: [cluster('https://127.0.0.1:1')],
    users: [{ name: 'e', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '', args: ['x'] } } }],
    contexts: [{ name: 'a', context: { cluster: 'c', user: 'e' } }],
    'current-context': 'a',
  });
  expect(
    thrownBy(() => KubeClient.connect({ kubeconfig: file }), KubeconfigError, 'KubeconfigUnusable').details,
  ).toEqual({
    problem: 'exec-without-command',
    name: 'e',
  });
});

test('call: an API server that never answers hits the deadline and is classified as timeout', async () => {
  const sockets: net.Socket[] = [];
  const silent = net.createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (silent.address() as net.AddressInfo).port;
    const file = kubeconfig({
      clusters: [cluster(`http://127.0.0.1:${port}`)],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'a', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'a',
    });
    const client = KubeClient.connect({ kubeconfig: file, callTimeoutMs: 300 });
    const started = Date.now();
    const r = await client.call('list namespaces', () => client.api(k8s.CoreV1Api).listNamespace());
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r).toEqual({
      kind: 'failed',
      error: expect.objectContaining({ category: 'timeout', deadlineMs: 300 }),
    });
    expect(client.requests).toBe(1);
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});

test('connect without any kubeconfig refuses instead of falling back to http://localhost:8080', () => {
  const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
  delete process.env.KUBECONFIG;
  process.env.HOME = mkdtempSync(path.join(os.tmpdir(), 'agentplane-home-'));
  try {
    expect(thrownBy(() => KubeClient.connect(), KubeconfigError, 'KubeconfigUnusable').details).toEqual({
      problem: 'none-found',
    });
  } finally {
    if (saved.KUBECONFIG !== undefined) process.env.KUBECONFIG = saved.KUBECONFIG;
    process.env.HOME = saved.HOME;
  }
});

test('a relative exec command with a path is resolved against the kubeconfig directory, as kubectl does', async () => {
  const file = kubeconfig({
    clusters: [cluster('https://127.0.0.1:1')],
    users: [{ name: 'e', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './bin/helper' } } }],
    contexts: [{ name: 'a', context: { cluster: 'c', user: 'e' } }],
    'current-context': 'a',
  });
  const client = KubeClient.connect({ kubeconfig: file });
  const r = await client.call('list namespaces', () => client.api(k8s.CoreV1Api).listNamespace());
  expect(r.kind === 'failed' && r.error.credentialPlugin).toBe(path.join(path.dirname(file), 'bin/helper'));
});
