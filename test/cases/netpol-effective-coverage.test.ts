/**
 * Case netpol-effective-coverage (construct side): when the environment declares its own NetworkPolicies for sandbox
 * pods, the template is written `networkPolicyManagement: Unmanaged` so the controller's broad default policy does not add
 * to ours; asking for both fails synthesis. Our policy selects pods by labels the template itself puts on every pod, so it
 * also covers warm-pool pods on v0.5.0, which the controller does not stamp with the template-hash label.
 */
import { jest } from '@jest/globals';
import { k8s } from 'cdk8s-plus-28';
import { EnvironmentInvalidError, synthesizeEnvironment } from '../../src/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

describe('case netpol-effective-coverage: effective NetworkPolicy coverage', () => {
  test.each(['v0.5.0', 'v0.5.6'] as const)(
    '%s: own egress-dns-only policy makes the template Unmanaged and selects the pool pods by template labels',
    async (tag) => {
      const env = newEnvironment(await release(tag), 'sbx', { defaultNamespace: 'sbx' });
      const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
      const tpl = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
      env.addWarmPool('pool', { template: tpl, replicas: 2 });
      env.addNetworkPolicy('egress-dns-only', { template: tpl, name: 'sbx-egress-dns-only' });
      const s = synthesizeEnvironment(env);
      const template = s.objects.find((o) => o.object.kind === 'SandboxTemplate')!.object as unknown as {
        spec: {
          networkPolicyManagement: string;
          networkPolicy?: unknown;
          podTemplate: { metadata: { labels: Record<string, string> } };
        };
      };
      const policy = s.objects.find((o) => o.object.kind === 'NetworkPolicy')!.object as unknown as {
        spec: {
          podSelector: { matchLabels: Record<string, string> };
          egress: Array<{ ports: Array<{ port: number }> }>;
          ingress?: unknown[];
        };
      };
      expect(template.spec.networkPolicyManagement).toBe('Unmanaged');
      expect(template.spec.networkPolicy).toBeUndefined();
      // every label the policy selects on is on every pod the template (and so the pool) makes
      for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels))
        expect(template.spec.podTemplate.metadata.labels[k]).toBe(v);
      expect(policy.spec.egress.flatMap((r) => r.ports.map((p) => p.port))).toEqual([53, 53]);
      expect(policy.spec.ingress ?? []).toEqual([]);
      expect(s.descriptor.networkPolicies[0]).toMatchObject({
        name: 'sbx-egress-dns-only',
        template: 'py',
        ingressFrom: [],
        egress: [],
      });
    },
  );

  test('an explicitly Managed template plus own policies fails synthesis', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const tpl = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(), networkPolicyManagement: 'Managed' });
    env.addNetworkPolicy('np', { template: tpl });
    const err = thrownBy(() => synthesizeEnvironment(env), EnvironmentInvalidError, 'EnvironmentInvalid');
    expect(err.problems.map((p) => [p.path, p.reason])).toEqual([['sbx/py', 'Conflict']]);
  });

  test('custom managed rules plus own policies fails synthesis', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const tpl = env.addTemplate('py', {
      runtimeClass: rc,
      podSpec: podSpec(),
      networkPolicy: { egress: [{ ports: [{ port: k8s.IntOrString.fromNumber(53), protocol: 'UDP' }] }] },
    });
    env.addNetworkPolicy('np', { template: tpl });
    const err = thrownBy(() => synthesizeEnvironment(env), EnvironmentInvalidError, 'EnvironmentInvalid');
    expect(err.problems.map((p) => [p.path, p.reason])).toEqual([['sbx/py', 'Conflict']]);
  });

  test('without own policies the template stays Managed and the descriptor says network isolation is only configured', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
    const s = synthesizeEnvironment(env);
    expect(s.descriptor.templates[0]!.networkPolicyManagement).toBe('Managed');
    expect(s.descriptor.capabilities).toContainEqual({ capability: 'network-isolation', required: 'configured' });
  });
});
