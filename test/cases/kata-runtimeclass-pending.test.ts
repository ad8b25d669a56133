/**
 * Case kata-runtimeclass-pending, construct side: Kata overhead comes from a pinned,
 * sourced profile per hypervisor (kata-deploy's RuntimeClasses) unless overridden, and synthesis states each template's
 * and pool's need (requests and limits + overhead, × pods) per RuntimeClass; with the class's nodes declared it counts
 * the nodes the pods take and refuses a pod no node holds or pods the nodes cannot. The case's input: template
 * requests 500m/512Mi, warm pool replicas 2, two Kata nodes. The refusal is a problem of the environment's own check,
 * so `agentplane synth` (synthesizeEnvironment), `Testing.synth` and `app.synth()` refuse alike. The unschedulable node selector is the verifier's side
 * (case gvisor-runtimeclass-unschedulable's probe, test/cases/gvisor-runtimeclass-unschedulable.verify.test.ts).
 */
import { jest } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import {
  AgentEnvironment,
  CapacityError,
  capacityOf,
  ConstructError,
  EnvironmentInvalidError,
  synthesizeEnvironment,
  type CapacityReason,
  type RuntimeNodes,
} from '../../src/index.js';
import { KATA_PROFILES } from '../../src/constructs/overhead-profiles.js';
import { capacityRefusals } from '../../src/constructs/written-capacity.js';
import { release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

jest.setTimeout(120_000);
const IMAGE = 'registry.example.internal/agent-sandbox/python-runtime:v0.5.6';
const q = (cpu: string, memory: string) => ({
  cpu: k8s.Quantity.fromString(cpu),
  memory: k8s.Quantity.fromString(memory),
});
const SCHEDULING = {
  nodeSelector: { 'katacontainers.io/kata-runtime': 'true', 'feature.node.kubernetes.io/runtime.kata': 'true' },
};

async function kataEnv(
  opts: { nodes?: RuntimeNodes; hypervisor?: 'qemu' | 'clh'; overhead?: { cpu: string; memory: string } | false } = {},
) {
  // an app of its own with a scratch outdir, so app.synth() can run on it
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'agentplane-kata-')) });
  const e = new AgentEnvironment(app, 'sbx', {
    release: await release('v0.5.6'),
    defaultNamespace: 'sbx',
    lockFile: false,
  });
  const rc = e.addRuntimeClass('kata', { preset: 'kata', scheduling: SCHEDULING, ...opts });
  const tpl = e.addTemplate('py', {
    runtimeClass: rc,
    podSpec: {
      containers: [
        {
          name: 'main',
          image: IMAGE,
          ports: [{ containerPort: 8888 }],
          resources: { requests: q('500m', '512Mi'), limits: q('1', '1Gi') },
        },
      ],
    },
  });
  e.addWarmPool('py-pool', { template: tpl, replicas: 2 });
  return { e, rc };
}

describe('case kata-runtimeclass-pending', () => {
  test('the kata-qemu overhead is the pinned kata-deploy figure with its source, written into the RuntimeClass', async () => {
    const { e, rc } = await kataEnv();
    expect(rc.name).toBe('kata-qemu');
    expect(rc.overhead).toEqual({ cpu: '250m', memory: '160Mi' });
    expect(rc.overheadSource).toMatch(
      /kata-containers\/kata-containers tools\/packaging\/kata-deploy\/runtimeclasses\/kata-runtimeClasses.yaml@[0-9a-f]{40}/,
    );
    const obj = synthesizeEnvironment(e).objects.find((o) => o.object.kind === 'RuntimeClass')!.object as unknown as {
      overhead: unknown;
      handler: string;
    };
    expect(obj).toMatchObject({ handler: 'kata-qemu', overhead: { podFixed: { cpu: '250m', memory: '160Mi' } } });
  });

  test('per hypervisor: clh takes its own profile; an override is used and said to be one', async () => {
    expect((await kataEnv({ hypervisor: 'clh' })).rc).toMatchObject({
      name: 'kata-clh',
      handler: 'kata-clh',
      overhead: { cpu: '250m', memory: '130Mi' },
    });
    expect(KATA_PROFILES.fc.overhead).toEqual({ cpu: '250m', memory: '130Mi' });
    const over = (await kataEnv({ overhead: { cpu: '300m', memory: '256Mi' } })).rc;
    expect([over.overhead, over.overheadSource]).toEqual([{ cpu: '300m', memory: '256Mi' }, 'overhead prop']);
  });

  test("synthesis states the pool's need: (500m/512Mi + 250m/160Mi) × 2 requests, limits likewise", async () => {
    const { e } = await kataEnv();
    expect(synthesizeEnvironment(e).capacity).toEqual([
      {
        runtimeClass: 'kata-qemu',
        overhead: { cpu: '250m', memory: '160Mi' },
        overheadSource: expect.stringContaining('kata-deploy'),
        templates: [
          {
            template: 'sbx/py',
            requests: { cpu: '750m', memory: '672Mi' },
            limits: { cpu: '1250m', memory: '1184Mi' },
          },
        ],
        pools: [
          {
            pool: 'sbx/py-pool',
            template: 'sbx/py',
            replicas: 2,
            claims: 0,
            pods: 2,
            requests: { cpu: '1500m', memory: '1344Mi' },
            limits: { cpu: '2500m', memory: '2368Mi' },
          },
        ],
        total: { pods: 2, requests: { cpu: '1500m', memory: '1344Mi' }, limits: { cpu: '2500m', memory: '2368Mi' } },
      },
    ]);
  });

  test('claims on a pool count as pods (the pool replenishes each claimed member)', async () => {
    const { e } = await kataEnv();
    e.addClaim('c1', { pool: 'py-pool', lifecycle: { ttlSecondsAfterFinished: 60 } });
    expect(capacityOf(e)[0]!.pools[0]).toMatchObject({
      replicas: 2,
      claims: 1,
      pods: 3,
      requests: { cpu: '2250m', memory: '2016Mi' },
    });
  });

  test('two declared nodes of 1 cpu / 1Gi hold one pod each: 2 of 2 nodes', async () => {
    const { e } = await kataEnv({ nodes: { count: 2, allocatable: { cpu: '1', memory: '1Gi' } } });
    expect(capacityOf(e)[0]!.nodes).toEqual({ declared: 2, allocatable: { cpu: '1', memory: '1Gi' }, needed: 2 });
  });

  test('one such node is not enough: nodes-exhausted, at synthesis', async () => {
    const { e } = await kataEnv({ nodes: { count: 1, allocatable: { cpu: '1', memory: '1Gi' } } });
    const [exhausted, ...more] = capacityRefusals(e);
    expect(more).toEqual([]);
    expect(exhausted).toBeInstanceOf(CapacityError);
    expect([exhausted!.reason, exhausted!.path, exhausted!.figures]).toEqual([
      'NodesExhausted',
      'sbx/kata',
      {
        runtimeClass: 'kata-qemu',
        requests: { cpu: '1500m', memory: '1344Mi' },
        nodesDeclared: 1,
        nodesNeeded: 2,
      },
    ]);
    expect(e.check().problems.map((p) => [p.path, p.reason])).toEqual([['sbx/kata', 'NodesExhausted']]);
    // the figures stay countable: the two pods take two nodes
    expect(capacityOf(e)[0]!.nodes).toEqual({ declared: 1, allocatable: { cpu: '1', memory: '1Gi' }, needed: 2 });
    expectRefusedEverywhere(e, 'NodesExhausted');
  });

  test('a pod larger than a node (overhead included) is pod-exceeds-node', async () => {
    const { e } = await kataEnv({ nodes: { count: 4, allocatable: { cpu: '700m', memory: '4Gi' } } });
    const [err, ...more] = capacityRefusals(e);
    expect(more).toEqual([]);
    expect(err).toBeInstanceOf(CapacityError);
    expect([err!.reason, err!.path, err!.figures]).toEqual([
      'PodExceedsNode',
      'sbx/kata',
      {
        runtimeClass: 'kata-qemu',
        template: 'sbx/py',
        requests: { cpu: '750m', memory: '672Mi' },
        nodesDeclared: 4,
      },
    ]);
    // no pod fits a node: none is counted
    expect(capacityOf(e)[0]!.nodes!.needed).toBe(0);
    expectRefusedEverywhere(e, 'PodExceedsNode');
  });

  test('a props misfit is refused even with an acknowledgement, which covers no written object', async () => {
    const { e } = await kataEnv({ nodes: { count: 1, allocatable: { cpu: '1', memory: '1Gi' } } });
    e.acknowledge({ rule: 'NodesExhausted', path: e.warmPools[0]!, reason: 'the node pool autoscales' });
    const err = thrownBy(() => synthesizeEnvironment(e), EnvironmentInvalidError, 'EnvironmentInvalid');
    expect(err.problems.map((p) => [p.path, p.reason])).toEqual([
      ['sbx/kata', 'NodesExhausted'],
      ['sbx/py-pool', 'UnusedAcknowledgement'],
    ]);
  });
});

/**
 * `e` is refused for `reason` at its RuntimeClass `sbx/kata` by `synthesizeEnvironment` (typed), by `Testing.synth`
 * and by `app.synth()` of its app (cdk8s's errors carry the problem lines as text).
 */
function expectRefusedEverywhere(e: AgentEnvironment, reason: CapacityReason): void {
  const line = new RegExp(`^ *(\\[sbx\\] )?sbx/kata: .*\\(${reason}\\)$`, 'm');
  const cdk8s = thrownBy(() => Testing.synth(e), ConstructError, 'ConstructInvalid');
  expect(cdk8s.path).toBe('sbx');
  // prose: cdk8s validations carry text only; the line names the RuntimeClass's path and ends with the reason code
  expect(cdk8s.detail).toMatch(line);
  const app = e.node.root as App;
  let thrown: unknown;
  try {
    app.synth();
  } catch (x) {
    thrown = x;
  }
  expect(thrown).toBeInstanceOf(Error);
  // prose: app.synth() throws cdk8s's own Error listing each validation's text as `[path] line`
  expect((thrown as Error).message).toMatch(line);
  const invalid = thrownBy(() => synthesizeEnvironment(e), EnvironmentInvalidError, 'EnvironmentInvalid');
  expect(invalid.problems.map((p) => [p.path, p.reason])).toEqual([['sbx/kata', reason]]);
}
