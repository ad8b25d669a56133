/**
 * Case netpol-dns-nodelocal (construct and verifier judgement): a DNS allow rule written as "pods labelled
 * `k8s-app: kube-dns`" never matches a NodeLocal DNSCache, which runs with hostNetwork and answers on `169.254.20.10`
 * (IPVS mode) or on the DNS Service IP (iptables mode). The default `dns` targets cover the CoreDNS pods and both
 * addresses as `/32` blocks, UDP and TCP 53; synthesis prints them; the targets reach the verifier's plan; the verifier's
 * DNS judgement names the nameserver read from the sandbox's resolv.conf and the policy that should admit it. The live
 * part runs on the real node: test/cluster/cases/netpol-dns-nodelocal.real-node.test.ts.
 */
import { jest } from '@jest/globals';
import { ConstructPropsError, synthesizeEnvironment } from '../../src/index.js';
import { planFromDescriptor } from '../../src/verify/environment.js';
import { judgeDns, nameserverOf, type DnsObservation } from '../../src/verify/probes/network-dns.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

jest.setTimeout(120_000);

interface Egress {
  to: Array<{ ipBlock?: { cidr: string }; podSelector?: { matchLabels: Record<string, string> } }>;
  ports: Array<{ port: number; protocol: string }>;
}

async function synth(dns?: Parameters<ReturnType<typeof newEnvironment>['addNetworkPolicy']>[1]['dns']) {
  const env = newEnvironment(await release('v0.5.6'), 'sbx', { defaultNamespace: 'sbx' });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const tpl = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
  env.addNetworkPolicy('dns-only', { template: tpl, name: 'py-dns-only', ...(dns !== undefined ? { dns } : {}) });
  const s = synthesizeEnvironment(env);
  const policy = s.objects.find((o) => o.object.kind === 'NetworkPolicy')!.object as unknown as {
    spec: { egress: Egress[] };
  };
  return { s, egress: policy.spec.egress };
}

describe('case netpol-dns-nodelocal: DNS targets that work with a node-local cache', () => {
  test('default targets: CoreDNS pods, 169.254.20.10/32 and 10.96.0.10/32, UDP and TCP 53, printed at synthesis', async () => {
    const { s, egress } = await synth();
    expect(egress).toHaveLength(1);
    expect(egress[0]!.to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      },
      { ipBlock: { cidr: '169.254.20.10/32' } },
      { ipBlock: { cidr: '10.96.0.10/32' } },
    ]);
    expect(egress[0]!.ports).toEqual([
      { port: 53, protocol: 'UDP' },
      { port: 53, protocol: 'TCP' },
    ]);
    expect(s.descriptor.networkPolicies[0]!.dns).toEqual({
      pods: { namespace: 'kube-system', podLabels: { 'k8s-app': 'kube-dns' } },
      nodeLocalCache: '169.254.20.10',
      serviceIP: '10.96.0.10',
    });
    // prose: the synthesis summary is text for the person applying; it must carry each target
    const note = s.notes.find((n) => n.startsWith('NetworkPolicy sbx/py-dns-only admits DNS to'));
    // prose: same note, each target named
    expect(note).toMatch(/pods kube-system\/k8s-app=kube-dns, 169\.254\.20\.10\/32 .*10\.96\.0\.10\/32 .*UDP\+TCP 53/);
    // prose: the stream notes (synth --stdout) print the same targets
    expect(s.streamNotes).toContain(note);
  });

  test('the targets are explicit: another Service IP, no cache, or no DNS at all', async () => {
    const custom = await synth({ serviceIP: '172.20.0.10', nodeLocalCache: false });
    expect(custom.egress[0]!.to.map((t) => t.ipBlock?.cidr ?? 'pods')).toEqual(['pods', '172.20.0.10/32']);
    const none = await synth(false);
    expect(none.egress).toEqual([]);
    expect(none.s.descriptor.networkPolicies[0]!.dns).toBeNull();
    const bad = await release('v0.5.6').then((r) => {
      const env = newEnvironment(r, 'sbx', { defaultNamespace: 'sbx' });
      const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
      const tpl = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
      return thrownBy(
        () => env.addNetworkPolicy('np', { template: tpl, dns: { serviceIP: '10.96.0.10/12' } }),
        ConstructPropsError,
        'InvalidProps',
      );
    });
    expect(bad.problems).toMatchObject([{ prop: 'dns.serviceIP', value: '10.96.0.10/12' }]);
    expect(bad.path).toBe('sbx/np');
  });

  test('the dns option reaches the verifier plan (a DNS-only template gets a DNS check)', async () => {
    const { s } = await synth();
    const plan = planFromDescriptor(s.descriptor, 'test', { transport: 'port-forward' });
    expect(plan.networkPolicies[0]).toMatchObject({
      name: 'py-dns-only',
      template: 'py',
      dns: { nodeLocalCache: '169.254.20.10', serviceIP: '10.96.0.10' },
    });
    const without = await synth(false);
    expect(
      planFromDescriptor(without.s.descriptor, 'test', { transport: 'port-forward' }).networkPolicies[0]!.dns,
    ).toBe(undefined);
  });
});

describe('case netpol-dns-nodelocal: the verifier judges what one sandbox saw', () => {
  const dns = {
    pods: { namespace: 'kube-system', podLabels: { 'k8s-app': 'kube-dns' } },
    nodeLocalCache: '169.254.20.10',
    serviceIP: '10.96.0.10',
  };
  const base = (over: Partial<DnsObservation>): DnsObservation => ({
    pod: 'sbx/p1',
    policy: 'sbx/py-dns-only',
    dns,
    resolv: {
      exitCode: 0,
      output: 'search sbx.svc.cluster.local svc.cluster.local\nnameserver 169.254.20.10\noptions ndots:5\n',
    },
    lookup: { exitCode: 0, output: 'Name: kubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n' },
    otherPort: 'refused',
    ...over,
  });

  test('resolv.conf: the first nameserver', () => {
    expect(nameserverOf('# x\nsearch a\nnameserver 10.96.0.10\nnameserver 1.1.1.1\n')).toBe('10.96.0.10');
    expect(nameserverOf('search a\n')).toBeUndefined();
  });

  test.each([
    ['answered via the node-local cache', {}, 'proven', 'DnsAnswered', '169.254.20.10'],
    [
      'no answer within 2 s via a declared address',
      { lookup: { exitCode: 124, output: '' } },
      'unknown',
      'DnsNotAnswered',
      '169.254.20.10',
    ],
    [
      'another port on the nameserver connected',
      { otherPort: 'connected' as const },
      'contradicted',
      'DnsOtherPortConnected',
      '169.254.20.10',
    ],
    [
      'no nameserver in resolv.conf',
      { resolv: { exitCode: 0, output: 'search sbx.svc\n' } },
      'unknown',
      'DnsNotTestable',
      undefined,
    ],
    [
      'no nslookup in the image',
      { lookup: { exitCode: 97, output: 'no nslookup/timeout' } },
      'unknown',
      'DnsNotTestable',
      '169.254.20.10',
    ],
    [
      'a pods-only policy and a host-network cache nameserver',
      { dns: { pods: dns.pods }, lookup: { exitCode: 1, output: ';; connection timed out' } },
      'unknown',
      'DnsNotAnswered',
      '169.254.20.10',
    ],
    [
      'an address-only policy that misses the nameserver',
      { dns: { serviceIP: '10.96.0.10' }, lookup: { exitCode: 1, output: ';; connection timed out' } },
      'missing',
      'DnsNameserverNotAdmitted',
      '169.254.20.10',
    ],
  ] as const)('%s', (_name, over, verdict, reason, nameserver) => {
    const j = judgeDns(base(over as Partial<DnsObservation>));
    expect({ verdict: j.verdict, reason: j.reason, nameserver: j.nameserver }).toEqual({ verdict, reason, nameserver });
    if (verdict === 'proven' || nameserver === undefined) return;
    // prose: a failure's message names the policy that should have admitted the nameserver
    expect(j.message).toContain('policy sbx/py-dns-only admits');
  });
});
