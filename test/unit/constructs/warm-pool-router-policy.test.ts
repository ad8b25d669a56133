import { jest } from '@jest/globals';
import { k8s } from 'cdk8s-plus-28';
import { ConstructPropsError, UnsupportedByReleaseError } from '../../../src/constructs/index.js';
import { thrownBy } from '../thrown.js';
import { newEnvironment, podSpec, release } from './fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6';

async function env(tag: 'v0.4.6' | 'v0.5.0' | 'v0.5.6' = 'v0.5.6') {
  const e = newEnvironment(await release(tag), 'env', { install: false });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  return { e, rc };
}

describe('SandboxWarmPool', () => {
  test('writes replicas, template ref and update strategy in the template namespace', async () => {
    const { e, rc } = await env();
    const t = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(), namespace: 'team-a' });
    const pool = e.addWarmPool('pool', { template: t });
    expect(pool.apiObject.toJson()).toEqual({
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'pool', namespace: 'team-a', labels: { 'agentplane.dev/environment': 'env' } },
      spec: { replicas: 1, sandboxTemplateRef: { name: 'py' }, updateStrategy: { type: 'OnReplenish' } },
    });
  });

  test('refuses a template that takes Secrets, naming each use; allowTenantCredentials lets it through', async () => {
    const { e, rc } = await env();
    const spec: k8s.PodSpec = {
      ...podSpec(),
      volumes: [{ name: 'creds', secret: { secretName: 'tenant-a' } }],
    };
    spec.containers[0] = {
      ...spec.containers[0]!,
      envFrom: [{ secretRef: { name: 'api-keys' } }],
      env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'tok', key: 'k' } } }],
    };
    const t = e.addTemplate('py', { runtimeClass: rc, podSpec: spec });
    let err: unknown;
    try {
      e.addWarmPool('pool', { template: t });
    } catch (x) {
      err = x;
    }
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).path).toBe('env/pool');
    expect((err as ConstructPropsError).issues).toEqual([
      'template py: volume creds mounts Secret tenant-a',
      'template py: container main env TOKEN from Secret tok',
      'template py: container main envFrom Secret api-keys',
    ]);
    expect(e.addWarmPool('pool2', { template: t, allowTenantCredentials: true }).replicas).toBe(1);
  });
});

describe('SandboxRouter', () => {
  test('moves every object into one namespace, sets the image and the authorization flags, exports labels', async () => {
    const { e } = await env();
    const r = e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
    expect(r.namespace).toBe('agent-sandbox-system');
    expect(r.serviceName).toBe('sandbox-router-svc');
    expect(r.port).toBe(8080);
    expect(r.podLabels).toEqual({
      'app.kubernetes.io/name': 'sandbox-router',
      'app.kubernetes.io/component': 'sandbox-router',
      app: 'sandbox-router',
    });
    const objs = r.objects.map((o) => o.toJson());
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/sandbox-router',
      'ClusterRoleBinding/sandbox-router',
      'ClusterRoleBinding/sandbox-router-auth-delegator',
      'Deployment/sandbox-router',
      'NetworkPolicy/sandbox-router',
      'PodDisruptionBudget/sandbox-router',
      'Service/sandbox-router-svc',
      'ServiceAccount/sandbox-router',
    ]);
    for (const o of objs) {
      if (!o.kind.startsWith('Cluster')) expect(o.metadata.namespace).toBe('agent-sandbox-system');
      for (const s of o.subjects ?? []) expect(s.namespace).toBe('agent-sandbox-system');
    }
    const dep = objs.find((o) => o.kind === 'Deployment');
    const c = dep.spec.template.spec.containers[0];
    expect(c.image).toBe(ROUTER_IMAGE);
    expect(c.args.filter((a: string) => a.startsWith('--authz') || a.startsWith('--cache'))).toEqual([
      '--cache-enabled=true',
      '--authz-mode=tokenreview',
      '--authz-tokenreview-require-token=true',
    ]);
    expect(dep.spec.template.metadata.labels).toMatchObject(r.podLabels);
  });

  test("with its cache on, a startup probe outlasts the router's 60 s initial sync before liveness may kill it; without, none", async () => {
    const deployment = async (cache: boolean) => {
      const { e } = await env();
      const r = e.addRouter('router', {
        image: ROUTER_IMAGE,
        authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
        callers: [],
        cache,
      });
      return r.objects.map((o) => o.toJson()).find((o) => o.kind === 'Deployment').spec.template.spec.containers[0];
    };
    const on = await deployment(true);
    expect(on.startupProbe).toEqual({
      httpGet: { path: '/healthz', port: 'healthz' },
      periodSeconds: 5,
      failureThreshold: 14,
    });
    // 14 × 5 s = 70 s > the 60 s sync bound of sandbox-router/cmd/main.go@v0.5.6; liveness alone gives up at 5 + 3 × 10 s.
    expect(on.startupProbe.periodSeconds * on.startupProbe.failureThreshold).toBeGreaterThan(60);
    expect(on.livenessProbe).toMatchObject({ initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 });
    expect((await deployment(false)).startupProbe).toBeUndefined();
  });

  test('apiServer adds one ipBlock egress rule per endpoint beside upstream rules; a bad CIDR is refused', async () => {
    const { e } = await env();
    const policyOf = (r: { objects: ReadonlyArray<{ toJson: () => any }> }) =>
      r.objects.map((o) => o.toJson()).find((o) => o.kind === 'NetworkPolicy');
    const plain = policyOf(
      e.addRouter('r1', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] }),
    );
    const { e: e2 } = await env();
    const withApi = policyOf(
      e2.addRouter('r2', {
        image: ROUTER_IMAGE,
        authorization: { mode: 'tokenreview' },
        callers: [],
        apiServer: [{ cidr: '10.87.0.2/32', port: 36443 }],
      }),
    );
    expect(withApi.spec.egress).toEqual([
      ...plain.spec.egress,
      { to: [{ ipBlock: { cidr: '10.87.0.2/32' } }], ports: [{ protocol: 'TCP', port: 36443 }] },
    ]);
    const { e: e3 } = await env();
    const bad = thrownBy(
      () =>
        e3.addRouter('r3', {
          image: ROUTER_IMAGE,
          authorization: { mode: 'tokenreview' },
          callers: [],
          apiServer: [{ cidr: 'kubernetes.default', port: 443 }],
        }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(bad.problems).toMatchObject([{ prop: 'apiServer.0.cidr', value: 'kubernetes.default' }]);
  });

  test('a router calling the API server without apiServer, where NetworkPolicies are declared enforced: typed problem at its path', async () => {
    const reasons = async (
      required: 'verified' | 'configured' | undefined,
      router: { cache?: boolean; mode: 'tokenreview' | 'allow-all'; apiServer?: boolean },
    ) => {
      const e = newEnvironment(await release('v0.5.6'), 'env', {
        install: false,
        ...(required ? { requiredStates: { 'network-isolation': required } } : {}),
      });
      e.addRouter('router', {
        image: ROUTER_IMAGE,
        authorization:
          router.mode === 'tokenreview'
            ? { mode: 'tokenreview' }
            : { mode: 'allow-all', acknowledgeUnauthenticated: true },
        callers: [],
        ...(router.cache === undefined ? {} : { cache: router.cache }),
        ...(router.apiServer ? { apiServer: [{ cidr: '10.87.0.2/32', port: 6443 }] } : {}),
      });
      return e.check().problems.map((p) => [p.path, p.reason]);
    };
    const blocked = [['env/router', 'RouterApiServerNotAdmitted']];
    // The cache (upstream default on) or tokenreview calls the API server; enforced policies refuse it there.
    expect(await reasons('verified', { mode: 'allow-all' })).toEqual(blocked);
    expect(await reasons('verified', { mode: 'tokenreview', cache: false })).toEqual(blocked);
    // Declared endpoints, a router that never calls the API server, or enforcement not declared: nothing to report.
    expect(await reasons('verified', { mode: 'tokenreview', apiServer: true })).toEqual([]);
    expect(await reasons('verified', { mode: 'allow-all', cache: false })).toEqual([]);
    expect(await reasons('configured', { mode: 'tokenreview' })).toEqual([]);
    expect(await reasons(undefined, { mode: 'tokenreview' })).toEqual([]);
  });

  test('allow-all must be acknowledged', async () => {
    const { e } = await env();
    const err = thrownBy(
      () => e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'allow-all' } as never, callers: [] }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems).toMatchObject([{ prop: 'authorization.acknowledgeUnauthenticated', reason: 'InvalidValue' }]);
  });

  test('scoped-token mounts the key Secret', async () => {
    const { e } = await env();
    const r = e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'scoped-token', secretName: 'router-key' },
      callers: [],
    });
    const pod = r.objects.map((o) => o.toJson()).find((o) => o.kind === 'Deployment').spec.template.spec;
    expect(pod.containers[0].args).toContain(
      '--authz-scoped-token-secret-file=/etc/sandbox-router/scoped-token/secret',
    );
    expect(pod.volumes).toContainEqual({ name: 'scoped-token', secret: { secretName: 'router-key' } });
  });

  test.each(['v0.4.6', 'v0.5.0'] as const)('%s has no router manifests: refused', async (tag) => {
    const { e } = await env(tag);
    thrownBy(
      () => e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] }),
      UnsupportedByReleaseError,
      'UnsupportedByRelease',
    );
  });
});

describe('SandboxNetworkPolicy', () => {
  test('ingress only from the router pods on the runtime ports, DNS explicit, allowlisted egress; template becomes Unmanaged', async () => {
    const { e, rc } = await env();
    const t = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
    const r = e.addRouter('router', { image: ROUTER_IMAGE, authorization: { mode: 'tokenreview' }, callers: [] });
    const np = e.addNetworkPolicy('np', {
      template: t,
      router: r,
      callers: [{ namespace: 'ci', podLabels: { app: 'runner' } }],
      egress: [{ cidr: '10.40.0.0/16', except: ['10.40.1.0/24'], ports: [{ port: 443 }] }],
    });
    expect(np.apiObject.toJson()).toEqual({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: {
        name: 'py-sandbox-policy',
        namespace: 'agent-sandboxes',
        labels: { 'agentplane.dev/environment': 'env' },
      },
      spec: {
        podSelector: { matchLabels: { 'agentplane.dev/template': 'py', 'agentplane.dev/environment': 'env' } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            from: [
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agent-sandbox-system' } },
                podSelector: { matchLabels: r.podLabels },
              },
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ci' } },
                podSelector: { matchLabels: { app: 'runner' } },
              },
            ],
            ports: [{ port: 8888, protocol: 'TCP' }],
          },
        ],
        egress: [
          {
            to: [
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
                podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
              },
              { ipBlock: { cidr: '169.254.20.10/32' } },
              { ipBlock: { cidr: '10.96.0.10/32' } },
            ],
            ports: [
              { port: 53, protocol: 'UDP' },
              { port: 53, protocol: 'TCP' },
            ],
          },
          {
            to: [{ ipBlock: { cidr: '10.40.0.0/16', except: ['10.40.1.0/24'] } }],
            ports: [{ port: 443, protocol: 'TCP' }],
          },
        ],
      },
    });
    expect(t.networkPolicyManagement).toBe('Unmanaged');
    expect(t.apiObject.toJson().spec.networkPolicyManagement).toBe('Unmanaged');
  });

  test('an egress entry without ports, or with two kinds of destination, is refused', async () => {
    const { e, rc } = await env();
    const t = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
    const noPorts = thrownBy(
      () => e.addNetworkPolicy('np', { template: t, egress: [{ cidr: '0.0.0.0/0', ports: [] }] }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(noPorts.problems).toMatchObject([{ prop: 'egress.0.ports', reason: 'TooSmall', value: [] }]);
    const twoKinds = thrownBy(
      () =>
        e.addNetworkPolicy('np2', {
          template: t,
          egress: [{ cidr: '0.0.0.0/0', namespace: 'x', ports: [{ port: 1 }] }],
        }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(twoKinds.problems).toMatchObject([{ prop: 'egress.0', reason: 'AmbiguousDestination' }]);
  });
});
