/**
 * Case gvisor-runtimeclass-unschedulable on the cluster: a RuntimeClass moves discovered → compatible only when a Ready
 * node matches its scheduling, configured when a template references it, and stays below verified when isolation cannot
 * be seen from inside the sandbox (the test cluster runs sandboxd natively: its dmesg never names gVisor), naming the
 * missing acceptance test. A template under a class no Ready node matches, or under one that does not exist, gets no
 * probe object and no wait.
 */
import * as k8s from '@kubernetes/client-node';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { kwokNode } from '../../../test-cluster/nodes.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { EXT, plan, sandboxdTemplate, templatePlan } from './verifier-env.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { RUN_LABEL } from '../../../src/verify/workload.js';

let c: Cluster;
let ns: string;
const suffix = Math.random().toString(36).slice(2, 7);
const matching = `vfy-runsc-${suffix}`;
const orphan = `vfy-orphan-${suffix}`;
const nodeName = `kwok-vfy-${suffix}`;
const absent = `vfy-absent-${suffix}`;
const nodeApi = () => c.kc.makeApiClient(k8s.NodeV1Api);

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfyrc');
  const label = `agentplane.dev/runsc-${suffix}`;
  await c.core.createNode({
    body: kwokNode(
      nodeName,
      100 + Math.floor(Math.random() * 150),
      { [label]: 'true' },
      [],
      c.info.podNet,
    ) as k8s.V1Node,
  });
  await nodeApi().createRuntimeClass({
    body: {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: matching },
      handler: 'runsc',
      scheduling: { nodeSelector: { [label]: 'true' } },
    },
  });
  await nodeApi().createRuntimeClass({
    body: {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: orphan },
      handler: 'runsc',
      scheduling: { nodeSelector: { 'agentplane.dev/no-such-node': 'true' } },
    },
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'gv', 'sandboxd', matching),
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'stranded', 'sandboxd', orphan),
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'nameless', 'sandboxd', absent),
  });
}, 60_000);

afterAll(async () => {
  await nodeApi()
    .deleteRuntimeClass({ name: matching })
    .catch(() => undefined);
  await nodeApi()
    .deleteRuntimeClass({ name: orphan })
    .catch(() => undefined);
  await c.core.deleteNode({ name: nodeName }).catch(() => undefined);
});

test('matching node: compatible → configured; the pod ran under it but isolation is not proven (stays configured)', async () => {
  const p = plan(c, [templatePlan(ns, 'gv', matching)], {
    runtimeClasses: [matching, orphan],
    requirements: requirementsFor([`runtime-class/${matching}`, `runtime-class/${orphan}`, 'runtime-exec']),
  });
  const { report } = await runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    controllerMode: 'external',
    progress: () => undefined,
  });
  const rc = report.capabilities.find((r) => r.name === `runtime-class/${matching}`)!;
  const compatible = rc.evidence.find((e) => e.step === 'compatible')!;
  expect([compatible.verdict, compatible.reason, compatible.value]).toEqual([
    'proven',
    'NodesMatchRuntimeClass',
    nodeName,
  ]);
  const ran = rc.evidence.find((e) => e.step === 'verified' && e.reason === 'RanUnderRuntimeClass')!;
  expect([ran.verdict, ran.field, ran.value]).toEqual(['proven', 'spec.runtimeClassName', matching]);
  expect(rc.state).toBe('configured');
  // The stand-in's sandboxd runs on this machine's kernel: no gVisor marker; the kernel comparison depends on what
  // the kwok node reports as its kernelVersion, so the marker is what this test pins.
  expect(['NotGvisorKernel', 'HostKernel']).toContain(rc.nextReason);
  const kernel = rc.evidence.find((e) => e.reason === 'NotGvisorKernel')!;
  expect([kernel.verdict, kernel.field]).toEqual(['missing', '/proc/version, /proc/sys/kernel/osrelease, dmesg']);
  expect(kernel.missingTest).toMatch(new RegExp(`^isolation/${matching}: `));
  expect(report.capabilities.find((r) => r.name === 'runtime-exec')!.state).toBe('verified');
  const o = report.capabilities.find((r) => r.name === `runtime-class/${orphan}`)!;
  expect(o.state).toBe('discovered');
  expect(o.nextReason).toBe('NoNodeMatchesRuntimeClass');
  const noNode = o.evidence.find((e) => e.reason === 'NoNodeMatchesRuntimeClass')!;
  expect(noNode.field).toBe('scheduling');
  expect(noNode.value).toContain('kwok-node-0 lacks label agentplane.dev/no-such-node=true');
}, 180_000);

test('a class no Ready node matches, and a class that does not exist: the workload probe creates nothing, says why and finishes at once', async () => {
  // `orphan` is declared (its runtime-class probe runs first); `absent` is not (the workload probe checks it itself).
  const p = plan(c, [templatePlan(ns, 'stranded', orphan), templatePlan(ns, 'nameless', absent)], {
    runtimeClasses: [orphan],
    requirements: requirementsFor([
      `runtime-class/${orphan}`,
      `template/${ns}/stranded`,
      `template/${ns}/nameless`,
      'runtime-exec',
    ]),
  });
  const lines: string[] = [];
  const runId = Math.floor(Math.random() * 0xffffff)
    .toString(16)
    .padStart(6, '0');
  const started = Date.now();
  const { report } = await runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    controllerMode: 'external',
    progress: (l) => lines.push(l),
    runId,
  });
  const tookMs = Date.now() - started;
  expect(tookMs).toBeLessThan(20_000); // the ready timeout is 60 s: nothing waited for a sandbox
  const stranded = report.capabilities.find((r) => r.name === `template/${ns}/stranded`)!;
  const unusable = (capability: string) =>
    report.capabilities
      .find((r) => r.name === capability)!
      .evidence.filter((e) => e.step === 'verified')
      .map((e) => [e.verdict, e.reason, e.field, e.value]);
  expect(unusable(`template/${ns}/stranded`)).toEqual([
    ['missing', 'RuntimeClassUnusable', `RuntimeClass/${orphan}`, 'NoNodeMatchesRuntimeClass'],
  ]);
  expect(stranded.nextReason).toBe('RuntimeClassUnusable');
  expect(unusable(`template/${ns}/nameless`)).toEqual([
    ['missing', 'RuntimeClassUnusable', `RuntimeClass/${absent}`, 'RuntimeClassNotFound'],
  ]);
  const exec = report.capabilities.find((r) => r.name === 'runtime-exec')!;
  expect(exec.state).toBe('configured');
  expect(
    exec.evidence
      .filter((e) => e.step === 'verified')
      .every((e) => e.verdict === 'unknown' && e.reason === 'RuntimeClassUnusable'),
  ).toBe(true);
  // Progress lines by their structure: one workload note per blocked template, naming its class; no probe created.
  expect(
    lines.filter(
      (l) =>
        /\] workload\//.test(l) && (l.includes(`RuntimeClass ${orphan} `) || l.includes(`RuntimeClass ${absent} `)),
    ),
  ).toHaveLength(2);
  expect(lines.some((l) => /creating probe/.test(l))).toBe(false);
  expect(report.leftovers).toEqual([]);
  for (const plural of ['sandboxwarmpools', 'sandboxclaims']) {
    const list = (await c.custom.listNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural,
      labelSelector: `${RUN_LABEL}=${runId}`,
    })) as { items: unknown[] };
    expect({ plural, items: list.items.length }).toEqual({ plural, items: 0 });
  }
  const sandboxes = (await c.custom.listNamespacedCustomObject({
    group: 'agents.x-k8s.io',
    version: 'v1beta1',
    namespace: ns,
    plural: 'sandboxes',
    labelSelector: `${RUN_LABEL}=${runId}`,
  })) as { items: unknown[] };
  expect(sandboxes.items).toHaveLength(0);
}, 60_000);
