/**
 * Case netpol-router-peer-mismatch, construct side: the controller-managed template policy
 * admits only pods `app: sandbox-router` in namespace `agent-sandbox-system`
 * (`extensions/controllers/sandboxtemplate_controller.go@v0.5.6`). A router declared elsewhere with templates left on
 * that policy fails synthesis naming both sides; with the environment's own policy the peer comes from the router's
 * namespace and pod labels (one value), so it always matches.
 */
import { jest } from '@jest/globals';
import { EnvironmentInvalidError, SANDBOXD_RUNTIME, synthesizeEnvironment, UnreachableError } from '../../src/index.js';
import { CONTROLLER_POLICY_ROUTER_PEER, routerPeerProblems } from '../../src/constructs/router.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';

jest.setTimeout(120_000);
const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6';

async function env(routerNamespace?: string, tag: 'v0.5.6' | 'v1.0.3' = 'v0.5.6') {
  const e = newEnvironment(await release(tag), 'sbx', { defaultNamespace: 'sbx' });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const py = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
  const router = e.addRouter('router', {
    image: ROUTER_IMAGE,
    authorization: { mode: 'tokenreview' },
    callers: [{ namespace: 'agents' }],
    // where the environment's own policy makes network-isolation required verified, tokenreview needs this egress
    apiServer: [{ cidr: '10.0.0.1/32', port: 443 }],
    ...(routerNamespace ? { namespace: routerNamespace } : {}),
  });
  return { e, rc, py, router };
}

describe('case netpol-router-peer-mismatch', () => {
  test('the fixed peer is the v0.5.6 controller constant', () => {
    expect(CONTROLLER_POLICY_ROUTER_PEER).toEqual({
      namespace: 'agent-sandbox-system',
      podLabels: { app: 'sandbox-router' },
    });
  });

  test('v1.0.3: the default router matches the managed policy peer and synthesizes; moved to default it fails the same way', async () => {
    const { e, router } = await env(undefined, 'v1.0.3');
    expect([router.namespace, router.podLabels['app']]).toEqual(['agent-sandbox-system', 'sandbox-router']);
    expect(routerPeerProblems(router)).toEqual([]);
    expect(() => synthesizeEnvironment(e)).not.toThrow();
    const moved = await env('default', 'v1.0.3');
    expect(routerPeerProblems(moved.router).map((p) => p.reason)).toEqual(['RouterPeerMismatch']);
  });

  test('router in namespace default + Managed template: synthesis fails naming the policy peer and the router', async () => {
    const { e, router } = await env('default');
    const problems = routerPeerProblems(router);
    expect(problems.map((p) => [p.reason, p.path])).toEqual([['RouterPeerMismatch', 'sbx/router']]);
    expect(problems[0]).toBeInstanceOf(UnreachableError);
    expect(problems[0]!.sides).toEqual({
      template: 'sbx/py',
      router: { namespace: 'default', podLabels: router.podLabels },
      policy: {
        name: 'py-network-policy',
        admits: { namespace: 'agent-sandbox-system', podLabels: { app: 'sandbox-router' } },
      },
    });
    expect(router.podLabels).toMatchObject({ 'app.kubernetes.io/name': 'sandbox-router' });
    let err: unknown;
    try {
      synthesizeEnvironment(e);
    } catch (x) {
      err = x;
    }
    expect(err).toBeInstanceOf(EnvironmentInvalidError);
    expect((err as EnvironmentInvalidError).reason).toBe('EnvironmentInvalid');
    expect((err as EnvironmentInvalidError).problems.map((p) => [p.path, p.reason])).toEqual([
      ['sbx/router', 'RouterPeerMismatch'],
    ]);
  });

  test("with the environment's own policy the template is Unmanaged and the peer is the router's own namespace and labels", async () => {
    const { e, py, router } = await env('default');
    const np = e.addNetworkPolicy('py-policy', { template: py, router });
    const s = synthesizeEnvironment(e);
    expect(np.ingressFrom[0]).toEqual({ namespace: 'default', podLabels: router.podLabels });
    const tpl = s.objects.find((o) => o.object.kind === 'SandboxTemplate')!.object as unknown as {
      spec: { networkPolicyManagement: string };
    };
    expect(tpl.spec.networkPolicyManagement).toBe('Unmanaged');
    const deployment = s.objects.find(
      (o) => o.object.kind === 'Deployment' && o.object.metadata?.name === 'sandbox-router',
    )!.object as unknown as {
      metadata: { namespace: string };
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    expect(deployment.metadata.namespace).toBe('default');
    expect(deployment.spec.template.metadata.labels).toMatchObject(np.ingressFrom[0]!.podLabels!);
  });

  test('router in the default namespace (agent-sandbox-system) matches the fixed peer; Managed templates synthesize', async () => {
    const { e, router } = await env();
    expect(router.namespace).toBe('agent-sandbox-system');
    expect(router.podLabels['app']).toBe('sandbox-router');
    expect(routerPeerProblems(router)).toEqual([]);
    expect(() => synthesizeEnvironment(e)).not.toThrow();
  });

  test('an Unmanaged template (explicitly) or one with custom managed ingress is judged by its own rules, not the fixed peer', async () => {
    const e = newEnvironment(await release('v0.5.6'), 'sbx', { defaultNamespace: 'sbx' });
    const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    e.addTemplate('a', { runtimeClass: rc, podSpec: podSpec(), networkPolicyManagement: 'Unmanaged' });
    e.addTemplate('b', {
      runtimeClass: rc,
      podSpec: podSpec(),
      networkPolicy: {
        ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } } }] }],
      },
    });
    e.addTemplate('c', {
      runtimeClass: rc,
      podSpec: podSpec(),
      runtime: { ...SANDBOXD_RUNTIME, container: 'main', ports: [8888] },
    });
    const router = e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'tokenreview' },
      callers: [],
      namespace: 'default',
    });
    expect(routerPeerProblems(router).map((p) => p.sides.template)).toEqual(['sbx/c']);
  });
});
