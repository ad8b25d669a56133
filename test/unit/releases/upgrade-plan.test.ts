/**
 * Schema diff and upgrade classification over the three pinned releases (mirror, sha256-verified): the changes between
 * `k8s/crds/*.yaml@{v0.4.6,v0.5.0,v0.5.6}` appear field by field, and each jump gets the verdict its storage story
 * calls for.
 */
import {
  BLOCKING_DEFECTS,
  SUPPORTED_RELEASES,
  compareTags,
  convertedPoolName,
  crdObject,
  diffCrdSchemas,
  loadRelease,
  planUpgrade,
  type LiveUpgradeState,
  type LoadedRelease,
  type ReleaseTag,
} from '../../../src/releases/index.js';

let r046: LoadedRelease;
let r103: LoadedRelease;
let r050: LoadedRelease;
let r056: LoadedRelease;
beforeAll(async () => {
  [r046, r050, r056, r103] = await Promise.all([
    loadRelease('v0.4.6'),
    loadRelease('v0.5.0'),
    loadRelease('v0.5.6'),
    loadRelease('v1.0.3'),
  ]);
});

describe('diffCrdSchemas between pinned releases', () => {
  it('v0.5.0 -> v0.5.6 SandboxWarmPool: replicas gains default 1 and is no longer required; observedGeneration and Desired column added', () => {
    const summaries = diffCrdSchemas(crdObject(r050, 'SandboxWarmPool'), crdObject(r056, 'SandboxWarmPool')).map(
      (c) => c.summary,
    );
    expect(summaries).toEqual(
      expect.arrayContaining([
        'SandboxWarmPool v1beta1 spec.replicas: default none -> 1',
        'SandboxWarmPool v1beta1 spec.replicas: no longer required',
        'SandboxWarmPool v1beta1 status.observedGeneration added (integer/int64)',
        'SandboxWarmPool v1beta1: printer column Desired (.spec.replicas) added',
      ]),
    );
  });

  it('v0.4.6 -> v0.5.0 SandboxClaim: v1beta1 added as storage, sandboxTemplateRef renamed to warmPoolRef across the storage move', () => {
    const changes = diffCrdSchemas(crdObject(r046, 'SandboxClaim'), crdObject(r050, 'SandboxClaim'));
    expect(changes.map((c) => c.change)).toEqual(
      expect.arrayContaining([
        'conversion-changed',
        'version-added',
        'storage-changed',
        'deprecated-changed',
        'field-renamed',
      ]),
    );
    expect(changes.find((c) => c.change === 'field-renamed')).toMatchObject({
      version: 'v1alpha1 -> v1beta1',
      before: 'spec.sandboxTemplateRef',
      after: 'spec.warmPoolRef',
    });
  });

  it('v0.5.0 -> v0.5.6 Sandbox: workloadRef removed, schedulingGroup added, the volumeClaimTemplates CEL rule added', () => {
    const changes = diffCrdSchemas(crdObject(r050, 'Sandbox'), crdObject(r056, 'Sandbox')).filter(
      (c) => c.version === 'v1beta1',
    );
    expect(changes.filter((c) => c.path.startsWith('spec')).map((c) => `${c.change} ${c.path}`)).toEqual([
      'field-removed spec.podTemplate.spec.workloadRef',
      'field-added spec.podTemplate.spec.schedulingGroup',
      'validation-changed spec',
    ]);
  });

  it('the same CRD gives no changes', () => {
    expect(diffCrdSchemas(crdObject(r056, 'Sandbox'), crdObject(r056, 'Sandbox'))).toEqual([]);
  });
});

describe('planUpgrade', () => {
  it('v0.5.0 -> v0.5.6 without a cluster is unknown, never safe (only assumed safe); known defects of v0.5.6 are listed', () => {
    const plan = planUpgrade(r050, r056);
    expect(plan.verdict).toBe('unknown');
    expect(plan.assumedVerdict).toBe('safe');
    expect(plan.direction).toBe('upgrade');
    expect(plan.unknowns).toHaveLength(1);
    expect(plan.unknowns[0]).toMatch(/^status\.storedVersions /);
    expect(plan.path).toEqual([
      'read the live state first (plan-upgrade --kubeconfig FILE): the verdict depends on the live state listed as not read (`unknowns`)',
    ]);
    expect(plan.storedVersionsSource).toMatch(/^assumed/);
    expect(plan.findings.filter((f) => f.topic === 'defect').map((f) => f.source)).toContain(
      'cmd/agent-sandbox-controller/tls.go@v0.5.6',
    );
    const replicasDefault = plan.findings.find(
      (f) => f.subject?.change === 'default-changed' && f.subject.path === 'spec.replicas',
    );
    expect([replicasDefault?.subject?.kind, replicasDefault?.subject?.after]).toEqual(['SandboxWarmPool', 1]);
    expect(replicasDefault?.operations).toEqual(['createFromTemplate', 'capabilities']);
    expect(
      plan.findings.find((f) => f.reason === 'ConditionAdded' && f.subject?.condition === 'Sandbox/PodScheduled')
        ?.operations,
    ).toEqual(['observe']);
  });

  it('v0.4.6 -> v0.5.6 offline is unknown, assumed needs-migration: storage moves v1alpha1 -> v1beta1, conversion renames fields', () => {
    const plan = planUpgrade(r046, r056);
    expect(plan.verdict).toBe('unknown');
    expect(plan.assumedVerdict).toBe('needs-migration');
    expect(plan.unknowns.map((u) => u.split(' (')[0])).toEqual([
      'status.storedVersions of the Agent Sandbox CRDs',
      'v1alpha1 claims and warm pools',
    ]);
    expect(plan.findings.filter((f) => f.topic === 'storage').map((f) => [f.reason, f.subject])).toContainEqual([
      'StorageVersionChanged',
      { kind: 'SandboxClaim', before: 'v1alpha1', after: 'v1beta1' },
    ]);
    expect(plan.path).toEqual([
      'read the live state first (plan-upgrade --kubeconfig FILE): the verdict depends on the live state listed as not read (`unknowns`)',
      'from v0.4.x upstream advises running migrate.sh --phase=bootstrap and going straight to >= v0.5.2',
      'update manifests and clients that use the renamed, removed or retyped fields listed below',
      'install v0.5.6',
      'migrate storage: rewrite every Sandbox, SandboxClaim, SandboxTemplate, SandboxWarmPool object (a no-op update) so it is stored as v1beta1',
      'prune status.storedVersions of the Sandbox, SandboxClaim, SandboxTemplate, SandboxWarmPool CRD(s) to [v1beta1]',
    ]);
  });

  it('v0.5.6 -> v0.4.6 is a downgrade, blocked even offline: v0.5.6 always stores v1beta1 and v0.4.6 does not serve it; no supported path', () => {
    const plan = planUpgrade(r056, r046, undefined, [r050]);
    expect(plan.verdict).toBe('blocked');
    expect(plan.findings.find((f) => f.severity === 'block')?.reason).toBe('StoredVersionNotServed');
    expect(plan.direction).toBe('downgrade');
    expect(plan.assumedVerdict).toBeUndefined();
    expect(plan.findings.find((f) => f.severity === 'block')?.subject).toEqual({
      kind: 'Sandbox',
      storedVersions: ['v1beta1'],
      served: ['v1alpha1'],
    });
    expect(plan.path[0]).toMatch(/^no supported release/);
  });

  it('with live state: storedVersions [v1alpha1, v1beta1] on v0.5.0 -> v0.5.6 asks for a storage migration and a prune', () => {
    const plan = planUpgrade(r050, r056, {
      source: 'context test',
      storedVersions: { Sandbox: ['v1alpha1', 'v1beta1'], SandboxClaim: ['v1beta1'] },
    });
    expect(plan.verdict).toBe('needs-migration');
    expect(plan.unknowns).toEqual([]);
    expect(plan.storedVersionsSource).toBe('live (context test)');
    expect(plan.findings.filter((f) => f.reason === 'StoredVersionsStale').map((f) => f.subject)).toEqual([
      { kind: 'Sandbox', storedVersions: ['v1alpha1', 'v1beta1'], served: ['v1beta1'] },
    ]);
    expect(plan.path).toEqual([
      'install v0.5.6',
      'migrate storage: rewrite every Sandbox object (a no-op update) so it is stored as v1beta1',
      'prune status.storedVersions of the Sandbox CRD(s) to [v1beta1]',
    ]);
  });

  it('with live v1alpha1 claims: a cold claim converts to shadow-pool-<template>, which must exist', () => {
    const claims = [
      { namespace: 'agents', name: 'cold', template: 'python', sandboxName: 'cold' },
      { namespace: 'agents', name: 'warm', template: 'python', sandboxName: 'pool-a-x7k2p' },
      { namespace: 'agents', name: 'named', template: 'python', warmpool: 'fast' },
    ];
    expect(claims.map(convertedPoolName)).toEqual(['shadow-pool-python', 'pool-a', 'fast']);
    const plan = planUpgrade(r046, r056, {
      source: 'ctx',
      storedVersions: { SandboxClaim: ['v1alpha1'] },
      claims,
      pools: ['agents/pool-a', 'agents/fast'],
    });
    expect(plan.findings.filter((f) => f.reason === 'ClaimPoolMissing').map((f) => f.claim)).toEqual([
      { namespace: 'agents', name: 'cold', pool: 'shadow-pool-python' },
    ]);
    expect(plan.path).toContain(
      'before upgrading: claim agents/cold converts to warmPoolRef shadow-pool-python, which does not exist; create that pool or re-create the claim',
    );
  });
});

describe('planUpgrade: never guesses', () => {
  const release = (tag: ReleaseTag): LoadedRelease =>
    ({ 'v0.4.6': r046, 'v0.5.0': r050, 'v0.5.6': r056, 'v1.0.3': r103 })[tag];
  const pairs = SUPPORTED_RELEASES.flatMap((f) => SUPPORTED_RELEASES.map((t) => [f, t] as const));
  const beta = {
    Sandbox: ['v1beta1'],
    SandboxClaim: ['v1beta1'],
    SandboxTemplate: ['v1beta1'],
    SandboxWarmPool: ['v1beta1'],
  };

  it.each(pairs)('%s -> %s offline is never safe', (f, t) => {
    const plan = planUpgrade(release(f), release(t));
    expect(plan.verdict).not.toBe('safe');
    expect(plan.unknowns.length).toBeGreaterThan(0);
    expect(plan.verdict).toBe(plan.findings.some((x) => x.severity === 'block') ? 'blocked' : 'unknown');
  });

  it('tags order numerically', () => {
    expect(['v0.5.10', 'v0.4.6', 'v0.5.6', 'v0.5.0'].sort(compareTags)).toEqual([
      'v0.4.6',
      'v0.5.0',
      'v0.5.6',
      'v0.5.10',
    ]);
  });

  it('v0.5.6 -> v0.5.0 is planned as a downgrade: fields only v0.5.6 defines are pruned, defects it fixed come back', () => {
    const plan = planUpgrade(r056, r050, { source: 'ctx', storedVersions: beta, warmClaims: [] });
    expect(plan.direction).toBe('downgrade');
    expect(plan.verdict).toBe('needs-migration');
    expect(plan.findings.filter((x) => x.topic === 'advice').map((x) => x.reason)).toEqual(['Downgrade']);
    expect(
      plan.findings.filter((x) => x.reason === 'KnownDefect' && x.subject?.reintroduced === true).map((x) => x.source),
    ).toContain('sandbox-router/README.md@v0.5.6');
    expect(plan.path).toContain('downgrade: install v0.5.0 in place of v0.5.6');
    expect(plan.path).not.toContain('install v0.5.0');
    expect(plan.path.some((p) => p.startsWith('from v0.4.x'))).toBe(false);
  });

  const defect = BLOCKING_DEFECTS.find((d) => d.id === 'warm-claims-cold-restart')!;
  const withWarm = (storedVersions: LiveUpgradeState['storedVersions'], warmClaims: string[]): LiveUpgradeState => ({
    source: 'ctx',
    storedVersions,
    warmClaims,
  });

  it('the cold-restart defect covers v0.5.0 and v0.5.1, cites #1124 and suggests v0.5.6', () => {
    expect(defect).toMatchObject({
      releases: ['v0.5.0', 'v0.5.1'],
      source: 'kubernetes-sigs/agent-sandbox#1124',
      fixedIn: 'v0.5.2',
      suggest: 'v0.5.6',
    });
  });

  it.each([
    ['v0.5.6', beta],
    [
      'v0.4.6',
      {
        Sandbox: ['v1alpha1'],
        SandboxClaim: ['v1alpha1'],
        SandboxTemplate: ['v1alpha1'],
        SandboxWarmPool: ['v1alpha1'],
      },
    ],
  ] as const)(
    '%s -> v0.5.0 with warm-started claims live is blocked by warm-claims-cold-restart, and suggests v0.5.6',
    (f, storedVersions) => {
      const plan = planUpgrade(release(f), r050, withWarm(storedVersions, ['agents/a', 'agents/b']));
      expect(plan.verdict).toBe('blocked');
      const block = plan.findings.filter((x) => x.severity === 'block');
      expect(block.map((x) => [x.topic, x.source])).toEqual([['defect', 'kubernetes-sigs/agent-sandbox#1124']]);
      expect([block[0]!.reason, block[0]!.subject]).toEqual([
        'BlockingDefectActive',
        { defect: 'warm-claims-cold-restart', claims: ['agents/a', 'agents/b'] },
      ]);
      expect(plan.path).toEqual([
        'move to v0.5.6 instead of v0.5.0 (warm-claims-cold-restart is fixed in v0.5.2+), or accept the cold restarts with --accept warm-claims-cold-restart',
      ]);
      expect(plan.accepted).toEqual([]);
    },
  );

  it('accepting the defect by id lifts the block and lists the claims that restart cold', () => {
    const plan = planUpgrade(r056, r050, withWarm(beta, ['agents/a']), [], { accept: ['warm-claims-cold-restart'] });
    expect(plan.verdict).toBe('needs-migration');
    expect(plan.accepted).toEqual(['warm-claims-cold-restart']);
    expect(plan.findings.find((x) => x.source === defect.source)).toMatchObject({
      severity: 'review',
      topic: 'defect',
    });
    expect(plan.findings.some((x) => x.severity === 'block')).toBe(false);
  });

  it('another id does not lift it', () => {
    expect(planUpgrade(r056, r050, withWarm(beta, ['agents/a']), [], { accept: ['something-else'] }).verdict).toBe(
      'blocked',
    );
  });

  it('no warm-started claim: the defect is reported as not applying; warm claims not read: unknown', () => {
    const none = planUpgrade(r056, r050, withWarm(beta, []));
    expect(none.verdict).toBe('needs-migration');
    expect(none.findings.find((x) => x.source === defect.source)?.severity).toBe('info');
    const unread = planUpgrade(r056, r050, { source: 'ctx', storedVersions: beta });
    expect(unread.verdict).toBe('unknown');
    expect(unread.assumedVerdict).toBe('needs-migration');
    expect(unread.unknowns).toEqual([
      'warm-started claims (warm-claims-cold-restart blocks v0.5.0 while any is active)',
    ]);
  });

  it('v0.5.6 -> v0.5.6 with live v1beta1 storage is safe; a live CRD that does not exist stores nothing', () => {
    expect(planUpgrade(r056, r056, withWarm(beta, ['agents/a'])).verdict).toBe('safe');
    expect(planUpgrade(r050, r056, withWarm({ Sandbox: ['v1beta1'] }, [])).verdict).toBe('safe');
  });
});

describe('planUpgrade: one finding per change', () => {
  const release = (tag: ReleaseTag): LoadedRelease =>
    ({ 'v0.4.6': r046, 'v0.5.0': r050, 'v0.5.6': r056, 'v1.0.3': r103 })[tag];
  const pairs = SUPPORTED_RELEASES.flatMap((f) =>
    SUPPORTED_RELEASES.filter((t) => t !== f).map((t) => [f, t] as const),
  );

  it('covers every ordered pair of the supported releases', () => {
    expect(pairs).toHaveLength(12);
  });

  it.each(pairs)('%s -> %s: no finding repeats, in any CRD version compared, and none is lost', (f, t) => {
    const plan = planUpgrade(
      release(f),
      release(t),
      undefined,
      SUPPORTED_RELEASES.filter((x) => x !== f && x !== t).map(release),
    );
    const keys = plan.findings.map((x) => `${x.severity} ${x.topic} ${x.message}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    // the same change seen from two version comparisons reads the same once the version label is taken out
    const schema = plan.findings.filter((x) => x.topic === 'schema');
    const unlabelled = schema.map((x) =>
      x.message.replace(/ \(versions: [^)]*\)$/, '').replace(/^(\w+) v1\w+( -> v1\w+)?(?=[ :])/, '$1'),
    );
    expect(unlabelled.filter((m, i) => unlabelled.indexOf(m) !== i)).toEqual([]);
    // every raw schema change is accounted for by exactly one version entry of one finding
    expect(schema.flatMap((x) => x.versions ?? []).length).toBe(plan.schemaChanges.length);
  });

  it('v0.4.6 -> v0.5.6: 46 findings; the five changes found in v1alpha1 and across v1alpha1 -> v1beta1 are one finding each', () => {
    const plan = planUpgrade(r046, r056, undefined, [r050]);
    expect(plan.findings).toHaveLength(46);
    expect(plan.schemaChanges).toHaveLength(39);
    const count: Record<string, number> = {};
    for (const x of plan.findings) count[x.topic] = (count[x.topic] ?? 0) + 1;
    expect(count).toEqual({ schema: 34, storage: 4, conditions: 4, advice: 1, defect: 3 });
    const schema = plan.findings.filter((x) => x.topic === 'schema');
    expect(schema.map((x) => x.reason)).toEqual(schema.map((x) => `Schema${camel(x.subject!.change!)}`));
    expect(
      schema.map((x) => {
        const s = x.subject!;
        return [x.severity, s.kind, s.change, s.path, s.before, s.after, x.versions];
      }),
    ).toEqual([
      ['info', 'Sandbox', 'conversion-changed', 'spec.conversion.strategy', 'None', 'Webhook', ['*']],
      ['info', 'Sandbox', 'version-added', '', undefined, { served: true, storage: true }, ['v1beta1']],
      ['info', 'Sandbox', 'storage-changed', '', true, false, ['v1alpha1']],
      ['info', 'Sandbox', 'deprecated-changed', '', false, true, ['v1alpha1']],
      [
        'review',
        'Sandbox',
        'field-removed',
        'spec.podTemplate.spec.workloadRef',
        'object',
        undefined,
        ['v1alpha1', 'v1alpha1 -> v1beta1'],
      ],
      [
        'info',
        'Sandbox',
        'field-added',
        'spec.podTemplate.spec.schedulingGroup',
        undefined,
        'object',
        ['v1alpha1', 'v1alpha1 -> v1beta1'],
      ],
      [
        'migrate',
        'Sandbox',
        'field-renamed',
        'spec.operatingMode',
        'spec.replicas',
        'spec.operatingMode',
        ['v1alpha1 -> v1beta1'],
      ],
      ['migrate', 'Sandbox', 'field-removed', 'status.replicas', 'integer/int32', undefined, ['v1alpha1 -> v1beta1']],
      ['info', 'Sandbox', 'field-added', 'status.nodeName', undefined, 'string', ['v1alpha1 -> v1beta1']],
      ['review', 'Sandbox', 'validation-changed', 'spec', undefined, expect.any(String), ['v1alpha1 -> v1beta1']],
      ['info', 'SandboxClaim', 'conversion-changed', 'spec.conversion.strategy', 'None', 'Webhook', ['*']],
      ['info', 'SandboxClaim', 'version-added', '', undefined, { served: true, storage: true }, ['v1beta1']],
      ['info', 'SandboxClaim', 'storage-changed', '', true, false, ['v1alpha1']],
      ['info', 'SandboxClaim', 'deprecated-changed', '', false, true, ['v1alpha1']],
      [
        'migrate',
        'SandboxClaim',
        'field-renamed',
        'spec.warmPoolRef',
        'spec.sandboxTemplateRef',
        'spec.warmPoolRef',
        ['v1alpha1 -> v1beta1'],
      ],
      ['migrate', 'SandboxClaim', 'field-removed', 'spec.warmpool', 'string', undefined, ['v1alpha1 -> v1beta1']],
      [
        'info',
        'SandboxClaim',
        'field-added',
        'spec.volumeClaimTemplates',
        undefined,
        'array (atomic list)',
        ['v1alpha1 -> v1beta1'],
      ],
      ['info', 'SandboxTemplate', 'conversion-changed', 'spec.conversion.strategy', 'None', 'Webhook', ['*']],
      ['info', 'SandboxTemplate', 'version-added', '', undefined, { served: true, storage: true }, ['v1beta1']],
      ['info', 'SandboxTemplate', 'storage-changed', '', true, false, ['v1alpha1']],
      ['info', 'SandboxTemplate', 'deprecated-changed', '', false, true, ['v1alpha1']],
      ['info', 'SandboxTemplate', 'subresource-changed', '', 'status', '', ['v1alpha1']],
      [
        'review',
        'SandboxTemplate',
        'field-removed',
        'spec.podTemplate.spec.workloadRef',
        'object',
        undefined,
        ['v1alpha1', 'v1alpha1 -> v1beta1'],
      ],
      [
        'migrate',
        'SandboxTemplate',
        'field-removed',
        'status',
        'object',
        undefined,
        ['v1alpha1', 'v1alpha1 -> v1beta1'],
      ],
      [
        'info',
        'SandboxTemplate',
        'field-added',
        'spec.podTemplate.spec.schedulingGroup',
        undefined,
        'object',
        ['v1alpha1', 'v1alpha1 -> v1beta1'],
      ],
      [
        'info',
        'SandboxTemplate',
        'field-added',
        'spec.volumeClaimTemplatesPolicy',
        undefined,
        'string',
        ['v1alpha1 -> v1beta1'],
      ],
      ['info', 'SandboxWarmPool', 'conversion-changed', 'spec.conversion.strategy', 'None', 'Webhook', ['*']],
      ['info', 'SandboxWarmPool', 'version-added', '', undefined, { served: true, storage: true }, ['v1beta1']],
      ['info', 'SandboxWarmPool', 'storage-changed', '', true, false, ['v1alpha1']],
      ['info', 'SandboxWarmPool', 'deprecated-changed', '', false, true, ['v1alpha1']],
      ['info', 'SandboxWarmPool', 'printer-column-added', '.spec.replicas', undefined, 'Desired', ['v1alpha1']],
      [
        'info',
        'SandboxWarmPool',
        'field-added',
        'status.observedGeneration',
        undefined,
        'integer/int64',
        ['v1alpha1 -> v1beta1'],
      ],
      ['review', 'SandboxWarmPool', 'default-changed', 'spec.replicas', undefined, 1, ['v1alpha1 -> v1beta1']],
      ['info', 'SandboxWarmPool', 'required-changed', 'spec.replicas', true, false, ['v1alpha1 -> v1beta1']],
    ]);
  });
});

/** `field-removed` -> `FieldRemoved`, as finding reasons spell a schema change. */
function camel(kebab: string): string {
  return kebab
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

describe('planUpgrade: v0.5 -> v1.0 (the conversion webhook and v1alpha1 go away)', () => {
  const all = (versions: string[]): LiveUpgradeState['storedVersions'] => ({
    Sandbox: versions,
    SandboxClaim: versions,
    SandboxTemplate: versions,
    SandboxWarmPool: versions,
  });
  const others = (f: ReleaseTag, t: ReleaseTag): Array<{ facts: LoadedRelease['facts'] }> =>
    [r046, r050, r056, r103].filter((r) => r.facts.tag !== f && r.facts.tag !== t);
  const REMOVAL = [
    'AlphaClientsBreak',
    'ConversionWebhookRemoved',
    'CrdsBeforeController',
    'WebhookFlagsRemoved',
    'OrphanedWebhookObjects',
  ];
  const reasons = (plan: ReturnType<typeof planUpgrade>): string[] => plan.findings.map((x) => x.reason);
  /** The index of the first path step containing `text` (-1: none). */
  const step = (plan: ReturnType<typeof planUpgrade>, text: string): number =>
    plan.path.findIndex((p) => p.includes(text));

  it('v1alpha1 still stored: blocked by StoredVersionNotServed on every kind, with the concrete way through', () => {
    const plan = planUpgrade(
      r056,
      r103,
      { source: 'context test', storedVersions: all(['v1alpha1', 'v1beta1']) },
      others('v0.5.6', 'v1.0.3'),
    );
    expect(plan.verdict).toBe('blocked');
    expect(plan.findings.filter((x) => x.severity === 'block').map((x) => [x.reason, x.subject])).toEqual(
      ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'].map((kind) => [
        'StoredVersionNotServed',
        { kind, storedVersions: ['v1alpha1'], served: ['v1beta1'] },
      ]),
    );
    expect(reasons(plan)).toEqual(expect.arrayContaining(REMOVAL));
    expect(reasons(plan)).not.toContain('IntermediateRelease');
    // rewrite, prune, clients, conversion patch, CRDs, install, orphans: in that order
    const order = [
      'agentplane migrate-storage',
      'prune status.storedVersions',
      'move every client to v1beta1',
      '{"spec":{"conversion":{"strategy":"None","webhook":null}}}',
      'apply the v1.0.3 CRDs first',
      'install v1.0.3',
      'agent-sandbox-webhook-service',
    ].map((text) => step(plan, text));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(plan.path[step(plan, 'prune status.storedVersions')]).toContain('[v1beta1]');
    expect(plan.path[plan.path.length - 1]).toEqual(
      expect.stringContaining(
        'Secret agent-sandbox-webhook-certs, Role agent-sandbox-controller, RoleBinding agent-sandbox-controller',
      ),
    );
  });

  it('storage already pruned to [v1beta1]: needs-migration, not blocked; the webhook steps surround the install', () => {
    const plan = planUpgrade(
      r056,
      r103,
      { source: 'context test', storedVersions: all(['v1beta1']) },
      others('v0.5.6', 'v1.0.3'),
    );
    expect(plan.verdict).toBe('needs-migration');
    expect(plan.findings.filter((x) => x.topic === 'storage')).toEqual([]);
    expect(reasons(plan)).toEqual(expect.arrayContaining(REMOVAL));
    expect(step(plan, 'migrate-storage')).toBe(-1);
    const install = step(plan, 'install v1.0.3');
    expect(step(plan, 'apply the v1.0.3 CRDs first')).toBeLessThan(install);
    expect(step(plan, 'agent-sandbox-webhook-service')).toBeGreaterThan(install);
    // v1alpha1 leaves every CRD: a version removal (migrate) and the conversion stanza going back to None
    expect(
      plan.findings.filter((x) => x.topic === 'schema' && x.subject?.kind === 'Sandbox').map((x) => x.reason),
    ).toEqual(expect.arrayContaining(['SchemaVersionRemoved', 'SchemaConversionChanged']));
  });

  it('offline it stays unknown, assumed needs-migration (v0.5.6 itself stores only v1beta1)', () => {
    const plan = planUpgrade(r056, r103, undefined, others('v0.5.6', 'v1.0.3'));
    expect(plan.verdict).toBe('unknown');
    expect(plan.assumedVerdict).toBe('needs-migration');
    expect(plan.unknowns.map((u) => u.split(' (')[0])).toEqual(['status.storedVersions of the Agent Sandbox CRDs']);
    expect(reasons(plan)).toEqual(expect.arrayContaining(REMOVAL));
  });

  it('v0.4.6 -> v1.0.3 goes only through v0.5.6 (not v0.5.0, which has a blocking defect), even offline', () => {
    for (const live of [undefined, { source: 'context test', storedVersions: all(['v1alpha1']) }]) {
      const plan = planUpgrade(r046, r103, live, others('v0.4.6', 'v1.0.3'));
      expect(plan.verdict).toBe('blocked');
      expect(plan.findings.find((x) => x.reason === 'IntermediateRelease')?.subject).toEqual({
        storedVersions: ['v1alpha1'],
        served: ['v1beta1', 'v1alpha1'],
      });
      expect(plan.path.filter((p) => p.startsWith('install '))).toEqual([
        'install the intermediate release v0.5.6 (serves v1beta1+v1alpha1 for Sandbox, SandboxClaim, SandboxTemplate, SandboxWarmPool)',
        'install v1.0.3',
      ]);
      expect(step(plan, 'migrate storage at v0.5.6')).toBeGreaterThan(step(plan, 'intermediate release v0.5.6'));
      expect(step(plan, 'before leaving v0.4.6')).toBe(0);
      expect(reasons(plan)).toEqual(expect.arrayContaining(REMOVAL));
    }
  });

  it('the claim Ready generation and claim-before-template defects are fixed at v1.0.3; a downgrade to v0.5.6 brings them back', () => {
    const CLAIM_SOURCE = 'extensions/controllers/sandboxclaim_controller.go@v0.5.6';
    const up = planUpgrade(r056, r103, { source: 'context test', storedVersions: all(['v1beta1']) });
    expect(up.findings.filter((x) => x.reason === 'KnownDefect' && x.source === CLAIM_SOURCE)).toEqual([]);
    const down = planUpgrade(r103, r056, { source: 'context test', storedVersions: all(['v1beta1']) });
    expect(down.direction).toBe('downgrade');
    const back = down.findings.filter((x) => x.reason === 'KnownDefect' && x.source === CLAIM_SOURCE);
    expect(back.map((x) => [x.operations, x.subject?.reintroduced])).toEqual([
      [['observe'], true],
      [['createFromTemplate'], true],
    ]);
    // a downgrade does not get the webhook-removal steps
    expect(reasons(down).filter((r) => REMOVAL.includes(r))).toEqual([]);
  });
});
