/**
 * KubeClient.connect's kubeconfig errors, and `call`'s deadline. The deadline tests need an API server that accepts the
 * connection and never answers, a fault the real API server cannot be made to produce: a loopback listener plays it
 * (a TCP one for a call; an HTTP one that answers the read and never the watch for a wait).
 */
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { connect, KubeClient, kubeconfigNamespace } from '../../../src/adapter/kubernetes/client.js';
import { Cluster } from '../../../src/adapter/kubernetes/cluster.js';
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

/** Resolves with the ms from `since` to the socket's close (the client closing it: this side never does). */
const closedAfter = (s: net.Socket, since: () => number): Promise<number> =>
  new Promise((r) => s.once('close', () => r(Date.now() - since())));

test('call: an API server that never answers hits the deadline, is classified as timeout, and the socket is closed', async () => {
  const sockets: net.Socket[] = [];
  const closes: Promise<number>[] = [];
  let started = 0;
  const silent = net.createServer((s) => {
    s.resume(); // read (and drop) the request, so the client's close reaches 'close' here
    sockets.push(s);
    closes.push(closedAfter(s, () => started));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (silent.address() as net.AddressInfo).port;
    const file = kubeconfig({
      clusters: [cluster(`http://127.0.0.1:${port}`)],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'a', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'a',
    });
    const client = KubeClient.connect({ kubeconfig: file, callTimeoutMs: 1500 });
    started = Date.now();
    const r = await client.call('list namespaces', () => client.api(k8s.CoreV1Api).listNamespace());
    expect(r).toEqual({
      kind: 'failed',
      error: expect.objectContaining({ category: 'timeout', deadlineMs: 1500 }),
    });
    expect(client.requests).toBe(1);
    // The deadline aborted the request: its connection is closed by the client, not left open (before, it stayed
    // open until the listener went away).
    expect(sockets).toHaveLength(1);
    expect(await Promise.race([closes[0]!, new Promise((r) => setTimeout(() => r('still open'), 3000))])).toEqual(
      expect.any(Number),
    );
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

test('waitFor: a watch the API server never answers is closed at the wait deadline', async () => {
  // Answers the read (an object that never becomes ready) and holds every watch request without a response.
  const watches: Array<{ socket: net.Socket; closed: Promise<number> }> = [];
  let started = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.includes('watch=true')) {
      watches.push({ socket: req.socket, closed: closedAfter(req.socket, () => started) });
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', resourceVersion: '7' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (server.address() as net.AddressInfo).port;
    const file = kubeconfig({
      clusters: [cluster(`http://127.0.0.1:${port}`)],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'a', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'a',
    });
    const c = new Cluster(KubeClient.connect({ kubeconfig: file }));
    started = Date.now();
    const out = await c.waitFor(
      '/api/v1/namespaces/d/configmaps',
      'x',
      () =>
        c.client
          .call('get configmaps', () =>
            c.client.api(k8s.CoreV1Api).readNamespacedConfigMap({ namespace: 'd', name: 'x' }),
          )
          .then((r) => (r.kind === 'ok' ? { kind: 'ok' as const, value: r.value as Record<string, unknown> } : r)),
      () => false,
      // Long enough for the read and the watch's request to reach the listener on a loaded machine.
      { timeoutMs: 2000 },
    );
    expect(out.kind).toBe('timeout');
    expect(watches).toHaveLength(1);
    // Closed by the client at the deadline (before, client-node's Watch could not abort a request without headers).
    const closed = await Promise.race([
      watches[0]!.closed,
      new Promise((r) => setTimeout(() => r('still open'), 3000)),
    ]);
    expect(closed).toEqual(expect.any(Number));
  } finally {
    for (const w of watches) w.socket.destroy();
    server.closeAllConnections(); // the read's keep-alive connection
    server.close();
  }
});

describe('kubeconfig lists merge as kubectl merges $KUBECONFIG', () => {
  const a = () =>
    kubeconfig({
      clusters: [cluster('https://127.0.0.1:1'), { name: 'shared', cluster: { server: 'https://a.example:6443' } }],
      users: [{ name: 'u', user: { token: 'a' } }],
      contexts: [
        { name: 'a', context: { cluster: 'c', user: 'u' } },
        { name: 'both', context: { cluster: 'shared', user: 'u', namespace: 'from-a' } },
      ],
      'current-context': 'a',
    });
  const b = () =>
    kubeconfig({
      clusters: [
        { name: 'shared', cluster: { server: 'https://b.example:6443' } },
        { name: 'only-b', cluster: { server: 'https://only-b.example:6443' } },
      ],
      users: [
        { name: 'u', user: { token: 'b' } },
        { name: 'ub', user: { token: 'b' } },
      ],
      contexts: [
        { name: 'both', context: { cluster: 'only-b', user: 'ub', namespace: 'from-b' } },
        { name: 'b', context: { cluster: 'only-b', user: 'ub' } },
      ],
      'current-context': 'b',
    });
  const withEnv = <T>(value: string | undefined, fn: () => T): T => {
    const saved = process.env.KUBECONFIG;
    if (value === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = value;
    try {
      return fn();
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  };

  test('$KUBECONFIG=a:missing:b: the missing file is skipped, the first current-context and the first of each name win', () => {
    const [fa, fb] = [a(), b()];
    withEnv([fa, '/nonexistent/kubeconfig', '', fb].join(path.delimiter), () => {
      const first = KubeClient.connect();
      expect([first.context, first.user, first.server]).toEqual(['a', 'u', 'https://127.0.0.1:1']);
      // `both` is a's context (cluster shared, a's server); `b` exists only in b
      expect(KubeClient.connect({ context: 'both' }).server).toBe('https://a.example:6443');
      const onlyB = KubeClient.connect({ context: 'b' });
      expect([onlyB.user, onlyB.server]).toEqual(['ub', 'https://only-b.example:6443']);
      expect(kubeconfigNamespace({ context: 'both' })).toBe('from-a');
    });
    withEnv([fb, fa].join(path.delimiter), () => {
      expect(KubeClient.connect().context).toBe('b');
      expect(KubeClient.connect({ context: 'both' }).server).toBe('https://only-b.example:6443');
    });
  });

  test('a list given in code merges the same way; --kubeconfig beats $KUBECONFIG', () => {
    const [fa, fb] = [a(), b()];
    expect(connect({ kubeconfig: [fb, fa] }).context).toBe('b');
    withEnv(fa, () => expect(connect({ kubeconfig: fb }).context).toBe('b'));
  });

  test('a list of only missing files is none-found; a named missing file is file-missing', () => {
    withEnv(['/nonexistent/a', '/nonexistent/b'].join(path.delimiter), () =>
      expect(thrownBy(() => connect(), KubeconfigError, 'KubeconfigUnusable').details).toEqual({
        problem: 'none-found',
      }),
    );
    expect(
      thrownBy(() => connect({ kubeconfig: '/nonexistent/a' }), KubeconfigError, 'KubeconfigUnusable').details,
    ).toEqual({ problem: 'file-missing', name: '/nonexistent/a' });
  });
});
