/**
 * Case client-node-watch-reconnect against the real API server: `Cluster.waitFor` rides out connections cut by a
 * real TCP proxy (in this test, on 127.0.0.1) and a real `410 Gone` from the API server, stays polite (request rate
 * read from the API server's own `/metrics`, apiserver_request_total, not from our counters), holds its deadline,
 * records reconnects and re-reads the object before it reports success.
 *
 * Injected at the narrowest place, and only the fault itself: the proxy cuts connections, and for the 410 the wait's
 * read hands the watch a resourceVersion from before the watch cache's window (as a resume after a long cut would);
 * the 410 itself is the API server's answer.
 */
import * as k8s from '@kubernetes/client-node';
import net from 'node:net';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { Cluster, type Obj } from '../../../src/adapter/kubernetes/cluster.js';
import type { Result } from '../../../src/adapter/types.js';
import { kubeConfigFrom } from '../../../test-cluster/kube.js';
import { writeKubeconfig } from '../adapter/kube-env.js';
import { connect, freshNamespace, type Cluster as TestCluster } from '../helpers.js';

let c: TestCluster;
let ns: string;
let token: string;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'case24');
  token = kubeConfigFrom(c.info.kubeconfig).getCurrentUser()!.token!;
}, 30_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

/** A TCP proxy to the API server that can cut every open connection. */
function proxy(
  target: URL,
): Promise<{ port: number; cut: () => number; connections: () => number; close: () => void }> {
  const sockets = new Set<net.Socket>();
  let total = 0;
  const server = net.createServer((down) => {
    total += 1;
    const up = net.connect(Number(target.port), target.hostname);
    sockets.add(down).add(up);
    down.pipe(up).pipe(down);
    const drop = (): void => {
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    down.on('error', drop).on('close', drop);
    up.on('error', drop).on('close', drop);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        port,
        cut: () => {
          const n = sockets.size;
          for (const s of sockets) s.destroy();
          sockets.clear();
          return n;
        },
        connections: () => total,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      });
    });
  });
}

/** Sum of apiserver_request_total for configmaps, by verb (GET, WATCH, LIST), read from the API server's /metrics. */
async function configmapRequests(): Promise<Record<string, number>> {
  const kc = kubeConfigFrom(c.info.kubeconfig);
  const opts: import('node:https').RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const text = await new Promise<string>((resolve, reject) => {
    const url = new URL('/metrics', kc.getCurrentCluster()!.server);
    import('node:https').then((https) => {
      https
        .get(url, opts, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    }, reject);
  });
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('resource="configmaps"')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '?';
    out[verb] = (out[verb] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

const total = (before: Record<string, number>, after: Record<string, number>): number =>
  ['GET', 'WATCH', 'LIST'].reduce((n, v) => n + (after[v] ?? 0) - (before[v] ?? 0), 0);

async function configMap(name: string): Promise<void> {
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { ready: 'false' } } });
}
const markReady = (name: string) =>
  c.core.patchNamespacedConfigMap(
    { namespace: ns, name, body: { data: { ready: 'true' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );

function reader(client: KubeClient, name: string, staleFirst: number): () => Promise<Result<Obj | undefined>> {
  let reads = 0;
  return async () => {
    reads += 1;
    const r = await client.call('get configmaps', () =>
      client.api(k8s.CoreV1Api).readNamespacedConfigMap({ namespace: ns, name }),
    );
    if (r.kind !== 'ok') return r;
    const obj = JSON.parse(JSON.stringify(r.value)) as Obj;
    // The injected fault: a resourceVersion older than the API server's watch window, so the watch gets a real 410.
    if (reads <= staleFirst) obj.metadata = { ...obj.metadata, resourceVersion: '1' };
    return { kind: 'ok', value: obj };
  };
}
const isReady = (o: Obj | undefined): boolean =>
  (o as { data?: { ready?: string } } | undefined)?.data?.ready === 'true';
const path = (): string => `/api/v1/namespaces/${ns}/configmaps`;

test('connections cut every 1.5 s: the wait resumes, counts reconnects, re-reads, and stays at or below 1 request/s', async () => {
  const p = await proxy(new URL(c.info.apiServer));
  try {
    const client = KubeClient.connect({
      kubeconfig: writeKubeconfig(c.info, 'case24-proxy', { token }, `https://127.0.0.1:${p.port}`),
    });
    const cluster = new Cluster(client);
    await configMap('cut');
    const before = await configmapRequests();
    const lines: string[] = [];
    const cutter = setInterval(() => p.cut(), 1_500);
    const readyAt = setTimeout(() => void markReady('cut'), 9_000);
    const t0 = Date.now();
    const w = await cluster.waitFor(path(), 'cut', reader(client, 'cut', 0), isReady, {
      timeoutMs: 30_000,
      progress: (t) => lines.push(t),
    });
    const seconds = (Date.now() - t0) / 1000;
    clearInterval(cutter);
    clearTimeout(readyAt);
    expect(w.kind).toBe('matched');
    expect(isReady(w.kind === 'matched' ? w.obj : undefined)).toBe(true);
    expect(w.reconnects).toBeGreaterThanOrEqual(3);
    expect(lines.some((l) => l.startsWith('waiting for cut'))).toBe(true);
    await new Promise((r) => setTimeout(r, 1_000)); // cut watches are counted when the server sees them end
    const served = total(before, await configmapRequests());
    process.stderr.write(
      `case client-node-watch-reconnect cuts: ${served} configmap requests in ${seconds.toFixed(1)} s (${(served / seconds).toFixed(2)}/s), ${p.connections()} connections, ${w.reconnects} reconnects\n`,
    );
    expect(served / seconds).toBeLessThanOrEqual(1.2);
    expect(served).toBeGreaterThanOrEqual(2);
  } finally {
    p.close();
  }
}, 60_000);

// Skipped: a watch from resourceVersion 1 is still answered 200 by this API server (watch cache), even after an etcd
// compaction, so no real 410 is produced yet; the 410 path of waitFor is untested against the server until one is.
test.skip('a real 410 storm: every resume is stale; the wait backs off (≤ 1 request/s by the API server metrics) and holds its 12 s deadline', async () => {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const cluster = new Cluster(client);
  await configMap('storm');
  const before = await configmapRequests();
  const t0 = Date.now();
  const w = await cluster.waitFor(path(), 'storm', reader(client, 'storm', Infinity), isReady, { timeoutMs: 12_000 });
  const seconds = (Date.now() - t0) / 1000;
  expect(w.kind).toBe('timeout');
  expect(seconds).toBeLessThan(13);
  expect(w.gone).toBeGreaterThanOrEqual(2);
  await new Promise((r) => setTimeout(r, 500));
  const served = total(before, await configmapRequests());
  process.stderr.write(
    `case client-node-watch-reconnect 410 storm: ${served} configmap requests in ${seconds.toFixed(1)} s (${(served / seconds).toFixed(2)}/s), ${w.gone} x 410\n`,
  );
  expect(served / seconds).toBeLessThanOrEqual(1.2);
}, 30_000);

test.skip('after one real 410 the wait re-reads, resumes from a fresh resourceVersion and sees the change', async () => {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const cluster = new Cluster(client);
  await configMap('once');
  const readyAt = setTimeout(() => void markReady('once'), 3_000);
  const w = await cluster.waitFor(path(), 'once', reader(client, 'once', 1), isReady, { timeoutMs: 20_000 });
  clearTimeout(readyAt);
  expect(w.kind).toBe('matched');
  expect(w.gone).toBe(1);
  expect(w.reconnects).toBeGreaterThanOrEqual(1);
}, 30_000);
