/**
 * Case controller-rbac-gaps on the cluster: the controller probe asks the real API server, by SubjectAccessReview,
 * whether the controller's ServiceAccount holds every right of the pinned RBAC (plus known upstream gaps). The test
 * cluster's controller runs under exactly the pinned RBAC of v0.5.6, so it passes; a ServiceAccount with no bindings is
 * reported with every missing right listed, and the capability stays below configured. Also case client-node-1x-errors
 * (verifier side): an API that refuses connections makes the run "could not run", never a state.
 */
import net from 'node:net';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { loadRelease, type LoadedRelease } from '../../../src/releases/index.js';
import { runVerify, VerifyCouldNotRunError } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { connectAs, plan, verifierKubeconfig } from './verifier-env.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

let c: Cluster;
let ns: string;
let kubeconfig: string;
let loaded: LoadedRelease;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfyc');
  await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'bare-controller' } } });
  kubeconfig = (await verifierKubeconfig(c, ns, [ns])).file;
  loaded = await loadRelease('v0.5.6', { mirror: process.env.AGENTPLANE_MIRROR! });
}, 60_000);

test('the installed controller ServiceAccount holds every pinned right: controller configured (out-of-cluster mode)', async () => {
  const p = plan(c, [], {
    requirements: requirementsFor(['controller', 'sandbox-api', 'extensions-api', 'conversion']),
  });
  const { report } = await runVerify({
    plan: p,
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
  });
  const ctrl = report.capabilities.find((r) => r.name === 'controller')!;
  const rbac = ctrl.evidence.find(
    (e) => e.subject === 'RBAC of system:serviceaccount:agent-sandbox-system:agent-sandbox-controller',
  )!;
  expect(rbac).toMatchObject({ step: 'configured', verdict: 'proven', reason: 'RightsGranted' });
  expect(ctrl.state).toBe('configured');
  expect(report.capabilities.find((r) => r.name === 'conversion')!.state).toBe('configured');
}, 120_000);

test('a ServiceAccount without the pinned RBAC: every missing right is listed, controller stays below configured', async () => {
  const p = plan(c, [], {
    controller: { namespace: ns, deployment: 'none', serviceAccount: 'bare-controller' },
    requirements: requirementsFor(['controller', 'extensions-api']),
  });
  // The verifier's Role reads ServiceAccounts only in the controller namespace it was made for: use an admin client here.
  const admin = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const { report } = await runVerify({
    plan: p,
    client: admin,
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
  });
  const ctrl = report.capabilities.find((r) => r.name === 'controller')!;
  expect(ctrl.state).toBe('compatible');
  expect(ctrl.nextReason).toBe('RightsMissing');
  const lacking = ctrl.evidence.find((e) => e.reason === 'RightsMissing')!.value!.split('; ');
  expect(lacking).toEqual(
    expect.arrayContaining([
      'create events (cluster-wide)',
      'update sandboxes.agents.x-k8s.io/finalizers (cluster-wide)',
      'watch networkpolicies.networking.k8s.io (cluster-wide)',
    ]),
  );
}, 120_000);

test('deployment mode reads the controller Deployment: image against the pin, rollout not observed stays unknown, --extensions missing', async () => {
  const apps = c.kc.makeApiClient((await import('@kubernetes/client-node')).AppsV1Api);
  const deployment = (image: string, args: string[]) => ({
    metadata: { name: 'agent-sandbox-controller', namespace: ns },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'agent-sandbox-controller' } },
      template: {
        metadata: { labels: { app: 'agent-sandbox-controller' } },
        spec: { containers: [{ name: 'agent-sandbox-controller', image, args }] },
      },
    },
  });
  // No kube-controller-manager deployment controller runs here, so the Deployment's status is never written: exactly "rollout not observed".
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: deployment('registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.0', ['--leader-elect=true']),
  });
  const p = plan(c, [], {
    controller: { namespace: ns, deployment: 'agent-sandbox-controller', serviceAccount: 'bare-controller' },
    requirements: requirementsFor(['controller', 'extensions-api']),
  });
  const admin = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const { report } = await runVerify({
    plan: p,
    client: admin,
    loaded,
    controllerMode: 'deployment',
    progress: () => undefined,
  });
  const ctrl = report.capabilities.find((r) => r.name === 'controller')!;
  expect(ctrl.state).toBe('discovered');
  expect(ctrl.nextReason).toBe('ImageDiffers');
  expect(ctrl.evidence.find((e) => e.reason === 'ImageDiffers')).toMatchObject({
    step: 'compatible',
    verdict: 'missing',
    value: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.0',
  });
  expect(ctrl.evidence.find((e) => e.step === 'configured' && e.verdict === 'unknown')).toMatchObject({
    reason: 'StaleObservedGeneration',
    field: 'status.observedGeneration',
  });
  const ext = report.capabilities.find((r) => r.name === 'extensions-api')!;
  expect(ext.evidence.find((e) => e.reason === 'ExtensionsDisabled')).toMatchObject({
    step: 'configured',
    verdict: 'missing',
    value: '--leader-elect=true',
  });
  expect(report.tuple.controller).toEqual({
    value: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.0',
    source: `Deployment ${ns}/agent-sandbox-controller`,
  });
}, 120_000);

test('case controller-rbac-gaps: a controller Deployment at the pinned image that is not Available (crash-looping) keeps the controller at compatible', async () => {
  const k8sApi = await import('@kubernetes/client-node');
  const apps = c.kc.makeApiClient(k8sApi.AppsV1Api);
  const name = 'agent-sandbox-controller';
  const crashNs = await freshNamespace(c, 'vfyc-crash');
  await apps.createNamespacedDeployment({
    namespace: crashNs,
    body: {
      metadata: { name, namespace: crashNs },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [
              { name, image: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6', args: ['--extensions'] },
            ],
          },
        },
      },
    },
  });
  // No kubelet runs containers here, so a crash loop cannot happen for real: the test writes the status a crash-looping
  // controller's Deployment has (observed, updated, not Available) through the status subresource of the real API server.
  await apps.replaceNamespacedDeploymentStatus({
    namespace: crashNs,
    name,
    body: {
      ...(await apps.readNamespacedDeployment({ namespace: crashNs, name })),
      status: {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        unavailableReplicas: 1,
        availableReplicas: 0,
        conditions: [
          {
            type: 'Available',
            status: 'False',
            reason: 'MinimumReplicasUnavailable',
            message: 'Deployment does not have minimum availability.',
            lastTransitionTime: new Date(),
            lastUpdateTime: new Date(),
          },
          {
            type: 'Progressing',
            status: 'True',
            reason: 'ReplicaSetUpdated',
            lastTransitionTime: new Date(),
            lastUpdateTime: new Date(),
          },
        ],
      },
    },
  });
  const p = plan(c, [], {
    controller: { namespace: crashNs, deployment: name, serviceAccount: 'agent-sandbox-controller' },
    requirements: requirementsFor(['controller']),
  });
  const { report } = await runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    loaded,
    controllerMode: 'deployment',
    progress: () => undefined,
  });
  const ctrl = report.capabilities.find((r) => r.name === 'controller')!;
  expect(ctrl.state).toBe('compatible');
  expect(ctrl.nextReason).toBe('ControllerNotAvailable');
  expect(ctrl.evidence.find((e) => e.reason === 'ControllerNotAvailable')).toMatchObject({
    step: 'configured',
    verdict: 'missing',
    field: 'status.conditions[Available]',
    value: 'False',
  });
}, 120_000);

test('an API server that refuses connections: could not run (no state is reported)', async () => {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'agentplane-kc-')), 'config');
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: x\n  cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: x, user: u}\n`,
  );
  await expect(
    runVerify({ plan: plan(c, []), client: KubeClient.connect({ kubeconfig: file }), progress: () => undefined }),
  ).rejects.toThrow(VerifyCouldNotRunError);
}, 60_000);
