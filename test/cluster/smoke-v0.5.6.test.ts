/**
 * Smoke test of the real test cluster on Agent Sandbox v0.5.6: the environment synthesized by AgentPlane's
 * constructs (test-cluster/env/v0.5.6.ts), applied by test-cluster/install.ts; its SandboxTemplate + SandboxWarmPool and
 * a new SandboxClaim reach Ready through the real controller; the real sandbox-router answers sandboxd's `/v1/health`
 * through the pod IP (router cache path, `sandbox-router/cache/cache.go@v0.5.6`); sandboxd's gRPC ProcessService Execute
 * works on the pod IP (unprivileged); the conversion webhook answers on loopback; deleting the claim removes Sandbox and Pod.
 */
import * as k8s from '@kubernetes/client-node';
import { connect, grpcExecute, httpGet, isGone, readyCondition, waitFor, type Cluster } from './helpers.js';
import { SMOKE_NAMESPACE } from '../../test-cluster/env/v0.5.6.js';
import { readRuntimes } from '../../test-cluster/runtime.js';

const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };
const CORE = { group: 'agents.x-k8s.io', version: 'v1beta1' };
let c: Cluster;

beforeAll(() => {
  c = connect();
});

test('the cluster runs Kubernetes v1.36.3 and the v0.5.6 CRDs convert through a loopback webhook', async () => {
  expect(c.info.release).toBe('v0.5.6');
  const version = await c.kc.makeApiClient(k8s.VersionApi).getCode();
  expect(version.gitVersion).toBe('v1.36.3');
  const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const name of [
    'sandboxes.agents.x-k8s.io',
    'sandboxtemplates.extensions.agents.x-k8s.io',
    'sandboxwarmpools.extensions.agents.x-k8s.io',
    'sandboxclaims.extensions.agents.x-k8s.io',
  ]) {
    const crd = await ext.readCustomResourceDefinition({ name });
    expect(crd.spec.versions.map((v) => v.name).sort()).toEqual(['v1alpha1', 'v1beta1']);
    expect(crd.spec.conversion?.webhook?.clientConfig?.url).toBe(`https://127.0.0.1:${c.info.ports.webhook}/convert`);
    expect(crd.spec.conversion?.webhook?.clientConfig?.service).toBeUndefined();
  }
});

test('the synthesized template + warm pool and a new claim reach Ready; the router reaches sandboxd via the pod IP; deleting the claim removes Sandbox and Pod', async () => {
  // Template and pool come from the environment test-cluster/env/v0.5.6.ts (AgentPlane constructs), applied by install.ts.
  const template = (await c.custom.getNamespacedCustomObject({
    ...EXT,
    namespace: SMOKE_NAMESPACE,
    plural: 'sandboxtemplates',
    name: 'sandboxd',
  })) as {
    metadata: { labels?: Record<string, string> };
    spec: { podTemplate: { spec: { runtimeClassName?: string; containers: { name: string }[] } } };
  };
  expect(template.metadata.labels?.['agentplane.dev/environment']).toBe('test-cluster');
  expect(template.spec.podTemplate.spec.runtimeClassName).toBe('standin');
  expect(template.spec.podTemplate.spec.containers.map((x) => x.name)).toContain('sandboxd');
  await waitFor('warm pool sandboxd readyReplicas >= 1', 30_000, async () => {
    const pool = (await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: SMOKE_NAMESPACE,
      plural: 'sandboxwarmpools',
      name: 'sandboxd',
    })) as { status?: { readyReplicas?: number } };
    return (pool.status?.readyReplicas ?? 0) >= 1 ? true : undefined;
  });

  const claimName = `smoke-${Math.random().toString(36).slice(2, 8)}`;
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: SMOKE_NAMESPACE,
    plural: 'sandboxclaims',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxClaim',
      metadata: { name: claimName },
      spec: { warmPoolRef: { name: 'sandboxd' } },
    },
  });
  const claim = await waitFor('claim Ready=True', 30_000, async () => {
    const obj = (await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: SMOKE_NAMESPACE,
      plural: 'sandboxclaims',
      name: claimName,
    })) as { status?: { sandbox?: { name?: string } } };
    return readyCondition(obj)?.status === 'True' && obj.status?.sandbox?.name ? obj : undefined;
  });
  const ns = SMOKE_NAMESPACE;
  const sandboxName = claim.status!.sandbox!.name!;
  const sandbox = await c.custom.getNamespacedCustomObject({
    ...CORE,
    namespace: ns,
    plural: 'sandboxes',
    name: sandboxName,
  });
  expect(readyCondition(sandbox)).toMatchObject({ status: 'True', reason: 'DependenciesReady' });

  const pod = await c.core.readNamespacedPod({ namespace: ns, name: sandboxName });
  expect(pod.status?.phase).toBe('Running');
  expect(pod.status?.podIP).toMatch(new RegExp(`^127\\.${c.info.podNet}\\.\\d+\\.\\d+$`));
  const runtime = await waitFor('sandboxd stand-in for the pod', 15_000, async () =>
    readRuntimes().find((r) => r.uid === pod.metadata?.uid),
  );
  expect(runtime).toMatchObject({ mode: 'sandboxd', podIP: pod.status?.podIP, restPort: 8080 });

  // Router: only the sandbox name + namespace (no pod IP header) -> router cache -> pod IP:8080 -> sandboxd.
  const headers = { 'X-Sandbox-Id': sandboxName, 'X-Sandbox-Namespace': ns, 'X-Sandbox-Port': '8080' };
  const health = await waitFor('router /v1/health 200', 15_000, async () => {
    const r = await httpGet(c.info.ports.routerHttp!, '/v1/health', headers);
    return r.status === 200 ? r : undefined;
  });
  expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
  const meta = await httpGet(c.info.ports.routerHttp!, '/v1/metadata', headers);
  expect(meta.status).toBe(200);
  expect((JSON.parse(meta.body) as { env: Record<string, string> }).env).toMatchObject({
    SANDBOX_POD_NAME: sandboxName,
    SANDBOX_POD_IP: pod.status?.podIP,
  });

  // gRPC ProcessService on the pod IP reaches the same sandboxd (the router is HTTP/1.1 only), running unprivileged.
  const exec = await grpcExecute(pod.status!.podIP!, 9090, ['sh', '-c', 'id -u; echo "$SANDBOX_POD_NAME"']);
  expect(exec).toEqual({
    exitCode: 0,
    stdout: `${process.getuid?.() === 0 ? 65534 : process.getuid?.()}\n${sandboxName}\n`,
    stderr: '',
  });

  // Conversion: a GET of the stored v1beta1 object as v1alpha1 goes through the controller's webhook on loopback.
  const asAlpha = (await c.custom.getNamespacedCustomObject({
    group: 'agents.x-k8s.io',
    version: 'v1alpha1',
    namespace: ns,
    plural: 'sandboxes',
    name: sandboxName,
  })) as { apiVersion: string; spec: { replicas?: number } };
  expect(asAlpha.apiVersion).toBe('agents.x-k8s.io/v1alpha1');
  expect(asAlpha.spec.replicas).toBe(1);

  await c.custom.deleteNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxclaims', name: claimName });
  await waitFor('Sandbox and Pod deleted', 30_000, async () =>
    (await isGone(() =>
      c.custom.getNamespacedCustomObject({ ...CORE, namespace: ns, plural: 'sandboxes', name: sandboxName }),
    )) && (await isGone(() => c.core.readNamespacedPod({ namespace: ns, name: sandboxName })))
      ? true
      : undefined,
  );
  await waitFor('stand-in stopped the runtime', 10_000, async () =>
    readRuntimes().some((r) => r.uid === pod.metadata?.uid) ? undefined : true,
  );
}, 120_000);
