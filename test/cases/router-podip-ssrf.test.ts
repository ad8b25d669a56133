/**
 * Case router-podip-ssrf, construct side: the router is transport, not the authorization
 * boundary, so in every mode a NetworkPolicy limits who reaches it — its own policy admits only the declared `callers`
 * on the proxy port and only the declared metrics scraper on the metrics port (upstream: every namespace on 8080);
 * allow-all must be chosen explicitly; and a router path that cannot reach the runtime (sandboxd bound to 127.0.0.1, or
 * no runtime port among the router's egress ports) fails with both sides named. The negative probes (a)–(c) are the
 * verifier's side.
 */
import { jest } from '@jest/globals';
import { ConstructPropsError, SANDBOXD_RUNTIME, sandboxdPodSpec, UnreachableError } from '../../src/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

jest.setTimeout(120_000);
const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6';
const SANDBOXD_IMAGE = 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6';

async function env(tag: 'v0.5.6' | 'v1.0.3' = 'v0.5.6') {
  const e = newEnvironment(await release(tag), 'sbx', { defaultNamespace: 'sbx' });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  return { e, rc };
}

type Rule = { from?: unknown[]; ports: Array<{ port: number }> };
function routerIngress(objects: ReadonlyArray<{ toJson(): any }>): Rule[] {
  return objects.map((o) => o.toJson()).find((o) => o.kind === 'NetworkPolicy').spec.ingress as Rule[];
}

describe('case router-podip-ssrf (construct side)', () => {
  test('callers are required: a router without them is refused', async () => {
    const { e } = await env();
    const err = thrownBy(
      () => e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' } } as never),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems.map((p) => [p.prop, p.reason])).toEqual([['callers', 'Required']]);
  });

  test('the proxy port admits only the declared callers, the metrics port only the scraper; the probe port stays for the kubelet', async () => {
    const { e } = await env();
    const r = e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'tokenreview' },
      callers: [{ namespace: 'agents', podLabels: { app: 'orchestrator' } }, { namespace: 'gateway' }],
      metricsScraper: { namespace: 'monitoring', podLabels: { 'app.kubernetes.io/name': 'prometheus' } },
    });
    expect(routerIngress(r.objects)).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agents' } },
            podSelector: { matchLabels: { app: 'orchestrator' } },
          },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gateway' } } },
        ],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 9090 }],
      },
      { ports: [{ protocol: 'TCP', port: 8081 }] },
    ]);
  });

  test('no callers and no scraper: neither the proxy nor the metrics port admits anyone', async () => {
    const { e } = await env();
    const r = e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'scoped-token', secretName: 'k' },
      callers: [],
    });
    expect(routerIngress(r.objects)).toEqual([{ ports: [{ protocol: 'TCP', port: 8081 }] }]);
  });

  test('allow-all is never the default: it needs acknowledgeUnauthenticated', async () => {
    const { e } = await env();
    const err = thrownBy(
      () => e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'allow-all' } as never, callers: [] }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems.map((p) => [p.prop, p.reason])).toEqual([
      ['authorization.acknowledgeUnauthenticated', 'InvalidValue'],
    ]);
  });

  test('sandboxd (127.0.0.1 only) behind addNetworkPolicy({ router }) fails naming both sides', async () => {
    const { e, rc } = await env();
    const t = e.addTemplate('shell', {
      runtimeClass: rc,
      podSpec: sandboxdPodSpec({ image: SANDBOXD_IMAGE }),
      runtime: SANDBOXD_RUNTIME,
    });
    const router = e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
    let err: unknown;
    try {
      e.addNetworkPolicy('shell-policy', { template: t, router });
    } catch (x) {
      err = x;
    }
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as UnreachableError).reason).toBe('RuntimeListensOnLoopback');
    expect((err as UnreachableError).sides).toEqual({
      template: 'sbx/shell',
      runtime: { kind: 'sandboxd', container: 'sandboxd', ports: [8080, 9090] },
      router: { namespace: 'agent-sandbox-system', ports: [8888] },
    });
  });

  test('v1.0.3: sandboxd listens on the pod network (--listen-host), so the router path synthesizes where v0.5.6 refuses it', async () => {
    const { e, rc } = await env('v1.0.3');
    const t = e.addTemplate('shell', {
      runtimeClass: rc,
      podSpec: sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v1.0.3' }),
      runtime: SANDBOXD_RUNTIME,
    });
    expect(t.runtimeBind).toMatchObject({ host: '0.0.0.0', from: 'listen-host', podNetwork: true });
    const router = e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'tokenreview' },
      callers: [],
      sandboxPorts: [8080],
    });
    expect(() => e.addNetworkPolicy('shell-policy', { template: t, router })).not.toThrow();
    // told to stay on loopback, it is refused again
    const loop = e.addTemplate('loop', {
      runtimeClass: rc,
      podSpec: sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v1.0.3', listenHost: '127.0.0.1' }),
      runtime: SANDBOXD_RUNTIME,
    });
    const err = thrownBy(
      () => e.addNetworkPolicy('loop-policy', { template: loop, router }),
      UnreachableError,
      'RuntimeListensOnLoopback',
    );
    expect(err.sides.template).toBe('sbx/loop');
  });

  test('a runtime on a port the router egress does not allow fails naming both; adding the port to sandboxPorts fixes it', async () => {
    const { e, rc } = await env();
    const t = e.addTemplate('svc', {
      runtimeClass: rc,
      podSpec: podSpec(undefined, { ports: [{ containerPort: 9000 }] }),
    });
    const router = e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
    const err = thrownBy(
      () => e.addNetworkPolicy('p', { template: t, router }),
      UnreachableError,
      'RuntimePortNotAllowed',
    );
    expect(err.sides).toEqual({
      template: 'sbx/svc',
      runtime: { kind: 'custom', container: 'main', ports: [9000] },
      router: { namespace: 'agent-sandbox-system', ports: [8888] },
    });

    const { e: e2, rc: rc2 } = await env();
    const t2 = e2.addTemplate('svc', {
      runtimeClass: rc2,
      podSpec: podSpec(undefined, { ports: [{ containerPort: 9000 }] }),
    });
    const ok = e2.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'tokenreview' },
      callers: [],
      sandboxPorts: [9000],
    });
    expect(e2.addNetworkPolicy('p', { template: t2, router: ok }).ingressPorts).toEqual([9000]);
  });
});
