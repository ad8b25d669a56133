/**
 * Case client-node-watch-reconnect against the real API server: `Cluster.waitFor` rides out connections cut by a
 * real TCP proxy (in this test, on 127.0.0.1) and a real `410 Gone` from the API server, stays polite (request rate
 * read from the API server's own `/metrics`, apiserver_request_total, not from our counters), holds its deadline,
 * records reconnects (the evidence note) and re-reads the object before it reports success.
 *
 * The object waited for is a PodTemplate: no other test uses them, and the only other readers, kube-controller-manager's
 * garbage-collector and quota reflectors, list and watch cluster-wide, so the namespace- and object-scoped counters for
 * that resource are this file's alone. The test cluster serves them without the watch cache
 * (`--watch-cache-sizes=podtemplates#0`, test-cluster/scripts/up.sh), so their watches go to etcd. The 410 is real:
 * between the wait's read and its watch the test writes twice and compacts etcd past the read's revision (etcd's v3
 * JSON gateway), the race a resume after a long cut runs into; the API server answers the watch with an in-stream
 * `ERROR` Status 410 (Expired). Nothing is faked: the hook only orders the compaction between the read and the watch.
 * Figures printed here are the ones in bench/README.md ("Watch faults").
 */
import * as k8s from '@kubernetes/client-node';
import https from 'node:https';
import net from 'node:net';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { Cluster, type Obj } from '../../../src/adapter/kubernetes/cluster.js';
import type { Result } from '../../../src/adapter/types.js';
import { reconnected } from '../../../src/verify/probes/workload/readiness.js';
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

/** A TCP proxy to the API server that cuts every connection `cutAfterMs` after it opened. */
function proxy(
  target: URL,
  cutAfterMs: number,
): Promise<{ port: number; connections: () => number; close: () => void }> {
  const sockets = new Set<net.Socket>();
  let total = 0;
  const server = net.createServer((down) => {
    total += 1;
    const up = net.connect(Number(target.port), target.hostname);
    sockets.add(down).add(up);
    down.pipe(up).pipe(down);
    const drop = (): void => {
      clearTimeout(timer);
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    const timer = setTimeout(drop, cutAfterMs);
    down.on('error', drop).on('close', drop);
    up.on('error', drop).on('close', drop);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        connections: () => total,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      });
    });
  });
}

/**
 * Sum of apiserver_request_total for podtemplates by verb (GET, WATCH, LIST), from the API server's /metrics, leaving
 * out scope="cluster": kube-controller-manager's reflectors re-list and re-watch cluster-wide when etcd compaction
 * expires their watch, which the storm does.
 */
async function served(): Promise<Record<string, number>> {
  const kc = kubeConfigFrom(c.info.kubeconfig);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const text = await new Promise<string>((resolve, reject) => {
    https
      .get(new URL('/metrics', c.info.apiServer), opts, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('resource="podtemplates"')) continue;
    if (line.includes('scope="cluster"')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '?';
    out[verb] = (out[verb] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

const reads = (before: Record<string, number>, after: Record<string, number>): number =>
  ['GET', 'WATCH', 'LIST'].reduce((n, v) => n + (after[v] ?? 0) - (before[v] ?? 0), 0);

/**
 * The counts once an earlier test's watches are in them: the API server counts a WATCH when its stream ends, which
 * can be a moment after the client closed it, so a count taken at once may gain one inside the next measurement.
 */
async function servedSettled(): Promise<Record<string, number>> {
  let last = await served();
  for (let i = 0; i < 10; i++) {
    await settle(500);
    const now = await served();
    if (reads(last, now) === 0) return now;
    last = now;
  }
  return last;
}

/** POSTs JSON to etcd's v3 gateway on the cluster's etcd client port. */
async function etcd(path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`http://127.0.0.1:${c.info.ports.etcd}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`etcd ${path}: HTTP ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
}

const template = (name: string, ready: boolean) => ({
  metadata: { name, labels: { ready: String(ready) } },
  template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'none' }] } },
});
async function podTemplate(name: string): Promise<void> {
  await c.core.createNamespacedPodTemplate({ namespace: ns, body: template(name, false) });
}
const markReady = (name: string) =>
  c.core.patchNamespacedPodTemplate(
    { namespace: ns, name, body: { metadata: { labels: { ready: 'true' } } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );

/** Two writes, then an etcd compaction at the second one's revision: every older resourceVersion is gone. */
async function compactPast(): Promise<number> {
  const noise = `noise-${Math.random().toString(36).slice(2, 8)}`;
  await c.core.createNamespacedPodTemplate({ namespace: ns, body: template(noise, false) });
  const second = await c.core.deleteNamespacedPodTemplate({ namespace: ns, name: noise });
  const revision = Number((second as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion);
  // A concurrent compaction (the storm's loop) may already have gone past this revision, which is just as good.
  await etcd('/v3/kv/compaction', { revision: String(revision), physical: true }).catch((err: Error) => {
    // prose: etcd's own error text, the only signal its HTTP gateway gives for an already-compacted revision
    if (!/required revision has been compacted/.test(err.message)) throw err;
  });
  return revision;
}

/**
 * The wait's read: a real GET through `client`; for the first `compactAfter` reads the test then compacts etcd past
 * the resourceVersion just read, so the watch that follows is answered 410 by the API server. Records what it read.
 */
function reader(
  client: KubeClient,
  name: string,
  compactAfter: number,
  seen: { rv: number; compactedTo?: number }[],
): () => Promise<Result<Obj | undefined>> {
  return async () => {
    const r = await client.call('get podtemplates', () =>
      client.api(k8s.CoreV1Api).readNamespacedPodTemplate({ namespace: ns, name }),
    );
    if (r.kind !== 'ok') return r;
    const obj = JSON.parse(JSON.stringify(r.value)) as Obj;
    const entry: { rv: number; compactedTo?: number } = { rv: Number(obj.metadata?.resourceVersion) };
    if (seen.length < compactAfter) entry.compactedTo = await compactPast();
    seen.push(entry);
    return { kind: 'ok', value: obj };
  };
}
const isReady = (o: Obj | undefined): boolean => o?.metadata?.labels?.ready === 'true';
const path = (): string => `/api/v1/namespaces/${ns}/podtemplates`;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms)); // a watch is counted when the server sees it end

test('the API server answers a watch from a compacted resourceVersion with an in-stream 410 (the fault is real)', async () => {
  await podTemplate('probe');
  const rv = (await c.core.readNamespacedPodTemplate({ namespace: ns, name: 'probe' })).metadata!.resourceVersion!;
  await compactPast();
  const events: { phase: string; code?: number | undefined; reason?: string | undefined }[] = [];
  await new Promise<void>((resolve) => {
    void new k8s.Watch(c.kc).watch(
      path(),
      { resourceVersion: rv, fieldSelector: 'metadata.name=probe' },
      (phase: string, obj: { code?: number; reason?: string }) =>
        events.push({ phase, code: obj.code, reason: obj.reason }),
      () => resolve(),
    );
  });
  expect(events).toEqual([{ phase: 'ERROR', code: 410, reason: 'Expired' }]);
}, 30_000);

test('after one real 410 the wait re-reads, resumes at the current state (no stale resourceVersion), sees Ready and notes the reconnect', async () => {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const cluster = new Cluster(client);
  await podTemplate('once');
  const seen: { rv: number; compactedTo?: number }[] = [];
  const readyAt = setTimeout(() => void markReady('once'), 4_000);
  const w = await cluster.waitFor(path(), 'once', reader(client, 'once', 1, seen), isReady, { timeoutMs: 20_000 });
  clearTimeout(readyAt);
  expect(w.kind).toBe('matched');
  expect(isReady(w.kind === 'matched' ? w.obj : undefined)).toBe(true);
  expect(w.gone).toBe(1);
  expect(w.errors).toBe(0);
  expect(w.reconnects).toBeGreaterThanOrEqual(1);
  // The re-read object still carries its last write's revision, older than the compaction (a resume from it would be
  // answered 410 again); the single 410 shows the resume opened at the current state instead. The match was
  // confirmed by a last read of the Ready object, written after the compaction.
  expect(seen[0]!.compactedTo).toBeGreaterThan(seen[0]!.rv);
  expect(seen[1]!.rv).toBeLessThan(seen[0]!.compactedTo!);
  expect(Number((w as { obj: Obj }).obj.metadata?.resourceVersion)).toBeGreaterThan(seen[0]!.compactedTo!);
  expect(reconnected(w)).toContain('1 × 410 Gone');
}, 40_000);

test('a 410 storm: etcd compacted past every revision read, every 300 ms; one 410, then the wait holds a watch, ≤ 1 request/s by the API server metrics, 12 s deadline kept', async () => {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const cluster = new Cluster(client);
  await podTemplate('storm');
  const seen: { rv: number; compactedTo?: number }[] = [];
  const before = await servedSettled();
  let storming = true;
  const storm = (async () => {
    while (storming) {
      await compactPast();
      await settle(300);
    }
  })();
  const t0 = Date.now();
  const w = await cluster.waitFor(path(), 'storm', reader(client, 'storm', Infinity, seen), isReady, {
    timeoutMs: 12_000,
  });
  const seconds = (Date.now() - t0) / 1000;
  storming = false;
  await storm;
  expect(w.kind).toBe('timeout');
  expect(seconds).toBeGreaterThanOrEqual(12);
  expect(seconds).toBeLessThan(13.5);
  // The first watch (from the read's revision, compacted at once) is answered 410; the resume opens at the current
  // state, which later compactions do not expire. Resuming from the object's revision again would 410 every round.
  expect(w.gone).toBe(1);
  expect(seen.every((s) => s.compactedTo! > s.rv)).toBe(true);
  await settle(1_000);
  const n = reads(before, await served());
  process.stderr.write(
    `case client-node-watch-reconnect 410 storm: ${n} podtemplate requests (GET+WATCH+LIST) in ${seconds.toFixed(1)} s (${(n / seconds).toFixed(2)}/s), ${w.gone} x 410, ${w.reconnects} reconnects\n`,
  );
  expect(n).toBe(2 * seen.length); // a GET and a WATCH per round, as the API server counted them
  expect(n / seconds).toBeLessThanOrEqual(1);
  expect(reconnected(w)).toContain('1 × 410 Gone');
}, 30_000);

test('connections cut 1.5 s after they open: the wait resumes, counts reconnects, re-reads, and stays at or below 1 request/s', async () => {
  const p = await proxy(new URL(c.info.apiServer), 1_500);
  try {
    const client = KubeClient.connect({
      kubeconfig: writeKubeconfig(c.info, 'case24-proxy', { token }, `https://127.0.0.1:${p.port}`),
    });
    const cluster = new Cluster(client);
    await podTemplate('cut');
    const seen: { rv: number }[] = [];
    const before = await servedSettled();
    const lines: string[] = [];
    const readyAt = setTimeout(() => void markReady('cut'), 9_000);
    const t0 = Date.now();
    const w = await cluster.waitFor(path(), 'cut', reader(client, 'cut', 0, seen), isReady, {
      timeoutMs: 40_000,
      progress: (t) => lines.push(t),
    });
    const seconds = (Date.now() - t0) / 1000;
    clearTimeout(readyAt);
    expect(w.kind).toBe('matched');
    expect(isReady(w.kind === 'matched' ? w.obj : undefined)).toBe(true);
    expect(w.reconnects).toBeGreaterThanOrEqual(3);
    expect(w.errors).toBeGreaterThanOrEqual(3);
    expect(lines.some((l) => l.startsWith('waiting for cut'))).toBe(true);
    expect(reconnected(w)).toMatch(/watch reconnected \d+ time\(s\)/);
    await settle(1_000);
    const n = reads(before, await served());
    process.stderr.write(
      `case client-node-watch-reconnect cuts: ${n} podtemplate requests (GET+WATCH+LIST) in ${seconds.toFixed(1)} s (${(n / seconds).toFixed(2)}/s), ${p.connections()} connections, ${w.reconnects} reconnects\n`,
    );
    expect(n / seconds).toBeLessThanOrEqual(1);
    expect(n).toBeGreaterThanOrEqual(seen.length + 1);
  } finally {
    p.close();
  }
}, 60_000);
