import { loadRelease } from '../../../src/releases/index.js';
import { controllerNeeds, describeNeed, KNOWN_GAPS } from '../../../src/verify/probes/controller.js';
import { crdView as viewCrd } from '../../../src/adapter/kubernetes/views.js';
import { conversionEvidence } from '../../../src/verify/probes/install.js';
import { declaredPolicies, podCoverage, selects } from '../../../src/verify/probes/network.js';
import { nodesFor } from '../../../src/verify/probes/runtime-class.js';
import { settle } from '../../../src/verify/states.js';
import { networkPolicyView, nodeView, podView, runtimeClassView } from '../../../src/adapter/kubernetes/views.js';
import type { VerifyPlan } from '../../../src/verify/plan.js';
import { MIRROR } from '../../mirror.js';

const crd = (opts: { strategy?: string; service?: object; url?: string; caBundle?: string; label?: string }) => ({
  metadata: { name: 'x', ...(opts.label ? { labels: { 'app.kubernetes.io/version': opts.label } } : {}) },
  spec: {
    versions: [
      { name: 'v1beta1', served: true, storage: true },
      { name: 'v1alpha1', served: true, storage: false },
    ],
    ...(opts.strategy
      ? {
          conversion: {
            strategy: opts.strategy,
            webhook: {
              clientConfig: {
                ...(opts.service ? { service: opts.service } : {}),
                ...(opts.url ? { url: opts.url } : {}),
                ...(opts.caBundle ? { caBundle: opts.caBundle } : {}),
              },
            },
          },
        }
      : {}),
  },
  status: { conditions: [{ type: 'Established', status: 'True' }] },
});
const PINNED_SVC = { name: 'agent-sandbox-webhook-service', namespace: 'agent-sandbox-system', path: '/convert' };

describe('install probe: CRD views and conversion evidence', () => {
  test('viewCrd reads served/storage versions, Established, client config and the release label', () => {
    expect(
      viewCrd(crd({ strategy: 'Webhook', service: PINNED_SVC, caBundle: 'LS0t', label: 'v0.5.6' }) as never),
    ).toEqual({
      served: ['v1alpha1', 'v1beta1'],
      storage: 'v1beta1',
      established: true,
      strategy: 'Webhook',
      service: PINNED_SVC,
      caBundle: true,
      versionLabel: 'v0.5.6',
      schemas: { v1alpha1: undefined, v1beta1: undefined },
    });
  });

  test('v0.4 has no conversion: unsupported', () => {
    expect(settle(conversionEvidence('v0.4', 'v0.4.6', new Map())).state).toBe('unsupported');
  });

  test('v1.0 has no conversion: not applicable (unsupported, ReleaseHasNoConversion), never failed or verified', () => {
    const live = new Map([['Sandbox' as const, viewCrd(crd({}) as never)]]);
    const ev = conversionEvidence('v1.0', 'v1.0.3', live);
    expect(ev.map((e) => [e.step, e.verdict, e.reason])).toEqual([
      ['discovered', 'unsupported', 'ReleaseHasNoConversion'],
    ]);
    expect(settle(ev).state).toBe('unsupported');
  });

  test('pinned Service with caBundle on all four CRDs reaches configured; url client config is accepted and said so', () => {
    const all = (v: ReturnType<typeof viewCrd>) =>
      new Map((['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'] as const).map((k) => [k, v]));
    expect(
      settle(
        conversionEvidence(
          'v0.5',
          'v0.5.6',
          all(viewCrd(crd({ strategy: 'Webhook', service: PINNED_SVC, caBundle: 'LS0t' }) as never)),
        ),
      ).state,
    ).toBe('configured');
    const ev = conversionEvidence(
      'v0.5',
      'v0.5.6',
      all(viewCrd(crd({ strategy: 'Webhook', url: 'https://127.0.0.1:9443/convert', caBundle: 'LS0t' }) as never)),
    );
    expect(settle(ev).state).toBe('configured');
    const url = ev.find((e) => e.step === 'compatible')!;
    expect([url.reason, url.field, url.value]).toEqual([
      'WebhookUrl',
      'spec.conversion.webhook.clientConfig.url',
      'https://127.0.0.1:9443/convert',
    ]);
  });

  test('a webhook without caBundle stays compatible, naming why', () => {
    const v = viewCrd(crd({ strategy: 'Webhook', service: PINNED_SVC }) as never);
    const s = settle(
      conversionEvidence(
        'v0.5',
        'v0.5.6',
        new Map((['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'] as const).map((k) => [k, v])),
      ),
    );
    expect(s.state).toBe('compatible');
    expect(s.nextReason).toBe('NoCaBundle');
  });

  test('a webhook pointing elsewhere stays discovered', () => {
    const v = viewCrd(crd({ strategy: 'Webhook', service: { ...PINNED_SVC, name: 'other' }, caBundle: 'x' }) as never);
    const ev = conversionEvidence(
      'v0.5',
      'v0.5.6',
      new Map([
        ['Sandbox', v],
        ['SandboxClaim', v],
        ['SandboxTemplate', v],
        ['SandboxWarmPool', v],
      ]),
    );
    const s = settle(ev);
    expect(s.state).toBe('discovered');
    expect(s.nextReason).toBe('WebhookServiceDiffers');
    const differs = ev.find((e) => e.reason === 'WebhookServiceDiffers')!;
    expect([differs.field, differs.value]).toEqual([
      'spec.conversion.webhook.clientConfig.service',
      'agent-sandbox-system/other/convert',
    ]);
  });
});

describe('controller probe: rights from the pinned RBAC', () => {
  test('v0.5.6 core + extensions rights include finalizers, cluster-wide networkpolicies watch and core events create', async () => {
    const loaded = await loadRelease('v0.5.6', { mirror: MIRROR });
    const needs = controllerNeeds(loaded.objects.values(), true).map(describeNeed);
    expect(needs).toContain('update sandboxes.agents.x-k8s.io/finalizers (cluster-wide)');
    expect(needs).toContain('watch networkpolicies.networking.k8s.io (cluster-wide)');
    expect(needs).toContain('list networkpolicies.networking.k8s.io (cluster-wide)');
    expect(needs).toContain('create events (cluster-wide)');
    expect(needs).toContain('get secrets "agent-sandbox-webhook-certs" in agent-sandbox-system');
    expect(needs.length).toBeGreaterThan(40);
    expect(new Set(needs).size).toBe(needs.length);
  });

  test('without extensions the extensions ClusterRole is not required', async () => {
    const loaded = await loadRelease('v0.5.6', { mirror: MIRROR });
    const without = controllerNeeds(loaded.objects.values(), false).map(describeNeed);
    const withExt = controllerNeeds(loaded.objects.values(), true).map(describeNeed);
    expect(without.some((n) => n.startsWith('update sandboxclaims.extensions.agents.x-k8s.io '))).toBe(false);
    expect(withExt).toContain('update sandboxclaims.extensions.agents.x-k8s.io (cluster-wide)');
  });

  test('known upstream gaps are always checked', () => {
    expect(controllerNeeds([], false)).toEqual([...KNOWN_GAPS]);
  });
});

describe('runtime-class probe: node matching', () => {
  const node = (name: string, labels: Record<string, string>, taints: object[] = [], ready = true) => ({
    metadata: { name, labels },
    spec: { taints },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
  const rc = {
    metadata: { name: 'gvisor' },
    handler: 'runsc',
    scheduling: {
      nodeSelector: { 'sandbox.gke.io/runtime': 'gvisor' },
      tolerations: [{ key: 'sandbox.gke.io/runtime', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' }],
    },
  };

  test('selector, taints and readiness decide', () => {
    const fits = nodesFor(
      runtimeClassView(rc),
      [
        node('a', {}),
        node('b', { 'sandbox.gke.io/runtime': 'gvisor' }, [
          { key: 'sandbox.gke.io/runtime', value: 'gvisor', effect: 'NoSchedule' },
        ]),
        node('c', { 'sandbox.gke.io/runtime': 'gvisor' }, [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]),
        node('d', { 'sandbox.gke.io/runtime': 'gvisor' }, [], false),
      ].map(nodeView),
    );
    expect(fits).toEqual([
      { node: 'a', fits: false, reason: 'lacks label sandbox.gke.io/runtime=gvisor' },
      { node: 'b', fits: true, reason: 'Ready and matches' },
      { node: 'c', fits: false, reason: 'taint dedicated=gpu:NoSchedule not tolerated' },
      { node: 'd', fits: false, reason: 'node not Ready' },
    ]);
  });

  test('a class without scheduling fits every Ready node; Exists tolerations match any value', () => {
    expect(nodesFor(runtimeClassView({ handler: 'runc' }), [nodeView(node('a', {}))])[0]!.fits).toBe(true);
    const exists = { scheduling: { nodeSelector: {}, tolerations: [{ key: 'k', operator: 'Exists' }] } };
    expect(
      nodesFor(runtimeClassView(exists), [nodeView(node('a', {}, [{ key: 'k', value: 'v', effect: 'NoExecute' }]))])[0]!
        .fits,
    ).toBe(true);
  });
});

describe('network probe: selectors and coverage', () => {
  test('matchLabels and matchExpressions', () => {
    expect(selects(undefined, { a: '1' })).toBe(true);
    expect(selects({ matchLabels: { a: '1' } }, { a: '1', b: '2' })).toBe(true);
    expect(selects({ matchLabels: { a: '2' } }, { a: '1' })).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '3'] }] }, { a: '1' })).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, { a: '1' })).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'x', operator: 'Exists' }] }, { a: '1' })).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] }, { a: '1' })).toBe(true);
  });

  test('an ingress-only policy does not restrict egress', () => {
    const pod = { metadata: { namespace: 'sbx', name: 'p', labels: { app: 'sandbox' } } };
    const pol = {
      metadata: { namespace: 'sbx', name: 'in-only' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    };
    const { problems } = podCoverage(podView(pod), [pol].map(networkPolicyView), new Set(['in-only']));
    expect(problems.map((p) => [p.field, p.value])).toEqual([['egress policies', 'none']]);
  });
});

describe('network probe: declared policies', () => {
  test("the environment's own policies and the controller's for Managed templates", () => {
    const plan = {
      templates: [
        { namespace: 'sbx', name: 'py', networkPolicyManagement: 'Unmanaged' },
        { namespace: 'sbx', name: 'm', networkPolicyManagement: 'Managed' },
      ],
      networkPolicies: [{ namespace: 'sbx', name: 'sbx-py', template: 'py', allowedEgress: [], ingressFrom: [] }],
    } as unknown as VerifyPlan;
    expect([...declaredPolicies(plan)].sort()).toEqual(['m-network-policy', 'sbx-py']);
  });
});

describe('existing sandbox: runtime kind from the pod', () => {
  test('sandboxd by container name or image, ports from its args; python runtime by port 8888; else none', async () => {
    const { runtimeOfPod } = await import('../../../src/verify/probes/existing-sandbox.js');
    expect(runtimeOfPod(podView({ spec: { containers: [{ name: 'sandboxd', image: 'x' }] } }))).toEqual({
      kind: 'sandboxd',
      rest: 8080,
      grpc: 9090,
    });
    expect(
      runtimeOfPod(
        podView({
          spec: {
            containers: [{ name: 'rt', image: 'reg/sandboxd:v1', args: ['--rest-port=18080', '--grpc-port', '19090'] }],
          },
        }),
      ),
    ).toEqual({ kind: 'sandboxd', rest: 18080, grpc: 19090 });
    expect(
      runtimeOfPod(
        podView({
          spec: { containers: [{ name: 'py', image: 'python-runtime', ports: [{ containerPort: 8888 }] }] },
        }),
      ),
    ).toEqual({ kind: 'python-runtime', rest: 8888 });
    expect(runtimeOfPod(podView({ spec: { containers: [{ name: 'busybox', image: 'busybox' }] } }))).toEqual({
      kind: 'none',
      why: 'no container is sandboxd (name or image) and none exposes the python runtime port 8888 (containers: busybox)',
    });
  });
});
