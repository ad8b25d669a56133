/**
 * Case 12 on the cluster: a RuntimeClass moves discovered → compatible only when a Ready node matches its scheduling,
 * configured when a template references it, and stays below verified when isolation cannot be seen from inside the
 * sandbox (the test cluster runs sandboxd natively: its dmesg never names gVisor), naming the missing acceptance test.
 */
import * as k8s from '@kubernetes/client-node';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { kwokNode } from '../../../test-cluster/nodes.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { EXT, plan, sandboxdTemplate, templatePlan } from './verifier-env.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';

let c: Cluster;
let ns: string;
const suffix = Math.random().toString(36).slice(2, 7);
const matching = `vfy-runsc-${suffix}`;
const orphan = `vfy-orphan-${suffix}`;
const nodeName = `kwok-vfy-${suffix}`;
const nodeApi = () => c.kc.makeApiClient(k8s.NodeV1Api);

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfyrc');
  const label = `agentplane.dev/runsc-${suffix}`;
  await c.core.createNode({ body: kwokNode(nodeName, 100 + Math.floor(Math.random() * 150), { [label]: 'true' }, [], c.info.podNet) as k8s.V1Node });
  await nodeApi().createRuntimeClass({ body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: matching }, handler: 'runsc', scheduling: { nodeSelector: { [label]: 'true' } } } });
  await nodeApi().createRuntimeClass({ body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: orphan }, handler: 'runsc', scheduling: { nodeSelector: { 'agentplane.dev/no-such-node': 'true' } } } });
  await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxtemplates', body: sandboxdTemplate(ns, 'gv', 'sandboxd', matching) });
}, 60_000);

afterAll(async () => {
  await nodeApi().deleteRuntimeClass({ name: matching }).catch(() => undefined);
  await nodeApi().deleteRuntimeClass({ name: orphan }).catch(() => undefined);
  await c.core.deleteNode({ name: nodeName }).catch(() => undefined);
});

test('matching node: compatible → configured; the pod ran under it but isolation is not proven (stays configured)', async () => {
  const p = plan(c, [templatePlan(ns, 'gv', matching)], { runtimeClasses: [matching, orphan], requirements: requirementsFor([`runtime-class/${matching}`, `runtime-class/${orphan}`, 'runtime-exec']) });
  const { report } = await runVerify({ plan: p, client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }), controllerMode: 'external', progress: () => undefined });
  const rc = report.capabilities.find((r) => r.name === `runtime-class/${matching}`)!;
  expect(rc.evidence.find((e) => e.step === 'compatible')!.message).toBe(`1 Ready node(s) match its scheduling: ${nodeName}`);
  expect(rc.evidence.some((e) => e.step === 'verified' && e.verdict === 'proven' && e.message === `pod ran under RuntimeClass ${matching} on node ${nodeName}`)).toBe(true);
  expect(rc.state).toBe('configured');
  expect(rc.next).toMatch(/^verified not reached: isolation not proven: dmesg inside the sandbox does not name gVisor .*\(acceptance test missing: isolation\/vfy-runsc-\w+: a pod under handler runsc whose dmesg names gVisor\)$/);
  expect(report.capabilities.find((r) => r.name === 'runtime-exec')!.state).toBe('verified');
  const o = report.capabilities.find((r) => r.name === `runtime-class/${orphan}`)!;
  expect(o.state).toBe('discovered');
  expect(o.next).toMatch(/^compatible not reached: no Ready node matches its scheduling: .*kwok-node-0 lacks label agentplane\.dev\/no-such-node=true/);
}, 180_000);
