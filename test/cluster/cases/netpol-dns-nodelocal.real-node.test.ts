/**
 * Case netpol-dns-nodelocal, live on the real node (kube-router enforcing). The test cluster runs no CoreDNS and no
 * NodeLocal DNSCache, so the narrowest honest stand-in is the cache's own topology: a DNS responder of this test's in
 * the node's network namespace (host network, as node-local-dns runs) on `169.254.20.10:53`, answering
 * `kubernetes.default.svc` with an A record; sandbox pods name it in resolv.conf (`dnsPolicy: None`, as the kubelet's
 * `clusterDNS` would). What is real: the pods, their resolv.conf, the NetworkPolicy and kube-router's enforcement, the
 * verifier's lookup and dial from inside the sandbox over port-forward.
 * - The default targets (CoreDNS pods + `169.254.20.10/32` + the Service IP): the lookup answers within 2 s, another
 *   port on the nameserver does not connect: `DnsAnswered`, for a template alone (no enforcement pair needed).
 * - The old rule (CoreDNS pods only, the failing shape of the case): the lookup gets no answer: `DnsNotAnswered`,
 *   naming `169.254.20.10` and the policy; network-isolation not verified.
 */
import * as k8s from '@kubernetes/client-node';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify } from '../../../src/verify/index.js';
import type { NetworkPolicyPlan } from '../../../src/verify/plan.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { describeRealNode, realNodeSandboxdTemplate } from '../real-node-helpers.js';
import { EXT, plan, templatePlan, withoutRouter } from '../verify/verifier-env.js';

const CACHE = '169.254.20.10';

/** A DNS responder (UDP): A 10.96.0.1 for kubernetes.default.svc[.cluster.local], an empty NOERROR for other types, NXDOMAIN else. */
const RESPONDER = `
const dgram = require('node:dgram');
const s = dgram.createSocket('udp4');
s.on('message', (q, from) => {
  let i = 12; const labels = [];
  while (q[i] !== 0) { labels.push(q.subarray(i + 1, i + 1 + q[i]).toString()); i += q[i] + 1; }
  const qtype = q.readUInt16BE(i + 1); const question = q.subarray(12, i + 5);
  const name = labels.join('.').toLowerCase();
  const known = name === 'kubernetes.default.svc' || name === 'kubernetes.default.svc.cluster.local';
  const head = Buffer.alloc(12); q.copy(head, 0, 0, 2);
  head.writeUInt16BE(0x8580 | (known ? 0 : 3), 2); head.writeUInt16BE(1, 4);
  const answer = known && qtype === 1
    ? Buffer.concat([Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4]), Buffer.from([10, 96, 0, 1])]) : Buffer.alloc(0);
  head.writeUInt16BE(answer.length ? 1 : 0, 6);
  s.send(Buffer.concat([head, question, answer]), from.port, from.address);
});
s.bind(53, process.argv[1], () => process.stdout.write('listening\\n'));
`;

describeRealNode('netpol-dns-nodelocal (real node)', () => {
  let c: Cluster;
  let ns: string;
  let responder: ChildProcess | undefined;
  const holder = (): string => readFileSync(path.join(c.info.runDir, 'pids', 'node-ns.pid'), 'utf8').trim();
  const inNode = (argv: string[]) =>
    spawnSync('nsenter', ['--target', holder(), '--net', '--', ...argv], { encoding: 'utf8' });

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'dnsnodelocal');
    // The cache's address on the node (node-local-dns puts it on a dummy interface; lo here, the kernel has no dummy).
    const add = inNode(['ip', 'addr', 'add', `${CACHE}/32`, 'dev', 'lo']);
    expect(add.status === 0 || /File exists/.test(add.stderr)).toBe(true);
    responder = spawn('nsenter', ['--target', holder(), '--net', '--', process.execPath, '-e', RESPONDER, CACHE], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      responder!.stdout!.once('data', () => resolve());
      responder!.once('exit', (code) => reject(new Error(`DNS responder exited ${code}`)));
    });
  }, 60_000);

  afterAll(async () => {
    responder?.kill('SIGTERM');
    inNode(['ip', 'addr', 'del', `${CACHE}/32`, 'dev', 'lo']);
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  /** One template (pods labelled dnscase=<name>, resolv.conf naming the cache), its policy, and the verifier's verdict. */
  async function verifyDns(name: string, egressTo: k8s.V1NetworkPolicyPeer[], dns: NetworkPolicyPlan['dns']) {
    const template = realNodeSandboxdTemplate(c, ns, name, {}, { labels: { dnscase: name }, management: 'Unmanaged' });
    const spec = (template as { spec: { podTemplate: { spec: Record<string, unknown> } } }).spec.podTemplate.spec;
    spec['dnsPolicy'] = 'None';
    spec['dnsConfig'] = { nameservers: [CACHE] };
    await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxtemplates', body: template });
    await c.kc.makeApiClient(k8s.NetworkingV1Api).createNamespacedNetworkPolicy({
      namespace: ns,
      body: {
        metadata: { name: `${name}-policy` },
        spec: {
          podSelector: { matchLabels: { dnscase: name } },
          policyTypes: ['Ingress', 'Egress'],
          ingress: [],
          egress: [
            {
              to: egressTo,
              ports: [
                { port: 53, protocol: 'UDP' },
                { port: 53, protocol: 'TCP' },
              ],
            },
          ],
        },
      },
    });
    const policy = {
      namespace: ns,
      name: `${name}-policy`,
      template: name,
      allowedEgress: [],
      ingressFrom: [],
      ...(dns ? { dns } : {}),
    };
    const { report } = await runVerify({
      plan: withoutRouter(
        plan(c, [{ ...templatePlan(ns, name), networkPolicyManagement: 'Unmanaged' as const }], {
          transport: 'port-forward',
          networkPolicies: [policy],
          requirements: requirementsFor(['network-isolation', 'runtime-exec']),
          probeTimeoutMs: 10_000,
          readyTimeoutMs: 120_000,
        }),
      ),
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    expect(report.capabilities.find((r) => r.name === 'runtime-exec')!.state).toBe('verified');
    const net = report.capabilities.find((r) => r.name === 'network-isolation')!;
    const fact = net.evidence.find((e) => e.step === 'verified' && e.field === 'nslookup kubernetes.default.svc');
    process.stderr.write(
      `${name}: network-isolation ${net.state}; ${fact?.reason} ${fact?.verdict}: ${fact?.message}\n`,
    );
    return { net, fact };
  }

  const coreDnsPods: k8s.V1NetworkPolicyPeer = {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
    podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
  };
  const pods = { namespace: 'kube-system', podLabels: { 'k8s-app': 'kube-dns' } };

  test('default targets: the lookup through the node-local cache answers within 2 s, another port is refused', async () => {
    const { fact } = await verifyDns(
      'dnsdefault',
      [coreDnsPods, { ipBlock: { cidr: `${CACHE}/32` } }, { ipBlock: { cidr: '10.96.0.10/32' } }],
      { pods, nodeLocalCache: CACHE, serviceIP: '10.96.0.10' },
    );
    expect({ reason: fact?.reason, verdict: fact?.verdict, nameserver: fact?.value }).toEqual({
      reason: 'DnsAnswered',
      verdict: 'proven',
      nameserver: CACHE,
    });
    expect(fact?.observed).toEqual({ lookupExit: 0, otherPortConnected: 0 });
  }, 300_000);

  test('CoreDNS pods only (the case): no answer, the evidence names the cache address and the policy', async () => {
    const { net, fact } = await verifyDns('dnspodsonly', [coreDnsPods], { pods });
    expect({ reason: fact?.reason, verdict: fact?.verdict, nameserver: fact?.value }).toEqual({
      reason: 'DnsNotAnswered',
      verdict: 'unknown',
      nameserver: CACHE,
    });
    expect(fact?.objects).toEqual([`${ns}/dnspodsonly-policy`]);
    expect(net.state).not.toBe('verified');
  }, 300_000);
});
