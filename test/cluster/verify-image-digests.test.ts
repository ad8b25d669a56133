/**
 * Case unpinned-image-tags (verifier side) on the test cluster: the image-digest probe reads the pods the real
 * controller made for a warm pool and compares each container's `status.containerStatuses[].imageID` with the digest
 * the environment pinned.
 *
 * What the test cluster puts there: kwok's `pod-ready` stage (test-cluster/.run/kwok-stages.yaml) writes `image` = the
 * spec image and `imageID: ""` — no runtime pulls anything. So the first test sees the real shape (no imageID: unknown).
 * For match and skew the test writes `imageID` itself through the real API server's pods/status subresource: a
 * runtime's answer the test cluster cannot produce (one node pulled the pinned digest, another ran a stale cached image).
 * kwok does not overwrite it: `pod-ready` selects only pods that are Pending or not Ready, and these pods are Running
 * and Ready; the test re-reads the pods after the probe ran and asserts the written imageIDs (and resourceVersions) are
 * unchanged. The test cluster's controller and router run outside the cluster (no pods, no router Service), so the first
 * three tests compare only the template's pods and assert the router's skip from the progress note; the last one makes a
 * controller Deployment with a pod, and a router Service with a pod, in the test namespace to cover those reads.
 */
import * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../../src/adapter/kubernetes/client.js';
import { releaseFacts } from '../../src/releases/index.js';
import { Cluster as VerifyCluster } from '../../src/adapter/kubernetes/cluster.js';
import type { Evidence } from '../../src/verify/evidence.js';
import type { TemplatePlan } from '../../src/verify/plan.js';
import { imageDigestsProbe } from '../../src/verify/probes/image-digests.js';
import { installProbe } from '../../src/verify/probes/install.js';
import { templateProbe } from '../../src/verify/probes/template.js';
import { runProbes, type Probe } from '../../src/verify/runner.js';
import { AdapterRuntimeProber } from '../../src/verify/runtime-prober.js';
import { settle } from '../../src/verify/states.js';
import { Workload } from '../../src/verify/workload.js';
import { RUNTIME_ANNOTATION } from '../../test-cluster/runtime.js';
import { connect, freshNamespace, waitFor, type Cluster } from './helpers.js';
import { EXT, plan } from './verify/verifier-env.js';

const REPO = 'registry.local/agentplane-test/sandboxd';
const PINNED_DIGEST = `sha256:${'a1'.repeat(32)}`;
const STALE_DIGEST = `sha256:${'b2'.repeat(32)}`;
const PINNED = `${REPO}:v0.5.6@${PINNED_DIGEST}`;
const LABELS = { 'agentplane.dev/template': 'digests' };

let c: Cluster;
let ns: string;
let client: KubeClient;
let runtime: AdapterRuntimeProber;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vimg');
  client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  runtime = new AdapterRuntimeProber({ client });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      metadata: { name: 'digests', namespace: ns },
      // Runtime `none`: the stand-in starts no sandboxd for these pods; only their status matters here.
      spec: {
        podTemplate: {
          metadata: { labels: LABELS, annotations: { [RUNTIME_ANNOTATION]: 'none' } },
          spec: { containers: [{ name: 'sandboxd', image: PINNED }] },
        },
      },
    },
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'digests-pool', namespace: ns },
      spec: { replicas: 2, sandboxTemplateRef: { name: 'digests' } },
    },
  });
  await waitFor('two running pool pods', 60_000, async () => {
    const pods = await runningPods();
    return pods.length === 2 ? pods : undefined;
  });
}, 90_000);

afterAll(async () => {
  await runtime?.close();
  await c?.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

async function runningPods(): Promise<k8s.V1Pod[]> {
  const list = await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'agentplane.dev/template=digests' });
  return list.items
    .filter(
      (p) =>
        p.status?.phase === 'Running' &&
        !p.metadata?.deletionTimestamp &&
        p.status.containerStatuses?.[0]?.state?.running,
    )
    .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
}

function templatePlan(pinned: string): TemplatePlan {
  return {
    namespace: ns,
    name: 'digests',
    runtime: 'sandboxd',
    ports: { rest: 8080, grpc: 9090 },
    networkPolicyManagement: 'Managed',
    images: { sandboxd: pinned },
    podLabels: LABELS,
  };
}

/** Runs install, template and image-digest probes (no workload: it would claim a pool member) and returns the evidence and progress lines. */
async function probe(pinned: string): Promise<{ evidence: Evidence[]; lines: string[]; template: Evidence[] }> {
  const t = templatePlan(pinned);
  const p = plan(c, [t], {
    router: {
      namespace: 'agent-sandbox-system',
      service: 'sandbox-router-svc',
      podLabels: { app: 'sandbox-router' },
      image: 'registry.k8s.io/agent-sandbox/sandbox-router-go:v0.5.6',
    },
  });
  const cluster = new VerifyCluster(client);
  const deps = { cluster, plan: p, facts: releaseFacts('v0.5.6'), runtime, workload: new Workload(cluster) };
  const images = imageDigestsProbe(deps, { controllerMode: 'external' })!;
  expect(images.covers).toEqual(['router', `template/${ns}/digests`]);
  const lines: string[] = [];
  const probes: Probe[] = [installProbe(deps), templateProbe(deps, t, undefined), images];
  const evidence = await runProbes(probes, { progress: (l) => lines.push(l) });
  return { evidence, lines, template: evidence.filter((e) => e.capability === `template/${ns}/digests`) };
}

test('as the test cluster reports them (imageID empty): unknown, the template stays configured; router without Service not compared', async () => {
  const pods = await runningPods();
  expect(pods.map((p) => p.status!.containerStatuses![0]!.imageID)).toEqual(['', '']);
  expect(pods.map((p) => p.status!.containerStatuses![0]!.image)).toEqual([PINNED, PINNED]);
  const { evidence, lines, template } = await probe(PINNED);
  const verified = template.filter((e) => e.step === 'verified');
  expect(verified.map((e) => [e.verdict, e.reason, e.subject])).toEqual([
    ['unknown', 'NoImageId', `pods of template ${ns}/digests`],
  ]);
  expect(settle(template)).toMatchObject({ state: 'configured', nextReason: 'NoImageId' });
  expect(evidence.filter((e) => e.capability === 'router')).toEqual([]);
  // Progress lines by their structure: the images probe's note names the router Service it could not find.
  expect(
    lines.filter((l) => l.startsWith('[3/3] images: ') && l.includes('agent-sandbox-system/sandbox-router-svc')),
  ).toHaveLength(1);
}, 60_000);

test('imageIDs written through pods/status: the pinned digest matches, a stale digest is skew naming pod/container/pinned/running; kwok leaves them', async () => {
  const [good, stale] = await runningPods();
  // Fault the test cluster cannot produce: a runtime reporting which digest it runs (one node pulled the pin, one ran a stale cache).
  const written = new Map<string, string>([
    [good!.metadata!.name!, `${REPO}@${PINNED_DIGEST}`],
    [stale!.metadata!.name!, `docker-pullable://${REPO}@${STALE_DIGEST}`],
  ]);
  const versions = new Map<string, string>();
  for (const pod of [good!, stale!]) {
    pod.status!.containerStatuses![0]!.imageID = written.get(pod.metadata!.name!)!;
    const after = await c.core.replaceNamespacedPodStatus({ namespace: ns, name: pod.metadata!.name!, body: pod });
    versions.set(pod.metadata!.name!, after.metadata!.resourceVersion!);
  }
  const { template } = await probe(PINNED);
  const verified = template.filter((e) => e.step === 'verified');
  expect(verified.map((e) => [e.verdict, e.reason, e.subject])).toEqual([
    ['missing', 'ImageDigestDiffers', `Pod ${ns}/${stale!.metadata!.name}`],
    ['proven', 'ImageDigestPinned', `pods of template ${ns}/digests`],
  ]);
  expect(verified[0]).toMatchObject({
    field: 'status.containerStatuses[sandboxd].imageID',
    value: `docker-pullable://${REPO}@${STALE_DIGEST}`,
  });
  expect(verified[1]).toMatchObject({ value: PINNED_DIGEST });
  const s = settle(template);
  expect(s).toMatchObject({ state: 'configured', nextReason: 'ImageDigestDiffers' });

  // kwok did not rewrite the status while the probe ran.
  const now = await runningPods();
  expect(
    now.map((p) => [p.metadata!.name, p.status!.containerStatuses![0]!.imageID, p.metadata!.resourceVersion]),
  ).toEqual(
    [good!, stale!].map((p) => [p.metadata!.name, written.get(p.metadata!.name!), versions.get(p.metadata!.name!)]),
  );
}, 60_000);

test('the same pods under a tag-only pin: skew cannot be detected, said so, never verified', async () => {
  const tagOnly = `${REPO}:v0.5.6`;
  const { template } = await probe(tagOnly);
  const verified = template.filter((e) => e.step === 'verified');
  expect(verified.map((e) => [e.verdict, e.reason, e.field, e.value])).toEqual([
    ['unknown', 'PinnedByTagOnly', 'status.containerStatuses[].imageID', tagOnly],
  ]);
  expect(settle(template)).toMatchObject({ state: 'configured', nextReason: 'PinnedByTagOnly' });
}, 60_000);

test('controller Deployment pods and in-cluster router pods: controller skew against its pinned digest, router without imageID unknown', async () => {
  const apps = c.kc.makeApiClient(k8s.AppsV1Api);
  const CONTROLLER = 'registry.k8s.io/agent-sandbox/agent-sandbox-controller';
  const ctlPinned = `${CONTROLLER}:v0.5.6@${PINNED_DIGEST}`;
  const onStandin = { nodeSelector: { 'agentplane.io/runtime': 'standin' }, tolerations: [{ operator: 'Exists' }] };
  // No kube deployment controller runs in the test cluster: the Deployment is read for its selector and first
  // container, and the pod it would own is created directly with the selected labels.
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name: 'ctl' },
      spec: {
        selector: { matchLabels: { app: 'ctl' } },
        template: {
          metadata: { labels: { app: 'ctl' } },
          spec: { containers: [{ name: 'manager', image: ctlPinned }] },
        },
      },
    },
  });
  await c.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'ctl-1', labels: { app: 'ctl' } },
      spec: { ...onStandin, containers: [{ name: 'manager', image: ctlPinned }] },
    },
  });
  await c.core.createNamespacedService({
    namespace: ns,
    body: {
      metadata: { name: 'router-svc' },
      spec: { clusterIP: 'None', selector: { app: 'sandbox-router' }, ports: [{ port: 8080 }] },
    },
  });
  await c.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'router-1', labels: { app: 'sandbox-router' } },
      spec: {
        ...onStandin,
        containers: [
          { name: 'router', image: `registry.k8s.io/agent-sandbox/sandbox-router-go:v0.5.6@${PINNED_DIGEST}` },
        ],
      },
    },
  });
  const ctl = await waitFor('controller pod running', 30_000, async () => {
    const p = await c.core.readNamespacedPod({ namespace: ns, name: 'ctl-1' });
    return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
  });
  await waitFor('router pod running', 30_000, async () =>
    (await c.core.readNamespacedPod({ namespace: ns, name: 'router-1' })).status?.containerStatuses?.[0]?.state?.running
      ? true
      : undefined,
  );
  // Fault the test cluster cannot produce: the controller pod reports a digest other than the pin (a stale image).
  ctl.status!.containerStatuses![0]!.imageID = `${CONTROLLER}@${STALE_DIGEST}`;
  await c.core.replaceNamespacedPodStatus({ namespace: ns, name: 'ctl-1', body: ctl });

  const p = plan(c, [], {
    controller: { namespace: ns, deployment: 'ctl', serviceAccount: 'default', image: ctlPinned },
    router: {
      namespace: ns,
      service: 'router-svc',
      podLabels: { app: 'sandbox-router' },
      image: `registry.k8s.io/agent-sandbox/sandbox-router-go:v0.5.6@${PINNED_DIGEST}`,
    },
  });
  const cluster = new VerifyCluster(client);
  const deps = { cluster, plan: p, facts: releaseFacts('v0.5.6'), runtime, workload: new Workload(cluster) };
  const images = imageDigestsProbe(deps, { controllerMode: 'deployment' })!;
  expect(images.covers).toEqual(['controller', 'router']);
  const evidence = await images.run({
    signal: new AbortController().signal,
    deadlineMs: images.deadlineMs,
    evidence: [],
    note: () => undefined,
  });
  expect(evidence.map((e) => [e.capability, e.step, e.verdict, e.subject])).toEqual([
    ['controller', 'verified', 'missing', `Pod ${ns}/ctl-1`],
    ['router', 'verified', 'unknown', `router pods app=sandbox-router in ${ns}`],
  ]);
  expect(evidence.map((e) => [e.reason, e.field, e.value])).toEqual([
    ['ImageDigestDiffers', 'status.containerStatuses[manager].imageID', `${CONTROLLER}@${STALE_DIGEST}`],
    ['NoImageId', 'status.containerStatuses[].imageID', ''],
  ]);
  expect(evidence[1]!.objects).toContain(`${ns}/router-1/router`);
}, 60_000);
