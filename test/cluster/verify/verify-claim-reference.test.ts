/**
 * Case claim-before-template-ordering on the real v0.5.6 controller.
 * 1. The verifier never creates its probe claim on a pool or template that is not on the cluster (the adapter's
 *    createFromTemplate reads both first), so it reports that at once instead of waiting.
 * 2. A claim applied before its pool and template: the real controller writes Ready=False/WarmPoolNotFound, which the
 *    adapter judges Pending (not Failed) with the age from the real lastTransitionTime; the verifier's stuck-claim
 *    evidence is built from that real condition. Then pool and template are applied and the time until the claim leaves
 *    that state is measured (kubernetes-sigs/agent-sandbox#1310: up to about a minute on v0.5.6).
 */
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { claimPhase, type ClaimObject } from '../../../src/adapter/kubernetes/phase.js';
import { referencedKind, stuckClaimMessage, stuckClaimReason } from '../../../src/verify/probes/claim-reference.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { EXT, plan, sandboxdTemplate, templatePlan } from './verifier-env.js';

let c: Cluster;
let ns: string;
const GRACE_MS = 5_000;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfyref');
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'py', 'sandboxd'),
  });
  // a pool whose template `absent` is never created
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'absent-pool', namespace: ns },
      spec: { replicas: 1, sandboxTemplateRef: { name: 'absent' } },
    },
  });
}, 60_000);

async function verifyWith(template: string, pool: string): Promise<Awaited<ReturnType<typeof runVerify>>> {
  const p = plan(c, [templatePlan(ns, template)], {
    warmPools: [{ namespace: ns, name: pool, template, replicas: 1 }],
    requirements: requirementsFor(['runtime-exec', `warm-pool/${ns}/${pool}`]),
    claimReferenceGraceMs: GRACE_MS,
  });
  return runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    controllerMode: 'external',
    progress: () => undefined,
  });
}

test('declared pool or template not on the cluster: the verifier creates no claim and says so at once, nothing verified', async () => {
  // The adapter's createFromTemplate reads the pool and its template before it creates a claim, so the probe claim
  // itself can only hit TemplateNotFound/WarmPoolNotFound through a race with the controller's cache (#1310).
  for (const [template, pool, missing] of [
    ['py', 'py-pool', `SandboxWarmPool ${ns}/py-pool`],
    ['absent', 'absent-pool', `SandboxTemplate ${ns}/absent`],
  ] as const) {
    const { report, cluster } = await verifyWith(template, pool);
    const exec = report.capabilities.find((r) => r.name === 'runtime-exec')!;
    const refused = exec.evidence.find((e) => e.step === 'verified' && e.verdict === 'unknown')!;
    expect(refused.reason).toBe('ProbeCreateRefused');
    // The values the reader acts on, not wording: the pool the claim was for and the object that is missing.
    for (const value of [pool, missing]) expect(refused.message).toContain(value);
    expect(exec.state).not.toBe('verified');
    expect(report.capabilities.find((r) => r.name === `warm-pool/${ns}/${pool}`)!.state).not.toBe('verified');
    // "at once": no watch-based wait at all, so the grace period for a missing reference was never waited out
    expect(cluster.stats().waits).toBe(0);
    expect(report.leftovers).toEqual([]);
  }
}, 60_000);

test('a claim applied before its pool and template: the real controller reports WarmPoolNotFound, judged Pending with its age; measured time to bind once both exist', async () => {
  const claimBody = {
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxClaim',
    metadata: { name: 'early', namespace: ns },
    spec: { warmPoolRef: { name: 'late-pool' } },
  };
  await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxclaims', body: claimBody });
  const get = async () =>
    (await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxclaims',
      name: 'early',
    })) as ClaimObject;
  const stuck = await waitFor('claim early at WarmPoolNotFound', 30_000, async () => {
    const claim = await get();
    const p = claimPhase(claim, undefined, 'v0.5');
    return p.missingReference ? { claim, p } : undefined;
  });
  expect(stuck.p.phase).toBe('Pending');
  expect(stuck.p.missingReference!.reason).toBe('WarmPoolNotFound');
  const ready = stuck.claim.status!.conditions!.find((x) => x.type === 'Ready')!;
  expect(typeof ready.lastTransitionTime).toBe('string');
  // judged 75 s after the real lastTransitionTime: the age is read from the real condition
  const later = claimPhase(stuck.claim, undefined, 'v0.5', new Date(Date.parse(ready.lastTransitionTime!) + 75_000));
  expect(later.missingReference).toMatchObject({ reason: 'WarmPoolNotFound', ageMs: 75_000 });
  const target = {
    kind: referencedKind(later.missingReference!.reason),
    namespace: ns,
    name: 'late-pool',
    exists: true,
  } as const;
  expect(stuckClaimReason(target)).toBe('ClaimNotReReconciled');
  const msg = stuckClaimMessage(ns, 'early', later.missingReference!, target);
  for (const value of [`${ns}/early`, 'WarmPoolNotFound for 75s', `SandboxWarmPool ${ns}/late-pool`])
    expect(msg).toContain(value);

  // now the template and the pool; measure how long the claim takes to bind (#1310: up to about a minute on v0.5.6)
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'late', 'sandboxd'),
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'late-pool', namespace: ns },
      spec: { replicas: 1, sandboxTemplateRef: { name: 'late' } },
    },
  });
  const applied = Date.now();
  const seen: string[] = [];
  await waitFor(
    'claim early leaves WarmPoolNotFound',
    150_000,
    async () => {
      const p = claimPhase(await get(), undefined, 'v0.5');
      if (seen.at(-1) !== p.message.replace(/ for \d+s/, '')) seen.push(p.message.replace(/ for \d+s/, ''));
      return p.missingReference ? undefined : true;
    },
    500,
  );
  console.log(
    `case claim-before-template-ordering: claim left its missing-reference state ${Date.now() - applied} ms after template+pool were applied; states seen: ${seen.join(' | ')}`,
  );
}, 200_000);
