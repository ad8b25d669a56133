/**
 * Warm pools on the cluster (case recreate-adopts-stale-template): a declared pool at the template's current pod
 * template is `configured` (updated ready ≥ replicas) and `verified` through a probe claim that the real controller
 * binds and adopts. After the template's image changes, a claim still bound to an old-template sandbox is flagged
 * StaleAdoption (claimed sandboxes are never rolled, `extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`).
 */
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { connect, freshNamespace, readyCondition, waitFor, type Cluster } from '../helpers.js';
import { EXT, plan, sandboxdTemplate, templatePlan } from './verifier-env.js';
import * as k8s from '@kubernetes/client-node';

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfywp');
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'py', 'sandboxd'),
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'py-pool', namespace: ns },
      spec: { replicas: 1, sandboxTemplateRef: { name: 'py' }, updateStrategy: { type: 'Recreate' } },
    },
  });
  await waitFor('pool readyReplicas 1', 30_000, async () => {
    const p = (await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxwarmpools',
      name: 'py-pool',
    })) as { status?: { readyReplicas?: number } };
    return p.status?.readyReplicas === 1 ? true : undefined;
  });
}, 60_000);

const pool = () => ({ namespace: ns, name: 'py-pool', template: 'py', replicas: 1 });

test('declared pool at the current template: configured by updated-ready count, verified through a probe claim', async () => {
  const p = plan(c, [templatePlan(ns, 'py')], {
    warmPools: [pool()],
    requirements: requirementsFor([`warm-pool/${ns}/py-pool`, 'runtime-exec']),
  });
  const { report } = await runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    controllerMode: 'external',
    progress: () => undefined,
  });
  const wp = report.capabilities.find((r) => r.name === `warm-pool/${ns}/py-pool`)!;
  expect({ state: wp.state, next: wp.next, nextReason: wp.nextReason }).toEqual({
    state: 'verified',
    next: null,
    nextReason: null,
  });
  const configured = wp.evidence.find((e) => e.step === 'configured')!;
  expect(configured.reason).toBe('PoolRolledOut');
  expect(configured.observed).toMatchObject({ replicas: 1, stale: 0 });
  expect(configured.observed!['updatedReady']).toBeGreaterThanOrEqual(1);
  expect(
    wp.evidence
      .filter((e) => e.step === 'verified' && e.reason === 'ClaimBoundSandbox')
      .map((e) => [e.verdict, e.subject.startsWith(`SandboxClaim ${ns}/py-pool-`)]),
  ).toEqual([['proven', true]]);
  expect(report.leftovers).toEqual([]);
}, 180_000);

test('after a template image change, a claim bound to an old-template sandbox is flagged StaleAdoption', async () => {
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxclaims',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxClaim',
      metadata: { name: 'c7', namespace: ns },
      spec: { warmPoolRef: { name: 'py-pool' } },
    },
  });
  await waitFor('claim c7 Ready', 30_000, async () => {
    const claim = await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxclaims',
      name: 'c7',
    });
    return readyCondition(claim)?.status === 'True' ? true : undefined;
  });
  await c.custom.patchNamespacedCustomObject(
    {
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      name: 'py',
      body: {
        spec: {
          podTemplate: {
            spec: {
              containers: [
                {
                  name: 'sandboxd',
                  image: 'registry.example/sandboxd:1.1',
                  ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
                },
              ],
            },
          },
        },
      },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  const p = plan(c, [templatePlan(ns, 'py')], {
    warmPools: [pool()],
    requirements: requirementsFor([`warm-pool/${ns}/py-pool`]),
  });
  const { report } = await runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    controllerMode: 'external',
    progress: () => undefined,
  });
  const wp = report.capabilities.find((r) => r.name === `warm-pool/${ns}/py-pool`)!;
  const stale = wp.evidence.filter((e) => e.step === 'configured' && e.reason === 'StaleAdoption');
  expect(stale.map((e) => [e.verdict, e.field])).toEqual([['missing', 'SandboxClaim c7']]);
  expect(stale[0]!.value).toMatch(/^py-pool-\w+$/);
  expect(wp.state).not.toBe('verified');
}, 180_000);
