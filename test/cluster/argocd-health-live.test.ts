/**
 * The Argo CD health Lua (src/gitops/argocd-health.ts) run on the objects the real v0.5.6 controller writes on the test
 * cluster, read live while they change: a claim from its creation to Ready, the Sandbox it gets, and the warm pool
 * scaled up by one member and back. Every reading is judged by the Lua (fengari, as Argo CD runs it) and must agree
 * with the object's own state: never Healthy before the controller reported it ready at the current generation.
 */
import * as k8s from '@kubernetes/client-node';
import { runHealth } from '../unit/gitops/lua.js';
import { argoCdHealthLua, type ArgoCdHealthKind } from '../../src/index.js';
import { SMOKE_NAMESPACE } from '../../test-cluster/env/v0.5.6.js';
import { connect, readyCondition, waitFor, type Cluster } from './helpers.js';

const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };
const CORE = { group: 'agents.x-k8s.io', version: 'v1beta1' };
const NS = SMOKE_NAMESPACE;
const POOL = 'sandboxd';

type Live = {
  kind: string;
  metadata: { name: string; generation?: number };
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; observedGeneration?: number; conditions?: Array<Record<string, unknown>> };
};

let c: Cluster;
const health = (o: Live) => runHealth(argoCdHealthLua('v0.5.6', o.kind as ArgoCdHealthKind), o).status;
const get = async (plural: string, name: string, group = EXT) =>
  (await c.custom.getNamespacedCustomObject({ ...group, namespace: NS, plural, name })) as Live;

/**
 * Ready=True for the object's current generation (what the Lua must require before Healthy). A v0.5.6 claim's Ready is
 * its Sandbox's condition copied with the Sandbox's observedGeneration, which says nothing of the claim's generation.
 */
function readyNow(o: Live): boolean {
  const r = readyCondition(o) as { status?: string; observedGeneration?: number } | undefined;
  const current =
    o.kind === 'SandboxClaim' || (r?.observedGeneration ?? o.metadata.generation) === o.metadata.generation;
  return r?.status === 'True' && current;
}

beforeAll(() => {
  c = connect();
});

test('a claim and its Sandbox: Progressing until Ready at their generation, then Healthy', async () => {
  const name = `health-${Math.random().toString(36).slice(2, 8)}`;
  const created = (await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: NS,
    plural: 'sandboxclaims',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxClaim',
      metadata: { name },
      spec: { warmPoolRef: { name: POOL } },
    },
  })) as Live;
  try {
    // As created: it merely exists.
    expect(health(created)).toBe('Progressing');
    const seen: Array<[string, boolean]> = [];
    const claim = await waitFor(
      'claim Healthy',
      30_000,
      async () => {
        const o = await get('sandboxclaims', name);
        seen.push([health(o), readyNow(o)]);
        return health(o) === 'Healthy' ? o : undefined;
      },
      100,
    );
    // Every reading: Healthy exactly when Ready=True at the current generation.
    for (const [status, ready] of seen) expect([status, ready]).toEqual([ready ? 'Healthy' : status, ready]);
    expect(seen.some(([s]) => s === 'Healthy')).toBe(true);
    expect(seen.filter(([s, r]) => s === 'Healthy' && !r)).toEqual([]);
    const sandboxName = (claim.status as { sandbox?: { name?: string } }).sandbox!.name!;
    const sandbox = await get('sandboxes', sandboxName, CORE);
    expect([health(sandbox), readyNow(sandbox)]).toEqual(['Healthy', true]);
  } finally {
    await c.custom.deleteNamespacedCustomObject({ ...EXT, namespace: NS, plural: 'sandboxclaims', name });
  }
});

test('the warm pool scaled up by one: Progressing until the new member is Ready at the new generation', async () => {
  const before = await waitFor('pool Healthy', 30_000, async () => {
    const o = await get('sandboxwarmpools', POOL);
    return health(o) === 'Healthy' ? o : undefined;
  });
  const replicas = before.spec?.replicas ?? 1;
  expect((before.status?.readyReplicas ?? 0) >= replicas).toBe(true);
  const scale = (n: number) =>
    c.custom.patchNamespacedCustomObject(
      { ...EXT, namespace: NS, plural: 'sandboxwarmpools', name: POOL, body: { spec: { replicas: n } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    ) as Promise<Live>;
  const patched = await scale(replicas + 1);
  try {
    // The answer to the patch: a new generation whose status the controller has not written yet.
    expect([patched.metadata.generation! > before.metadata.generation!, health(patched)]).toEqual([
      true,
      'Progressing',
    ]);
    const seen: Array<[string, number, number | undefined, number]> = [];
    await waitFor(
      'pool Healthy at replicas+1',
      30_000,
      async () => {
        const o = await get('sandboxwarmpools', POOL);
        seen.push([health(o), o.status?.readyReplicas ?? 0, o.status?.observedGeneration, o.metadata.generation!]);
        return health(o) === 'Healthy' ? o : undefined;
      },
      100,
    );
    // Healthy only with every member Ready and the status written for the current generation.
    for (const [status, ready, observed, generation] of seen.filter(([s]) => s === 'Healthy'))
      expect({ status, ready, observed }).toEqual({ status, ready: replicas + 1, observed: generation });
  } finally {
    await scale(replicas);
  }
});
