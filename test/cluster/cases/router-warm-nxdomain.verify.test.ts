/**
 * Case router-warm-nxdomain on the test cluster: the real v0.5.6 sandbox-router, a second
 * instance of the binary the cluster runs (its own command line, read from /proc, with fresh ports) started with
 * `--cache-enabled=false`, in front of the verifier's own probe sandbox, a warm-pool Sandbox that is Ready and has no
 * per-sandbox Service. The verifier samples execution through the router exactly as the pinned SDK addresses it (by
 * name, no `X-Sandbox-Pod-IP`), 20 times, and directly: the router stays below verified with the cause class, the
 * missing Service and the cache setting; the cluster's own router (cache enabled) verifies the same sandbox 20/20.
 *
 * The test cluster has no cluster DNS, so the router's resolver (its /etc/resolv.conf, bind-mounted in a private mount
 * namespace as up.sh does) names a DNS responder this test runs on a loopback address: it answers NXDOMAIN to every
 * query, as cluster DNS does for `<name>.<ns>.svc.cluster.local` when no Service of that name exists. That responder
 * is the only stand-in; the router's 502 and its log line ("no such host") are the router's own.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadRelease, type LoadedRelease } from '../../../src/releases/index.js';
import { runVerify } from '../../../src/verify/index.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { connect, freshNamespace, httpGet, type Cluster } from '../helpers.js';
import { connectAs, EXT, plan, sandboxdTemplate, templatePlan, verifierKubeconfig } from '../verify/verifier-env.js';
import { MIRROR } from '../../mirror.js';

/** Reasons of the router's path evidence: reached the runtime, or the upstream failure's cause class. */
const PATH_REASONS = /^Router(ReachedRuntime|Upstream)/;

let c: Cluster;
let ns: string;
let kubeconfig: string;
let loaded: LoadedRelease;
let dns: dgram.Socket;
let router: ChildProcess | undefined;
let routerLog = '';
let routerPort = 0;
const queries: string[] = [];

/** A DNS answer with RCODE 3 (NXDOMAIN) for `query`: same id and question, QR/AA/RA set, no records. */
function nxdomain(query: Buffer): Buffer {
  const out = Buffer.from(query);
  out[2] = 0x84 | (query[2]! & 0x79); // QR=1, opcode kept, AA=1, RD kept
  out[3] = 0x80 | 0x03; // RA=1, RCODE=3
  out.writeUInt16BE(0, 6);
  out.writeUInt16BE(0, 8);
  out.writeUInt16BE(0, 10);
  return out;
}
function qname(query: Buffer): string {
  const labels: string[] = [];
  for (let i = 12; i < query.length && query[i]! > 0; i += query[i]! + 1)
    labels.push(query.subarray(i + 1, i + 1 + query[i]!).toString('ascii'));
  return labels.join('.');
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The cluster's router command line with fresh ports and `--cache-enabled=false`, resolving through `nameserver`. */
async function startRouter(nameserver: string): Promise<void> {
  const pid = readFileSync(path.join(c.info.runDir, 'pids/sandbox-router.pid'), 'utf8').trim();
  const [bin, ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const [http, metrics, probe] = [await freePort(), await freePort(), await freePort()];
  const swap: Record<string, string> = {
    '--http-bind-address': `127.0.0.1:${http}`,
    '--metrics-bind-address': `127.0.0.1:${metrics}`,
    '--health-probe-bind-address': `127.0.0.1:${probe}`,
  };
  const own = args
    .filter((a) => !a.startsWith('--cache-enabled'))
    .map((a) => {
      const k = a.split('=')[0]!;
      return k in swap ? `${k}=${swap[k]}` : a;
    });
  own.push('--cache-enabled=false');
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-case03-'));
  const resolv = path.join(dir, 'resolv.conf');
  writeFileSync(resolv, `nameserver ${nameserver}\n`);
  router = spawn(
    'unshare',
    ['-m', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolv, bin!, ...own],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  router.stdout!.setEncoding('utf8').on('data', (d: string) => (routerLog += d));
  router.stderr!.setEncoding('utf8').on('data', (d: string) => (routerLog += d));
  for (let i = 0; i < 100; i += 1) {
    const up = await httpGet(probe, '/readyz', {}, 1_000).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) {
      routerPort = http;
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`router with --cache-enabled=false did not become ready:\n${routerLog}`);
}

beforeAll(async () => {
  c = connect();
  expect(spawnSync('unshare', ['-m', 'true']).status).toBe(0); // the router's private resolv.conf needs a mount namespace
  ns = await freshNamespace(c, 'case03');
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'pool', 'sandboxd'),
  });
  kubeconfig = (await verifierKubeconfig(c, ns, [ns])).file;
  loaded = await loadRelease('v0.5.6', { mirror: MIRROR });
  const address = `127.53.${c.info.podNet}.53`;
  dns = dgram.createSocket('udp4');
  dns.on('message', (m, from) => {
    queries.push(qname(m));
    dns.send(nxdomain(m), from.port, from.address);
  });
  await new Promise<void>((resolve) => dns.bind(53, address, resolve));
  await startRouter(address);
}, 120_000);

afterAll(async () => {
  router?.kill('SIGTERM');
  dns?.close();
  if (ns) await c.core.deleteNamespace({ name: ns });
});

const row = (r: VerifyReport, name: string) => r.capabilities.find((x) => x.name === name)!;
const routerPlan = (url: string) => ({
  namespace: 'agent-sandbox-system',
  service: 'sandbox-router-svc',
  podLabels: { app: 'sandbox-router' },
  url,
});

test('router with its cache disabled: 502 by name for the warm-pool sandbox; router below verified, NXDOMAIN, no Service, cache named', async () => {
  const { report } = await runVerify({
    plan: plan(c, [templatePlan(ns, 'pool')], { router: routerPlan(`http://127.0.0.1:${routerPort}`), samples: 20 }),
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
    runId: 'c03a01',
  });
  // The direct path answered every sample; the router path did not.
  expect(row(report, 'runtime-exec').state).toBe('verified');
  const r = row(report, 'router');
  expect(r.state).not.toBe('verified');
  // The path evidence (the negative probes' findings about this allow-all router are case router-podip-ssrf's).
  const failed = r.evidence.filter((e) => e.step === 'verified' && PATH_REASONS.test(e.reason));
  expect(failed.map((e) => [e.verdict, e.reason, e.value])).toEqual([
    ['unknown', 'RouterUpstreamNxdomain', 'sample 1/20'],
  ]);
  const sandbox = failed[0]!.subject.split('/').pop()!;
  // The router's own answer, as the classifier saw it, and as a client gets it by name: 502 and no cause in the body.
  // prose: the router's own 502 body (upstream words) quoted in the evidence
  expect(failed[0]!.message).toContain(
    `answered 502 {"detail":"Could not connect to the backend sandbox: ${sandbox}"}`,
  );
  const raw = await httpGet(routerPort, '/v1/health', {
    'X-Sandbox-ID': sandbox,
    'X-Sandbox-Namespace': ns,
    'X-Sandbox-Port': '8080',
  });
  // prose: the router's own 502 body (upstream words), read directly
  expect([raw.status, JSON.parse(raw.body)]).toEqual([
    502,
    { detail: `Could not connect to the backend sandbox: ${sandbox}` },
  ]);
  // The controls behind the class: no per-sandbox Service, and the router reached the pod by its IP (its cache missed).
  expect(failed[0]!.observed).toEqual({ perSandboxService: 0, byPodIpAnswered: 1 });
  // What the router really did: a DNS lookup of the name, answered NXDOMAIN, and "no such host" in its own log.
  expect(queries.some((q) => q.startsWith(`verify-c03a01-`) && q.endsWith(`.${ns}.svc.cluster.local`))).toBe(true);
  expect(routerLog).toMatch(/no such host/);
}, 240_000);

test('the same sandbox through the cluster router (cache enabled): the router path is proven 20/20', async () => {
  const { report } = await runVerify({
    plan: plan(c, [templatePlan(ns, 'pool')], { samples: 20 }),
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
    runId: 'c03a02',
  });
  const r = row(report, 'router');
  const path = r.evidence.filter((e) => e.step === 'verified' && PATH_REASONS.test(e.reason));
  expect(path.map((e) => [e.verdict, e.reason, e.value])).toEqual([['proven', 'RouterReachedRuntime', '20/20']]);
  // What keeps this router below verified is not its path: the test cluster's router is a local process (no pod for
  // the live admission check) that is allow-all and dials loopback pod IPs (case router-podip-ssrf).
  expect(r.state).not.toBe('verified');
  expect(r.nextReason).not.toMatch(PATH_REASONS);
}, 240_000);
