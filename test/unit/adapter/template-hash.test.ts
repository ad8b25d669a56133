/**
 * Template version of a session's Sandbox (case recreate-adopts-stale-template): blueprint comparison with the
 * controller's semantics and where a blueprint hash can honestly come from. Objects are shaped as the v0.5.6 controller
 * wrote them on the test cluster (a pool member and the same Sandbox after adoption, read back with kubectl).
 */
import {
  blueprintDrift,
  expectedPodSpec,
  normalize,
  quantityValue,
  sameBlueprint,
} from '../../../src/adapter/kubernetes/blueprint.js';
import {
  boundTemplateHash,
  currentTemplateHash,
  listedHashes,
  MAX_LISTED_MEMBERS,
  nameHash,
  parseListedHashes,
  poolMembers,
  poolSelector,
  templateState,
  TEMPLATE_HASH_LABEL,
  type LabelledSandbox,
} from '../../../src/adapter/kubernetes/template-hash.js';

const IMG = 'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main';
const IMG2 = 'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:v2';
const ports = [
  { containerPort: 8080, name: 'rest', protocol: 'TCP' },
  { containerPort: 9090, name: 'grpc', protocol: 'TCP' },
];

/** The template as stored by the API server (CRD defaults applied). */
const template = (image = IMG, extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'py', generation: image === IMG ? 1 : 2 },
  spec: {
    envVarsInjectionPolicy: 'Disallowed',
    networkPolicyManagement: 'Unmanaged',
    volumeClaimTemplatesPolicy: 'Disallowed',
    podTemplate: { metadata: { labels: { app: 'smoke' } }, spec: { containers: [{ image, name: 'sandboxd', ports }] } },
    ...extra,
  },
});

/** A pool member as the controller writes it: typed round trip (`resources: {}`), secure default automount false. */
const member = (
  name: string,
  hash: string | undefined,
  image = IMG,
  meta: Record<string, unknown> = {},
): LabelledSandbox => ({
  metadata: {
    name,
    labels: { 'agents.x-k8s.io/warm-pool-sandbox': '91dd7983', ...(hash ? { [TEMPLATE_HASH_LABEL]: hash } : {}) },
    ownerReferences: [{ kind: 'SandboxWarmPool', name: 'pool', controller: true }],
    ...meta,
  },
  spec: {
    podTemplate: {
      spec: { automountServiceAccountToken: false, containers: [{ image, name: 'sandboxd', ports, resources: {} }] },
    },
  },
});

/** The same Sandbox after adoption: hash and pool labels removed, owner is the claim, spec unchanged. */
const adopted = (name: string, image = IMG): LabelledSandbox => ({
  metadata: {
    name,
    labels: { 'agents.x-k8s.io/launch-type': 'warm' },
    ownerReferences: [{ kind: 'SandboxClaim', name: 'c1', controller: true }],
  },
  spec: member(name, undefined, image).spec!,
});

test('nameHash is the controller FNV-1a-32: values read back from the v0.5.6 test cluster', () => {
  expect(nameHash('pool')).toBe('91dd7983'); // agents.x-k8s.io/warm-pool-sandbox of pool "pool"
  expect(nameHash('py')).toBe('584e6522'); // agents.x-k8s.io/sandbox-template-ref-hash of template "py"
  expect(nameHash('pool-nl752')).toBe('6eb776f6'); // Sandbox status.selector sandbox-name-hash
  expect(poolSelector('pool')).toBe('agents.x-k8s.io/warm-pool-sandbox=91dd7983');
});

describe('blueprint comparison (compareSandboxBlueprint@v0.5.6 semantics)', () => {
  test('a member the controller wrote equals the template it came from; a changed image is named', () => {
    expect(blueprintDrift(template(), member('pool-a', 'h1'))).toEqual([]);
    expect(blueprintDrift(template(IMG2), member('pool-a', 'h1'))).toEqual([
      `podTemplate.spec.containers[0].image: ${IMG} ≠ template ${IMG2}`,
    ]);
  });

  test('secure defaults: Managed without networkPolicy expects public DNS; a custom policy or Unmanaged does not', () => {
    const managed = template(IMG, { networkPolicyManagement: 'Managed' });
    expect(expectedPodSpec(managed)).toMatchObject({
      automountServiceAccountToken: false,
      dnsPolicy: 'None',
      dnsConfig: { nameservers: ['8.8.8.8', '1.1.1.1'] },
    });
    const withDns = member('pool-a', 'h1');
    Object.assign(withDns.spec!.podTemplate!.spec!, {
      dnsPolicy: 'None',
      dnsConfig: { nameservers: ['8.8.8.8', '1.1.1.1'] },
    });
    expect(blueprintDrift(managed, withDns)).toEqual([]);
    expect(blueprintDrift(managed, member('pool-b', 'h1'))).toEqual([
      'podTemplate.spec.dnsConfig: unset ≠ template {"nameservers":["8.8.8.8","1.1.1.1"]}',
      'podTemplate.spec.dnsPolicy: unset ≠ template None',
    ]);
    expect(
      expectedPodSpec(template(IMG, { networkPolicyManagement: 'Managed', networkPolicy: { egress: [] } })),
    ).not.toHaveProperty('dnsPolicy');
    expect(
      expectedPodSpec(
        template(IMG, { networkPolicyManagement: 'Managed', podTemplate: { spec: { dnsPolicy: 'ClusterFirst' } } }),
      ),
    ).toMatchObject({ dnsPolicy: 'ClusterFirst' });
  });

  test('Go zero values count as unset; quantities compare by value', () => {
    expect(normalize({ a: { b: {} }, c: [], d: false, e: 0, f: '', g: null, h: 'x' })).toEqual({ h: 'x' });
    expect(quantityValue('1Gi')).toBe(quantityValue('1024Mi'));
    expect(quantityValue('500m')).toBe(0.5);
    expect(quantityValue('1e3')).toBe(1000);
    expect(quantityValue('lots')).toBeUndefined();
    const t = template(IMG, {
      podTemplate: {
        spec: {
          containers: [
            {
              image: IMG,
              name: 'sandboxd',
              ports,
              stdin: false,
              resources: { limits: { memory: '1024Mi', cpu: '0.5' } },
            },
          ],
        },
      },
    });
    const m = member('pool-a', 'h1');
    (m.spec!.podTemplate!.spec!.containers as Array<Record<string, unknown>>)[0]!.resources = {
      limits: { memory: '1Gi', cpu: '500m' },
    };
    expect(blueprintDrift(t, m)).toEqual([]);
    (m.spec!.podTemplate!.spec!.containers as Array<Record<string, unknown>>)[0]!.resources = {
      limits: { memory: '2Gi', cpu: '500m' },
    };
    expect(blueprintDrift(t, m)).toEqual([
      `podTemplate.spec.containers[0].resources.limits.memory: ${2 ** 31} ≠ template ${2 ** 30}`,
    ]);
  });

  test('volume claim templates compare by index on name and spec, not metadata; service compares whole', () => {
    const vct = (name: string, storage: string, labels = {}) => ({
      metadata: { name, labels },
      spec: { resources: { requests: { storage } } },
    });
    const t = template(IMG, { volumeClaimTemplates: [vct('data', '1Gi', { a: 'b' })], service: true });
    const m = member('pool-a', 'h1');
    Object.assign(m.spec!, { volumeClaimTemplates: [vct('data', '1024Mi')], service: true });
    expect(blueprintDrift(t, m)).toEqual([]);
    Object.assign(m.spec!, { volumeClaimTemplates: [vct('other', '1Gi')], service: false });
    expect(blueprintDrift(t, m)).toEqual([
      'volumeClaimTemplates[0].name: other ≠ template data',
      'service: unset ≠ template true',
    ]);
  });

  test('sameBlueprint ignores labels and owners (adoption changes those, not the spec)', () => {
    expect(sameBlueprint(adopted('pool-a'), member('pool-b', 'h1'))).toBe(true);
    expect(sameBlueprint(adopted('pool-a'), member('pool-b', 'h2', IMG2))).toBe(false);
  });
});

describe('where the bound Sandbox hash comes from', () => {
  test('its own label first, then its label as listed before the claim, then a hash the caller kept', () => {
    expect(boundTemplateHash(member('pool-a', 'h1'), [], { listed: { h2: ['pool-a'] } })).toEqual({
      hash: 'h1',
      reason: 'HashFromSandboxLabel',
      how: `label ${TEMPLATE_HASH_LABEL} on Sandbox pool-a`,
    });
    const listed = boundTemplateHash(adopted('pool-a'), [member('pool-b', 'h2')], {
      listed: { h2: ['pool-b'], h1: ['pool-c', 'pool-a'] },
      recorded: 'h9',
    });
    expect(listed).toEqual({
      hash: 'h1',
      reason: 'HashFromListedMember',
      how: `label ${TEMPLATE_HASH_LABEL} of pool member pool-a, listed before the claim was created`,
    });
    expect(
      boundTemplateHash(adopted('pool-a'), [member('pool-b', 'h2')], { listed: { h2: ['pool-b'] }, recorded: 'h1' }),
    ).toEqual({ hash: 'h1', reason: 'HashRecorded', how: 'kept for the session after an earlier observation' });
  });

  test('the listing stored on a claim: grouped by hash, unlabelled members left out, capped, parsed back strictly', () => {
    const l = listedHashes([
      member('pool-a', 'h1'),
      member('pool-b', 'h2'),
      member('pool-c', 'h1'),
      member('pool-d', undefined),
    ]);
    expect(l).toEqual({ h1: ['pool-a', 'pool-c'], h2: ['pool-b'] });
    expect(parseListedHashes(JSON.stringify(l))).toEqual(l);
    const many = Array.from({ length: MAX_LISTED_MEMBERS + 5 }, (_, i) => member(`pool-${i}`, 'h1'));
    expect(listedHashes(many).h1).toHaveLength(MAX_LISTED_MEMBERS);
    expect(parseListedHashes(undefined)).toBeUndefined();
    expect(parseListedHashes('{"h1": "pool-a"}')).toBeUndefined();
    expect(parseListedHashes('[1]')).toBeUndefined();
    expect(parseListedHashes('{not json')).toBeUndefined();
  });

  test('otherwise the one hash of live members with the same blueprint; ambiguous or absent stays unknown', () => {
    expect(boundTemplateHash(adopted('pool-a'), [member('pool-b', 'h1'), member('pool-c', 'h2', IMG2)])).toEqual({
      hash: 'h1',
      reason: 'HashFromSameBlueprint',
      how: 'adoption removed the label; pool member pool-b with the same blueprint carries it',
    });
    const two = boundTemplateHash(adopted('pool-a'), [member('pool-b', 'h1'), member('pool-c', 'h3')]);
    expect(two.hash).toBeUndefined();
    expect(two.reason).toBe('HashAmbiguous');
    expect(two.how).toBe(
      'adoption removed the label and pool members of several hashes share its blueprint (h1 (pool-b), h3 (pool-c)): a metadata-only template edit; not told apart',
    );
    const none = boundTemplateHash(adopted('pool-a'), [member('pool-c', 'h2', IMG2)]);
    expect(none).toEqual({
      reason: 'HashUnknown',
      how: "adoption removed the label (extensions/controllers/sandboxclaim_controller.go@v0.5.6) and no live pool member has Sandbox pool-a's blueprint: unknown",
    });
  });

  test('current hash: the members at the template blueprint; none or several is unknown with the reason', () => {
    expect(
      currentTemplateHash(template(IMG2), [
        member('pool-b', 'h1'),
        member('pool-c', 'h2', IMG2),
        member('pool-d', 'h2', IMG2),
      ]),
    ).toEqual({ hash: 'h2', how: "carried by 2 pool members at template py's current blueprint (pool-c, pool-d)" });
    expect(currentTemplateHash(template(IMG2), [member('pool-b', 'h1')])).toEqual({
      how: "none of the 1 live pool member(s) is at template py's current blueprint yet (rollout pending, pool at 0, or OnReplenish keeping old members)",
    });
    expect(currentTemplateHash(template(), [member('pool-b', 'h1'), member('pool-c', 'h3')]).hash).toBeUndefined();
    expect(currentTemplateHash(template(), [member('pool-b', undefined)]).how).toMatch(
      /carry no agents\.x-k8s\.io\/sandbox-template-hash label/,
    );
  });

  test('poolMembers keeps only live Sandboxes controller-owned by the pool', () => {
    const gone = member('pool-x', 'h1', IMG, { deletionTimestamp: '2026-11-29T10:00:00Z' });
    const other = {
      ...member('pool-y', 'h1'),
      metadata: {
        ...member('pool-y', 'h1').metadata,
        ownerReferences: [{ kind: 'SandboxWarmPool', name: 'other', controller: true }],
      },
    };
    expect(
      poolMembers([member('pool-a', 'h1'), gone, other, adopted('pool-b')], 'pool').map((m) => m.metadata?.name),
    ).toEqual(['pool-a']);
  });
});

describe('templateState', () => {
  test('equal known hashes are current without comparing blueprints (isSandboxStale)', () => {
    const s = templateState(adopted('pool-a'), template(), [member('pool-b', 'h1')], {});
    expect(s).toEqual({
      templateHash: 'h1',
      currentTemplateHash: 'h1',
      staleTemplate: false,
      templateReason: 'TemplateCurrent',
      templateMessage:
        "Sandbox pool-a has hash h1 (adoption removed the label; pool member pool-b with the same blueprint carries it); current hash h1 carried by 1 pool member at template py's current blueprint (pool-b): hashes equal, current",
    });
  });

  test('a listed old hash, fresh members at the new hash: stale with the image difference', () => {
    const s = templateState(adopted('pool-a'), template(IMG2), [member('pool-c', 'h2', IMG2)], {
      listed: { h1: ['pool-a', 'pool-b'] },
    });
    expect(s).toMatchObject({
      templateHash: 'h1',
      currentTemplateHash: 'h2',
      staleTemplate: true,
      templateReason: 'TemplateStale',
    });
    // prose: the message names the field that differs, which the code does not
    expect(s.templateMessage).toMatch(
      new RegExp(
        `stale against template py generation 2: podTemplate\\.spec\\.containers\\[0\\]\\.image: ${IMG.replace(/[.]/g, '\\.')} ≠ template`,
      ),
    );
  });

  test('template unreadable: stale stays unknown, with the reason', () => {
    const s = templateState(
      adopted('pool-a'),
      undefined,
      [],
      { recorded: 'h1' },
      'SandboxTemplate ns/py not read (forbidden)',
    );
    expect(s).toEqual({
      templateHash: 'h1',
      templateReason: 'TemplateUnread',
      templateMessage:
        'Sandbox pool-a has hash h1 (kept for the session after an earlier observation); stale unknown: SandboxTemplate ns/py not read (forbidden)',
    });
  });
});
