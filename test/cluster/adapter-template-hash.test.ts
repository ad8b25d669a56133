/**
 * Case recreate-adopts-stale-template on the adapter side, against the real v0.5.6 controller of the test cluster: the
 * template hash a session got. One template, two pools of one replica (Recreate and the default OnReplenish). Every
 * hash asserted is the `agents.x-k8s.io/sandbox-template-hash` label read back from the API; what happens after the
 * template's image changes is what this controller does (Recreate replaces its unclaimed member at once; OnReplenish
 * keeps its old member and hands it to the next claim, kubernetes-sigs/agent-sandbox#311).
 */
import * as k8s from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { writeKubeconfig } from './adapter/kube-env.js';
import { KubeClient } from '../../src/adapter/kubernetes/client.js';
import { POOL_HASHES_ANNOTATION } from '../../src/adapter/kubernetes/resources.js';
import { KubeSessions } from '../../src/adapter/kubernetes/sessions.js';
import { poolSelector, TEMPLATE_HASH_LABEL } from '../../src/adapter/kubernetes/template-hash.js';
import type { Observation, SessionRef } from '../../src/adapter/types.js';
import { connect, freshNamespace, readyCondition, sandboxdPodTemplate, waitFor, type Cluster } from './helpers.js';

const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };
const CORE = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes' };
const IMAGE_2 = 'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:case-04-v2';

interface Sb {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }>;
  };
  spec: { podTemplate: { spec: { containers: Array<{ image: string }> } } };
  status?: unknown;
}

let c: Cluster;
let ns: string;
let sessions: KubeSessions;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'adapter-tplhash');
  sessions = new KubeSessions(KubeClient.connect({ kubeconfig: c.info.kubeconfig }), {
    labels: { 'agentplane.dev/test': 'adapter-template-hash' },
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      metadata: { name: 'sbx' },
      spec: { podTemplate: sandboxdPodTemplate(), networkPolicyManagement: 'Unmanaged' },
    },
  });
  for (const [name, type] of [
    ['recreate', 'Recreate'],
    ['replenish', 'OnReplenish'],
  ] as const) {
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxwarmpools',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxWarmPool',
        metadata: { name },
        spec: { replicas: 1, sandboxTemplateRef: { name: 'sbx' }, updateStrategy: { type } },
      },
    });
  }
}, 30_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

async function sandbox(name: string): Promise<Sb> {
  return (await c.custom.getNamespacedCustomObject({ ...CORE, namespace: ns, name })) as Sb;
}

/** The pool's one live Ready member running `image`, read back from the API. */
function readyMember(pool: string, image: string): Promise<Sb> {
  return waitFor(
    `a Ready member of pool ${pool} at ${image}`,
    60_000,
    async () => {
      const list = (await c.custom.listNamespacedCustomObject({
        ...CORE,
        namespace: ns,
        labelSelector: poolSelector(pool),
      })) as { items: Sb[] };
      return list.items.find(
        (s) =>
          !s.metadata.deletionTimestamp &&
          s.spec.podTemplate.spec.containers[0]!.image === image &&
          readyCondition(s)?.status === 'True',
      );
    },
    200,
  );
}

function observeReady(ref: SessionRef): Promise<Observation> {
  return waitFor(
    `session ${ref.name} Ready`,
    60_000,
    async () => {
      const o = await sessions.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    200,
  );
}

async function create(pool: string, generation: string): Promise<SessionRef> {
  const r = await sessions.createFromTemplate(
    { namespace: ns, template: 'sbx', warmPool: pool },
    generation,
    `op-${randomUUID()}`,
  );
  if (r.kind !== 'ok') throw new Error(`createFromTemplate: ${JSON.stringify(r)}`);
  return r.value;
}

test('hash of the adopted member; after an image change: Recreate gives the next claim the new hash, the earlier session is stale; OnReplenish hands out the old one', async () => {
  const image1 = (sandboxdPodTemplate() as { spec: { containers: Array<{ image: string }> } }).spec.containers[0]!
    .image;
  const first = await readyMember('recreate', image1);
  const h1 = first.metadata.labels![TEMPLATE_HASH_LABEL]!;
  expect(h1).toMatch(/^[0-9a-f]{8}$/);
  expect((await readyMember('replenish', image1)).metadata.labels![TEMPLATE_HASH_LABEL]).toBe(h1); // one blueprint, one hash

  // 1. createFromTemplate: generation 1; the pool's labels listed before create are stored on the claim; the hash only if
  //    the one re-read already saw the claim bound (then: the listed label of the member it got).
  const ref = await create('recreate', '1');
  expect(ref.template).toMatchObject({ name: 'sbx', generation: 1 });
  if (ref.template!.hash !== undefined)
    expect(ref.template).toMatchObject({ hash: h1, reason: 'HashFromListedMember' });
  else {
    expect(ref.template!.reason).toBe('ClaimUnbound');
    // prose: the message lists the pool members' hashes recorded before create, which the code does not
    expect(ref.template!.message).toBe(
      `SandboxClaim ${ns}/${ref.name} was not bound yet when read (pool members' hashes before create: ${h1} on 1): observe() reports the hash of the one it gets`,
    );
  }
  const claim = (await c.custom.getNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxclaims',
    name: ref.name,
  })) as { metadata: { annotations: Record<string, string> } };
  expect(JSON.parse(claim.metadata.annotations[POOL_HASHES_ANNOTATION]!)).toEqual({ [h1]: [first.metadata.name] });

  // 2. observe: bound to the member read above; the controller removed its hash label at adoption; the refill carries h1.
  const obs = await observeReady(ref);
  expect(obs.sandboxName).toBe(first.metadata.name);
  expect((await sandbox(first.metadata.name)).metadata.labels?.[TEMPLATE_HASH_LABEL]).toBeUndefined();
  const refill = await readyMember('recreate', image1);
  expect(refill.metadata.name).not.toBe(first.metadata.name);
  expect(refill.metadata.labels![TEMPLATE_HASH_LABEL]).toBe(h1);
  expect(obs).toMatchObject({ templateHash: h1, staleTemplate: false });
  const obsNow = await sessions.observe(ref); // the refill exists now, so the current hash is told
  if (obsNow.kind !== 'ok') throw new Error(JSON.stringify(obsNow));
  expect(obsNow.value).toMatchObject({
    templateHash: h1,
    currentTemplateHash: h1,
    staleTemplate: false,
    templateReason: 'TemplateCurrent',
  });
  // prose: the message says where each hash was read (the claim's listing, the refill), which the code does not
  expect(obsNow.value.templateMessage).toMatch(
    new RegExp(
      `^Sandbox ${first.metadata.name} has hash ${h1} \\(label ${TEMPLATE_HASH_LABEL} of pool member ${first.metadata.name}, listed before the claim was created\\); current hash ${h1} carried by 1 pool member .*: hashes equal, current$`,
    ),
  );

  // 3. Blueprint change: the template's image.
  await c.custom.patchNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    name: 'sbx',
    body: [{ op: 'replace', path: '/spec/podTemplate/spec/containers/0/image', value: IMAGE_2 }],
  });
  const fresh = await readyMember('recreate', IMAGE_2);
  const h2 = fresh.metadata.labels![TEMPLATE_HASH_LABEL]!;
  expect(h2).toMatch(/^[0-9a-f]{8}$/);
  expect(h2).not.toBe(h1);
  // Recreate deleted its unclaimed old member; OnReplenish kept its own.
  await waitFor('recreate pool without h1 members', 30_000, async () => {
    const list = (await c.custom.listNamespacedCustomObject({
      ...CORE,
      namespace: ns,
      labelSelector: poolSelector('recreate'),
    })) as { items: Sb[] };
    return list.items.some((s) => s.metadata.labels?.[TEMPLATE_HASH_LABEL] === h1) ? undefined : true;
  });
  const oldReplenish = await readyMember('replenish', image1);
  expect(oldReplenish.metadata.labels![TEMPLATE_HASH_LABEL]).toBe(h1);

  // 4. The earlier session is stale: no live member shares its blueprint any more; its hash comes from the claim's listing.
  const later = await sessions.observe(ref);
  expect(later.kind).toBe('ok');
  if (later.kind !== 'ok') return;
  expect(later.value).toMatchObject({
    templateHash: h1,
    currentTemplateHash: h2,
    staleTemplate: true,
    templateReason: 'TemplateStale',
  });
  // prose: the message names the field that differs, which the code does not
  expect(later.value.templateMessage).toContain(
    `stale against template sbx generation 2: podTemplate.spec.containers[0].image: ${image1} ≠ template ${IMAGE_2}`,
  );

  // 5. A new session on the Recreate pool gets the new blueprint.
  const ref2 = await create('recreate', '2');
  expect(ref2.template).toMatchObject({ name: 'sbx', generation: 2 });
  const obs2 = await observeReady(ref2);
  expect(obs2.sandboxName).toBe(fresh.metadata.name);
  expect(obs2).toMatchObject({ templateHash: h2, staleTemplate: false });
  expect((await readyMember('recreate', IMAGE_2)).metadata.labels![TEMPLATE_HASH_LABEL]).toBe(h2);
  const obs2b = await sessions.observe(ref2);
  expect(obs2b.kind === 'ok' && obs2b.value).toMatchObject({
    templateHash: h2,
    currentTemplateHash: h2,
    staleTemplate: false,
  });

  // 6. OnReplenish: a claim made at generation 2 adopts the old member (#311): stale, with hash h1 from the listing.
  const ref3 = await create('replenish', '2');
  expect(ref3.template).toMatchObject({ name: 'sbx', generation: 2 });
  const obs3 = await observeReady(ref3);
  expect(obs3.sandboxName).toBe(oldReplenish.metadata.name);
  expect(obs3).toMatchObject({ templateHash: h1, staleTemplate: true, templateReason: 'TemplateStale' });
  // prose: the message names the field that differs, which the code does not
  expect(obs3.templateMessage).toContain(`podTemplate.spec.containers[0].image: ${image1} ≠ template ${IMAGE_2}`);
  const refill3 = await readyMember('replenish', IMAGE_2);
  expect(refill3.metadata.labels![TEMPLATE_HASH_LABEL]).toBe(h2);
  const obs3b = await sessions.observe(ref3);
  expect(obs3b.kind === 'ok' && obs3b.value).toMatchObject({
    templateHash: h1,
    currentTemplateHash: h2,
    staleTemplate: true,
  });
}, 180_000);

test('a Managed template with quantities and Go zero values: members the controller wrote (secure defaults, canonical quantities) count as current', async () => {
  const tpl = sandboxdPodTemplate() as { spec: { containers: Array<Record<string, unknown>> } };
  tpl.spec.containers[0] = {
    ...tpl.spec.containers[0],
    stdin: false,
    resources: { limits: { memory: '1024Mi', cpu: '0.5' } },
  };
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      metadata: { name: 'managed' },
      spec: { podTemplate: tpl },
    },
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'managed' },
      spec: { replicas: 1, sandboxTemplateRef: { name: 'managed' } },
    },
  });
  const image = tpl.spec.containers[0]!.image as string;
  const m = await readyMember('managed', image);
  const h = m.metadata.labels![TEMPLATE_HASH_LABEL]!;
  // What the controller wrote differs from the template as stored: secure DNS defaults, canonical quantities.
  const spec = m.spec.podTemplate.spec as unknown as {
    dnsPolicy?: string;
    containers: Array<{ resources?: { limits?: Record<string, string> } }>;
  };
  expect(spec.dnsPolicy).toBe('None');
  expect(spec.containers[0]!.resources?.limits).toEqual({ memory: '1Gi', cpu: '500m' });
  const r = await sessions.createFromTemplate(
    { namespace: ns, template: 'managed', warmPool: 'managed' },
    '',
    `op-${randomUUID()}`,
  );
  if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
  const obs = await observeReady(r.value);
  expect(obs.sandboxName).toBe(m.metadata.name);
  expect(obs).toMatchObject({ templateHash: h, staleTemplate: false });
  // The refill carries h too and matches the template's blueprint, so the current hash is told.
  const refill = await readyMember('managed', image);
  expect(refill.metadata.labels![TEMPLATE_HASH_LABEL]).toBe(h);
  const again = await sessions.observe(r.value);
  expect(again.kind === 'ok' && again.value).toMatchObject({
    templateHash: h,
    currentTemplateHash: h,
    staleTemplate: false,
  });
}, 120_000);

test('without the right to list sandboxes the create and observe still succeed: hash unknown with the 403, staleness still told', async () => {
  // Uses the 'managed' template and pool of the test above; a Role with the adapter's rights (README) minus list sandboxes.
  await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'no-list' } } });
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace: ns,
    body: {
      metadata: { name: 'no-list' },
      rules: [
        { apiGroups: ['extensions.agents.x-k8s.io'], resources: ['sandboxclaims'], verbs: ['get', 'create', 'delete'] },
        {
          apiGroups: ['extensions.agents.x-k8s.io'],
          resources: ['sandboxwarmpools', 'sandboxtemplates'],
          verbs: ['get'],
        },
        { apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'patch', 'delete'] },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: ns,
    body: {
      metadata: { name: 'no-list' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'no-list' },
      subjects: [{ kind: 'ServiceAccount', name: 'no-list', namespace: ns }],
    },
  });
  const tr = await c.core.createNamespacedServiceAccountToken({
    namespace: ns,
    name: 'no-list',
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const limited = new KubeSessions(
    KubeClient.connect({ kubeconfig: writeKubeconfig(c.info, 'no-list-user', { token: tr.status!.token }) }),
  );
  const r = await waitFor(
    'the Role to take effect',
    10_000,
    async () => {
      const x = await limited.createFromTemplate(
        { namespace: ns, template: 'managed', warmPool: 'managed' },
        '',
        `op-${randomUUID()}`,
      );
      return x.kind === 'ok' ? x : undefined;
    },
    200,
  );
  expect(r.value.template).toMatchObject({ name: 'managed', generation: 1 });
  expect(r.value.template!.hash).toBeUndefined();
  // The one re-read after create may or may not see the claim bound already (the controller binds within ~50 ms), so
  // the reason varies (ClaimUnbound or HashUnknown); the hash is unknown either way and the failed listing is always named.
  expect(['ClaimUnbound', 'HashUnknown']).toContain(r.value.template!.reason);
  // prose: the message names the failed listing and its RBAC refusal, which the code does not
  expect(r.value.template!.message).toMatch(
    /(pool members' hashes before create: not recorded\)|no live pool member has Sandbox \S+ blueprint: unknown).*; pool members were not listed before create \(.*may not list sandboxes\.agents\.x-k8s\.io/,
  );
  const obs = await waitFor(
    'limited session Ready',
    60_000,
    async () => {
      const o = await limited.observe(r.value);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    200,
  );
  expect(obs.templateHash).toBeUndefined();
  expect(obs.currentTemplateHash).toBeUndefined();
  expect(obs.staleTemplate).toBe(false);
  expect(obs.templateReason).toBe('TemplateCurrent');
  // prose: the message names the unknown hashes and the refused listing, which the code does not
  expect(obs.templateMessage).toMatch(
    /no live pool member has .*: unknown; current hash unknown: none of the 0 live pool member\(s\).*blueprint equals template managed generation 1: current; pool members not listed \(.*may not list sandboxes/,
  );
}, 120_000);
