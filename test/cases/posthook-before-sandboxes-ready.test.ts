/**
 * Case posthook-before-sandboxes-ready: Argo CD counts a custom resource without a health check Healthy as soon as it
 * exists (argoproj/argo-cd#16509), so PostSync fired while the controller image was still pulling and the pool was
 * empty. With AgentPlane's health Lua the objects of the reproduction (template sbx/py, pool sbx/py-pool with 2
 * replicas, a claim) are Progressing until the controller reports them Ready at their current generation, for every
 * release; the verifier hook fails once (`backoffLimit: 0`), after waiting itself (within a deadline shorter than the
 * Job's) for CRDs, controller and pool members, and leaves a summary in its termination message.
 */
import { jest } from '@jest/globals';
import { argoCdHealthLua, ARGOCD_HEALTH_RELEASES, type ArgoCdHealthKind } from '../../src/index.js';
import type { KubeObject, ReleaseTag } from '../../src/releases/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';
import { runHealth } from '../unit/gitops/lua.js';
import { pendingNow, waitForReadiness, type ReadinessReads } from '../../src/verify/readiness-gate.js';

jest.setTimeout(120_000);

/** The GitOps state of the reproduction, as synthesized for `tag`. */
async function synthesized(tag: ReleaseTag): Promise<KubeObject[]> {
  const env = newEnvironment(await release(tag), 'dev', { defaultNamespace: 'sbx' });
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const tpl = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
  env.addWarmPool('py-pool', { template: tpl, replicas: 2 });
  env.addClaim('c1', { pool: 'py-pool', lifecycle: { ttlSecondsAfterFinished: 600 } });
  env.addVerifierJob('verify', { image: 'registry.example/agentplane-verifier:1.2.0' });
  return env.toJson() as KubeObject[];
}

/** The object as the API server holds it right after the sync applied it: generation 1, no status yet. */
const justApplied = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, generation: 1 } });
const health = (tag: ReleaseTag, o: KubeObject) => runHealth(argoCdHealthLua(tag, o.kind as ArgoCdHealthKind), o);

describe.each(ARGOCD_HEALTH_RELEASES.map((r) => [r]))('posthook-before-sandboxes-ready, %s', (tag) => {
  test('pool and claim that merely exist are Progressing; the pool is Healthy only with both members Ready', async () => {
    const objs = await synthesized(tag);
    const pool = justApplied(objs.find((o) => o.kind === 'SandboxWarmPool')!);
    const claim = justApplied(objs.find((o) => o.kind === 'SandboxClaim')!);
    expect(health(tag, pool).status).toBe('Progressing');
    expect(health(tag, claim).status).toBe('Progressing');
    const hasObserved = tag === 'v0.5.6' || tag === 'v1.0.3';
    const status = (readyReplicas?: number, observedGeneration = 1) => ({
      ...pool,
      status: {
        replicas: 2,
        ...(readyReplicas === undefined ? {} : { readyReplicas }),
        ...(hasObserved ? { observedGeneration } : {}),
      },
    });
    expect(health(tag, status()).status).toBe('Progressing'); // members created, none Ready (counter omitted)
    expect(health(tag, status(1)).status).toBe('Progressing');
    expect(health(tag, status(2)).status).toBe('Healthy');
    if (hasObserved) {
      const edited = { ...status(2), metadata: { ...pool.metadata, generation: 2 } };
      expect(health(tag, edited).status).toBe('Progressing'); // counters of the previous spec
    }
  });

  test('the verifier hook: no retries, a deadline, no TTL', async () => {
    const job = (await synthesized(tag)).find((o) => o.kind === 'Job')!;
    expect(job.metadata?.annotations).toMatchObject({ 'argocd.argoproj.io/hook': 'PostSync' });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900 });
    expect(job.spec).not.toHaveProperty('ttlSecondsAfterFinished');
  });
});

test('the Job shows a summary in its pod status: the verifier writes it, its log tail when it dies first', async () => {
  const job = (await synthesized('v0.5.6')).find((o) => o.kind === 'Job')!;
  const container = (job.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec
    .containers[0]!;
  expect(container['terminationMessagePolicy']).toBe('FallbackToLogsOnError');
  expect(container['terminationMessagePath']).toBeUndefined(); // the default, /dev/termination-log
});

test('the verifier waits itself: image pulling and pool empty is pending, not a failure; then it is ready', async () => {
  const job = (await synthesized('v0.5.6')).find((o) => o.kind === 'Job')!;
  const args = (job.spec as { template: { spec: { containers: Array<{ args: string[] }> } } }).template.spec
    .containers[0]!.args;
  const wait = Number(args[args.indexOf('--wait-ready') + 1]!.replace(/s$/, ''));
  expect(wait).toBeLessThan(Number((job.spec as { activeDeadlineSeconds: number }).activeDeadlineSeconds));

  const targets = {
    release: 'v0.5.6' as const,
    crds: ['sandboxes.agents.x-k8s.io'],
    controller: { namespace: 'agent-sandbox-system', name: 'agent-sandbox-controller' },
    pools: [{ namespace: 'sbx', name: 'py-pool' }],
  };
  const crd: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'sandboxes.agents.x-k8s.io' },
    status: { conditions: [{ type: 'Established', status: 'True' }] },
  };
  const controller = (available: boolean): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'agent-sandbox-controller', namespace: 'agent-sandbox-system', generation: 1 },
    status: {
      observedGeneration: 1,
      updatedReplicas: 1,
      conditions: [{ type: 'Available', status: available ? 'True' : 'False', reason: 'MinimumReplicasUnavailable' }],
    },
  });
  const pool = (readyReplicas?: number): KubeObject => ({
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxWarmPool',
    metadata: { name: 'py-pool', namespace: 'sbx', generation: 1 },
    spec: { replicas: 2 },
    status: { observedGeneration: 1, ...(readyReplicas === undefined ? {} : { readyReplicas }) },
  });
  // the reproduction: all applied at once, the controller image still pulling, the pool empty
  const pulling: ReadinessReads = {
    crd: async () => crd,
    deployment: async () => controller(false),
    warmPool: async () => pool(),
  };
  expect((await pendingNow(targets, pulling)).map((p) => p.reason)).toEqual([
    'ControllerNotAvailable',
    'PoolMembersNotReady',
  ]);
  let t = 0;
  const states: ReadinessReads[] = [
    pulling,
    { ...pulling, deployment: async () => controller(true), warmPool: async () => pool(2) },
  ];
  let i = 0;
  const result = await waitForReadiness(
    targets,
    {
      crd: (n) => states[i]!.crd(n),
      deployment: (ns, n) => states[i]!.deployment(ns, n),
      warmPool: (ns, n) => states[i]!.warmPool(ns, n),
    },
    {
      deadlineMs: wait * 1000,
      intervalMs: 90_000, // the image pull of the reproduction
      now: () => t,
      sleep: async (ms) => {
        t += ms;
        i = 1;
      },
    },
  );
  expect(result).toEqual({ ready: true, waitedMs: 90_000, pending: [] });
});
