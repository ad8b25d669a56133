/**
 * Upgrade classification between two pinned releases: the CRD schema diff ({@link diffCrdSchemas}) mapped to the
 * adapter operations it affects, status-condition changes, known upstream defects of the target, and, from live
 * state, a check that the target can serve every version in `status.storedVersions`, that v1alpha1 claims convert to
 * pools that exist, and that no blocking defect ({@link BLOCKING_DEFECTS}) meets what is running.
 *
 * Verdict: `blocked` (the target cannot serve what is stored, or a blocking defect applies and was not accepted),
 * `needs-migration` (storage version moves, fields the adapter or constructs write are removed, renamed, retyped or
 * newly required, claims convert to missing pools), `unknown` (the verdict depends on live state that was not read:
 * never `safe` from assumed storedVersions), else `safe` (findings of severity `info`/`review` need no migration).
 * A target older than the source is planned as a downgrade (`direction`).
 */
import { schemaReason, type UpgradeReason } from './upgrade-reasons.js';
import { canonicalJson, crdObject } from './crd-schema.js';
import { diffCrdSchemas, type SchemaChange, type SchemaChangeKind } from './schema-diff.js';
import { SUPPORTED_RELEASES } from './supported.js';
import type { LoadedRelease, ReleaseFacts, ReleaseTag, SandboxKind } from './types.js';
import { SANDBOX_KINDS, familyConverts, storageVersionOf } from '../model/releases.js';
import { conversionRemovalFindings } from './conversion-removal.js';

export type UpgradeVerdict = 'safe' | 'needs-migration' | 'blocked' | 'unknown';
/** `downgrade`: the target is an older release than the source. */
export type UpgradeDirection = 'upgrade' | 'downgrade' | 'same';
/** The capability adapter's operations (docs/architecture.md, "The capability adapter"). */
export type AdapterOperation =
  'createFromTemplate' | 'observe' | 'terminate' | 'capabilities' | 'startExecution' | 'queryExecution';
/** `info`: nothing to do; `review`: check your own objects; `migrate`: a step is needed; `block`: the jump cannot be made. */
export type FindingSeverity = 'info' | 'review' | 'migrate' | 'block';

/** What a finding is about, as typed fields: the message says the same for people, programs and tests read these. */
export interface FindingSubject {
  /** The CRD kind the finding is about. */
  readonly kind?: SandboxKind;
  /** Schema findings: the change, the field path (empty for a version- or CRD-level change), the values either side. */
  readonly change?: SchemaChangeKind;
  readonly path?: string;
  /** Schema: the value before and after; `StorageVersionChanged`: the storage version before and after. */
  readonly before?: unknown;
  readonly after?: unknown;
  /** Condition findings: `<Kind>/<Type>`, e.g. `Sandbox/Ready`. */
  readonly condition?: string;
  /** `StoredVersionNotServed`: the stored versions the target does not serve; `StoredVersionsStale`: all stored. */
  readonly storedVersions?: readonly string[];
  /** `StoredVersionNotServed`: what the target serves; `StoredVersionsStale`: the version to prune to. */
  readonly served?: readonly string[];
  /** Defect findings: the defect's id (blocking defects), the warm-started claims it affects. */
  readonly defect?: string;
  readonly claims?: readonly string[];
  /** `KnownDefect` of a downgrade: absent from the release moved from, so the downgrade brings it back. */
  readonly reintroduced?: boolean;
}

export interface UpgradeFinding {
  readonly severity: FindingSeverity;
  readonly topic: 'schema' | 'storage' | 'conditions' | 'defect' | 'live' | 'advice';
  /**
   * Stable CamelCase code ({@link UPGRADE_REASONS}, docs/reference/reasons.md).
   */
  readonly reason: UpgradeReason;
  readonly message: string;
  readonly operations: readonly AdapterOperation[];
  /** Upstream source (`path@tag`) or the schema change behind the finding. */
  readonly source?: string;
  /**
   * Schema findings only: the CRD versions compared in which the change was found, sorted, e.g.
   * `['v1alpha1', 'v1alpha1 -> v1beta1']` (the served v1alpha1 of both releases, then the old storage version against the
   * new one); `['*']` for a CRD-level change. A change found in several is one finding naming them all.
   */
  readonly versions?: readonly string[];
  /** The typed subject of the finding (see {@link FindingSubject}). */
  readonly subject?: FindingSubject;
  /** `ClaimPoolMissing` only: the live claim and the pool it converts to. */
  readonly claim?: { readonly namespace: string; readonly name: string; readonly pool: string };
}

/** One v1alpha1 SandboxClaim as read live (only what conversion to v1beta1 looks at). */
export interface LiveClaim {
  readonly namespace: string;
  readonly name: string;
  /** `spec.sandboxTemplateRef.name`. */
  readonly template?: string;
  /** `spec.warmpool` (`default` when unset, `none`, or a pool name). */
  readonly warmpool?: string;
  /** `status.sandbox.name` (the bound Sandbox; differs from the claim name for warm adoptions). */
  readonly sandboxName?: string;
}

/** What a cluster says about storage, read through the adapter. */
export interface LiveUpgradeState {
  /** Where it was read, e.g. `context kind-agents`. */
  readonly source: string;
  /** `status.storedVersions` per kind, for the CRDs that exist. */
  readonly storedVersions: Partial<Record<SandboxKind, readonly string[]>>;
  /** v1alpha1 claims (read when the live release stores v1alpha1). */
  readonly claims?: readonly LiveClaim[];
  /** Existing warm pools, `namespace/name`. */
  readonly pools?: readonly string[];
  /**
   * Warm-started claims, `namespace/name`: claims bound to a Sandbox whose name differs from the claim's (adopted from a
   * pool, `extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6`). Undefined when not read.
   */
  readonly warmClaims?: readonly string[];
}

/**
 * Defects of a target release that block the move while something they break is live, unless accepted by id
 * (`plan-upgrade --accept <id>`). `releases` may name unsupported releases: the defect is cited for them too.
 */
export interface BlockingDefect {
  readonly id: string;
  readonly releases: readonly string[];
  readonly message: string;
  /** Upstream issue or file (`path@tag`) the defect is reported in. */
  readonly source: string;
  readonly fixedIn: string;
  /** The supported release to move to instead. */
  readonly suggest: ReleaseTag;
}

export const BLOCKING_DEFECTS: readonly BlockingDefect[] = [
  {
    id: 'warm-claims-cold-restart',
    releases: ['v0.5.0', 'v0.5.1'],
    message: 'installing v0.5.0 or v0.5.1 while warm-started claims are active restarts them cold',
    source: 'kubernetes-sigs/agent-sandbox#1124',
    fixedIn: 'v0.5.2',
    suggest: 'v0.5.6',
  },
];

/** Options of {@link planUpgrade}. */
export interface PlanOptions {
  /**
   * Ids of `BLOCKING_DEFECTS` (releases layer) the operator accepts: they are reported but no longer block.
   * @default - none
   */
  readonly accept?: readonly string[];
}

export interface UpgradePlan {
  readonly from: ReleaseTag;
  readonly to: ReleaseTag;
  readonly direction: UpgradeDirection;
  readonly verdict: UpgradeVerdict;
  /** With verdict `unknown`: the verdict if the cluster held only what `from` itself stores and nothing live blocked. */
  readonly assumedVerdict?: Exclude<UpgradeVerdict, 'unknown'>;
  /** Live state not read that could change the verdict: the verdict is `unknown` when any is listed, unless already `blocked`. */
  readonly unknowns: readonly string[];
  /** Blocking defects accepted by id ({@link PlanOptions.accept}) that apply to this move. */
  readonly accepted: readonly string[];
  /** Where stored versions came from: the live cluster, or assumed from the `from` release's storage versions. */
  readonly storedVersionsSource: string;
  readonly findings: readonly UpgradeFinding[];
  /** Steps to take, in order, when the verdict is not `safe`. */
  readonly path: readonly string[];
  /** Every field-level schema change, once per CRD version compared (the findings merge repeats), for the json output. */
  readonly schemaChanges: readonly SchemaChange[];
}

const KINDS: readonly SandboxKind[] = SANDBOX_KINDS;
/** Reasons of conversion-removal.ts: their steps go into the path around the install, not before it. */
const REMOVAL_REASONS: ReadonlySet<string> = new Set([
  'AlphaClientsBreak',
  'ConversionWebhookRemoved',
  'CrdsBeforeController',
  'WebhookFlagsRemoved',
  'OrphanedWebhookObjects',
]);
const ALL_OPS: readonly AdapterOperation[] = ['createFromTemplate', 'observe', 'terminate', 'capabilities'];

/** The adapter operations a schema change at `kind`/`path` affects. */
export function operationsFor(kind: string, change: SchemaChange): AdapterOperation[] {
  if (change.change.startsWith('printer-column')) return [];
  if (change.path === '' || change.change === 'conversion-changed') return [...ALL_OPS];
  const p = change.path;
  const ops = new Set<AdapterOperation>();
  if (p.startsWith('status')) ops.add(kind === 'SandboxWarmPool' ? 'capabilities' : 'observe');
  if (kind === 'SandboxClaim' && p.startsWith('spec')) {
    ops.add('createFromTemplate');
    if (p.startsWith('spec.lifecycle')) ops.add('terminate');
  }
  if (kind === 'SandboxTemplate' && p.startsWith('spec')) ops.add('createFromTemplate').add('capabilities');
  if (kind === 'SandboxWarmPool' && p.startsWith('spec')) ops.add('createFromTemplate').add('capabilities');
  if (kind === 'Sandbox' && p.startsWith('spec')) {
    if (/^spec\.(operatingMode|replicas)/.test(p)) ops.add('capabilities').add('terminate');
    else ops.add('observe');
  }
  return [...ops];
}

/** How much a schema change matters for an upgrade. */
function severityOf(c: SchemaChange): FindingSeverity {
  switch (c.change) {
    case 'field-renamed':
    case 'type-changed':
    case 'version-removed':
      return 'migrate';
    case 'field-removed':
      // A PodSpec field removed with a k8s.io/api bump is pruned silently from templates that use it.
      return c.path.includes('podTemplate.spec.') ? 'review' : 'migrate';
    case 'required-changed':
      return c.after === true ? 'migrate' : 'info';
    case 'enum-changed':
    case 'validation-changed':
    case 'default-changed':
    case 'served-changed':
      return 'review';
    default:
      return 'info';
  }
}

/** Releases with reason lists of their own; v1.0.3 writes v0.5.6's (see CONDITION_REASONS). */
type OwnReasons = Exclude<ReleaseTag, 'v1.0.3'>;
const SANDBOX_READY: Readonly<Record<OwnReasons, readonly string[]>> = {
  'v0.4.6': ['DependenciesReady', 'DependenciesNotReady', 'ReconcilerError', 'SandboxExpired'],
  'v0.5.0': ['DependenciesReady', 'DependenciesNotReady', 'ReconcilerError', 'SandboxExpired', 'SandboxSuspended'],
  'v0.5.6': [
    'DependenciesReady',
    'DependenciesNotReady',
    'ReconcilerError',
    'SandboxExpired',
    'SandboxSuspended',
    'MultiplePods',
    'PodSucceeded',
    'PodFailed',
  ],
};
const CLAIM_READY: Readonly<Record<OwnReasons, readonly string[]>> = {
  'v0.4.6': [
    'TemplateNotFound',
    'InvalidMetadata',
    'ClaimExpired',
    'SandboxMissing',
    'SandboxExpired',
    'SandboxNotReady',
    'ReconcilerError',
  ],
  'v0.5.0': [
    'TemplateNotFound',
    'WarmPoolNotFound',
    'InvalidMetadata',
    'VolumeClaimTemplatesError',
    'ClaimExpired',
    'SandboxMissing',
    'SandboxExpired',
    'SandboxNotReady',
    'ReconcilerError',
  ],
  'v0.5.6': [
    'TemplateNotFound',
    'WarmPoolNotFound',
    'AdoptionConflict',
    'SandboxCreatePending',
    'InvalidMetadata',
    'EnvVarsInjectionRejected',
    'VolumeClaimTemplatesError',
    'ClaimExpired',
    'SandboxMissing',
    'SandboxExpired',
    'SandboxNotReady',
    'ReconcilerError',
  ],
};
const union = (...lists: ReadonlyArray<readonly string[]>): string[] => [...new Set(lists.flat())];

/**
 * Condition types and reasons each release's controllers write (`controllers/sandbox_controller.go@tag`,
 * `extensions/controllers/sandboxclaim_controller.go@tag`). A bound claim's Ready is the Sandbox's Ready copied
 * verbatim, and its Finished mirrors the Sandbox's, so claim conditions carry Sandbox reasons too.
 */
const OWN_CONDITION_REASONS: Readonly<Record<OwnReasons, Readonly<Record<string, readonly string[]>>>> = {
  'v0.4.6': {
    'Sandbox/Ready': SANDBOX_READY['v0.4.6'],
    'Sandbox/Finished': ['PodSucceeded', 'PodFailed'],
    'SandboxClaim/Ready': union(CLAIM_READY['v0.4.6'], SANDBOX_READY['v0.4.6']),
    'SandboxClaim/Finished': ['PodSucceeded', 'PodFailed'],
  },
  'v0.5.0': {
    'Sandbox/Ready': SANDBOX_READY['v0.5.0'],
    'Sandbox/Finished': ['PodSucceeded', 'PodFailed'],
    'Sandbox/Suspended': ['PodTerminated', 'PodNotTerminated'],
    'SandboxClaim/Ready': union(CLAIM_READY['v0.5.0'], SANDBOX_READY['v0.5.0']),
    'SandboxClaim/Finished': ['PodSucceeded', 'PodFailed'],
  },
  'v0.5.6': {
    'Sandbox/Ready': SANDBOX_READY['v0.5.6'],
    'Sandbox/Finished': ['PodSucceeded', 'PodFailed'],
    'Sandbox/Suspended': [
      'NotSuspended',
      'PodTerminating',
      'PodNotOwned',
      'PodTerminated',
      'PodStateUnknown',
      'PodNotTerminated',
    ],
    'Sandbox/PodScheduled': ['PodScheduled', 'PodSchedulingUnknown'],
    'SandboxClaim/Ready': union(CLAIM_READY['v0.5.6'], SANDBOX_READY['v0.5.6']),
    'SandboxClaim/Finished': ['PodSucceeded', 'PodFailed'],
  },
};
/** Condition types and reasons per release (as above), v1.0.3 included. */
export const CONDITION_REASONS: Readonly<Record<ReleaseTag, Readonly<Record<string, readonly string[]>>>> = {
  ...OWN_CONDITION_REASONS,
  // unchanged at v1.0.3 (`api/v1beta1/sandbox_types.go@v1.0.3`, `controllers/sandbox_controller.go@v1.0.3`,
  // `extensions/controllers/sandboxclaim_controller.go@v1.0.3`)
  'v1.0.3': OWN_CONDITION_REASONS['v0.5.6'],
};

/** Known upstream defects per release, each with the upstream file (`path@tag`) it is read from. */
export const KNOWN_DEFECTS: ReadonlyArray<{
  readonly releases: readonly ReleaseTag[];
  readonly message: string;
  readonly source: string;
  readonly operations: readonly AdapterOperation[];
}> = [
  {
    releases: ['v0.4.6', 'v0.5.0', 'v0.5.6'],
    message: "claim Ready is copied from the Sandbox without the claim's own generation: gate on observedGeneration",
    source: 'extensions/controllers/sandboxclaim_controller.go@v0.5.6',
    operations: ['observe'],
  },
  {
    releases: ['v0.4.6', 'v0.5.0', 'v0.5.6'],
    message: 'a claim created before its template is not reconciled when the template appears (waits for a resync)',
    source: 'extensions/controllers/sandboxclaim_controller.go@v0.5.6',
    operations: ['createFromTemplate'],
  },
  {
    releases: ['v0.4.6', 'v0.5.0'],
    message: 'python runtime runs /execute synchronously and blocks its event loop (probes starve)',
    source: 'examples/python-runtime-sandbox/main.py@v0.4.6',
    operations: ['startExecution', 'queryExecution'],
  },
  {
    releases: ['v0.4.6', 'v0.5.0'],
    message: 'core ClusterRole lacks the core "" events rule (events.k8s.io only)',
    source: 'k8s/rbac.generated.yaml@v0.5.0',
    operations: ['capabilities'],
  },
  {
    releases: ['v0.4.6', 'v0.5.0'],
    message: 'routers before v0.5.6 resolve warm sandboxes by DNS and get NXDOMAIN',
    source: 'sandbox-router/README.md@v0.5.6',
    operations: ['startExecution'],
  },
  {
    releases: ['v0.4.6'],
    message: 'a paused Sandbox (replicas 0) reports Ready=True/DependenciesReady',
    source: 'controllers/sandbox_controller.go@v0.4.6',
    operations: ['observe'],
  },
  {
    releases: ['v0.5.0'],
    message: 'warm-pool pods miss the label the template NetworkPolicy selects',
    source: 'extensions/controllers/sandboxwarmpool_controller.go@v0.5.0',
    operations: ['capabilities'],
  },
  {
    releases: ['v0.5.0'],
    message: 'under Recreate a stale pool member can still be adopted',
    source: 'extensions/controllers/sandboxclaim_controller.go@v0.5.0',
    operations: ['createFromTemplate'],
  },
  {
    releases: ['v0.5.0'],
    message: 'no --manage-webhook-certs flag: the controller always rewrites the conversion caBundle (GitOps drift)',
    source: 'cmd/agent-sandbox-controller/main.go@v0.5.0',
    operations: ['capabilities'],
  },
  {
    releases: ['v0.5.0'],
    message: 'extensions.controller.yaml lacks the 9443 containerPort (the webhook Service still targets 9443)',
    source: 'k8s/extensions.controller.yaml@v0.5.0',
    operations: ['capabilities'],
  },
  {
    releases: ['v0.5.0', 'v0.5.6'],
    message:
      'the conversion webhook certificate is self-signed for 365 days and never rotated: v1alpha1 reads fail after expiry until the Secret is deleted and the controller restarted',
    source: 'cmd/agent-sandbox-controller/tls.go@v0.5.6',
    operations: ['observe', 'capabilities'],
  },
];

/** A release as far as the plan reads it: its facts (a LoadedRelease is one). */
export interface WithFacts {
  readonly facts: ReleaseFacts;
}

function storageVersion(release: WithFacts, kind: SandboxKind): string | undefined {
  return storageVersionOf(release.facts.crds[kind]);
}

function served(release: WithFacts, kind: SandboxKind): string[] {
  return release.facts.crds[kind].versions.filter((v) => v.served).map((v) => v.name);
}

/** Orders release tags `vMAJOR.MINOR.PATCH` numerically (negative: `a` is older). */
export function compareTags(a: string, b: string): number {
  const parts = (t: string): number[] =>
    t
      .replace(/^v/, '')
      .split('.')
      .map((x) => Number.parseInt(x, 10) || 0);
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++)
    if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/** The v1beta1 `warmPoolRef.name` a v1alpha1 claim converts to (`extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6`). */
export function convertedPoolName(claim: LiveClaim): string {
  const wp = claim.warmpool ?? 'default';
  if (wp !== 'default' && wp !== 'none' && wp !== '') return wp;
  if (claim.sandboxName !== undefined && claim.sandboxName !== claim.name && claim.sandboxName.includes('-'))
    return claim.sandboxName.slice(0, claim.sandboxName.lastIndexOf('-'));
  return `shadow-pool-${claim.template ?? ''}`;
}

/**
 * One finding per distinct schema change of a kind. {@link diffCrdSchemas} compares every version both releases serve
 * and, when the storage version moves, the old storage version with the new one, so a field change shared by
 * those comparisons (e.g. a PodSpec field dropped from v1alpha1 and from v1alpha1 -> v1beta1) comes once per
 * comparison; here it becomes one finding that lists the versions. Version-level changes (empty path) stay per version.
 */
function schemaFindings(kind: SandboxKind, changes: readonly SchemaChange[], to: ReleaseTag): UpgradeFinding[] {
  const groups = new Map<string, SchemaChange[]>();
  for (const c of changes) {
    const key = [
      c.change,
      c.path,
      c.path === '' ? c.version : '',
      canonicalJson(c.before),
      canonicalJson(c.after),
    ].join('\u0000');
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [c]);
    else group.push(c);
  }
  return [...groups.values()].map((group) => {
    const c = group[0]!;
    const versions = group.map((x) => x.version).sort();
    const message = group.length === 1 ? c.summary : `${kind}${c.detail} (versions: ${versions.join('; ')})`;
    return {
      severity: severityOf(c),
      topic: 'schema',
      reason: schemaReason(c.change),
      message,
      operations: operationsFor(kind, c),
      subject: { kind, change: c.change, path: c.path, before: c.before, after: c.after },
      source: `k8s/crds@${to}`,
      versions,
    };
  });
}

function conditionFindings(from: ReleaseTag, to: ReleaseTag): UpgradeFinding[] {
  const a = CONDITION_REASONS[from] as (typeof CONDITION_REASONS)[ReleaseTag] | undefined;
  const b = CONDITION_REASONS[to] as (typeof CONDITION_REASONS)[ReleaseTag] | undefined;
  // a release outside the catalogue (e.g. a test fixture or a newer tag) has no recorded reasons: say so, never assume none changed
  const missing = [from, to].filter((_, i) => [a, b][i] === undefined);
  if (a === undefined || b === undefined)
    return [
      {
        severity: 'review',
        topic: 'conditions',
        reason: 'ConditionsNotCatalogued',
        message: `condition types and reasons of ${missing.join(', ')} are not catalogued: compare them by hand`,
        operations: ['observe'],
      },
    ];
  const out: UpgradeFinding[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const ra = a[key] ?? [];
    const rb = b[key] ?? [];
    const added = rb.filter((r) => !ra.includes(r));
    const removed = ra.filter((r) => !rb.includes(r));
    if (ra.length === 0)
      out.push({
        severity: 'info',
        topic: 'conditions',
        reason: 'ConditionAdded',
        message: `new condition ${key} (reasons ${rb.join(', ')})`,
        operations: ['observe'],
        subject: { condition: key },
      });
    else if (rb.length === 0)
      out.push({
        severity: 'review',
        topic: 'conditions',
        reason: 'ConditionRemoved',
        message: `condition ${key} no longer written`,
        operations: ['observe'],
        subject: { condition: key },
      });
    else if (added.length > 0 || removed.length > 0) {
      out.push({
        severity: removed.length > 0 ? 'review' : 'info',
        topic: 'conditions',
        reason: 'ConditionReasonsChanged',
        message: `${key} reasons${added.length ? ` + ${added.join(', ')}` : ''}${removed.length ? ` - ${removed.join(', ')}` : ''}`,
        operations: ['observe'],
        subject: { condition: key },
      });
    }
  }
  return out;
}

/**
 * Plans the move `from` -> `to` (an upgrade, or a downgrade when `to` is older). Pure: live state is passed in, read by
 * the caller through the adapter. Without `live` the verdict is `unknown` unless it is `blocked` on what `from` itself
 * stores (its storage versions are always in `status.storedVersions`); `assumedVerdict` says what it would be with
 * nothing else stored. `intermediates` are the other supported releases, searched for a path when storage blocks.
 */
export function planUpgrade(
  from: LoadedRelease,
  to: LoadedRelease,
  live?: LiveUpgradeState,
  intermediates: readonly WithFacts[] = [],
  options: PlanOptions = {},
): UpgradePlan {
  const f = from.facts.tag;
  const t = to.facts.tag;
  const order = compareTags(t, f);
  const direction: UpgradeDirection = order > 0 ? 'upgrade' : order < 0 ? 'downgrade' : 'same';
  const findings: UpgradeFinding[] = [];
  const path: string[] = [];
  const unknowns: string[] = [];
  const accepted: string[] = [];
  const blockPath: string[] = [];
  const schemaChanges: SchemaChange[] = [];
  for (const kind of KINDS) {
    const changes = diffCrdSchemas(crdObject(from, kind), crdObject(to, kind));
    schemaChanges.push(...changes);
    findings.push(...schemaFindings(kind, changes, t));
  }
  findings.push(...conditionFindings(f, t));
  if (direction === 'downgrade') {
    findings.push({
      severity: 'review',
      topic: 'advice',
      reason: 'Downgrade',
      message: `${f} -> ${t} is a downgrade: fields only ${f} defines (the removals listed below) are pruned by ${t}'s schemas; stop using them before installing ${t}`,
      operations: [...ALL_OPS],
    });
  }

  // Leaving the conversion webhook (v0.5 -> v1.0): steps before and after installing the target.
  // (from v0.4 too: the way there goes through a v0.5 release, which has the webhook)
  const removal =
    direction === 'upgrade' &&
    !familyConverts(to.facts.family) &&
    to.facts.family !== 'v0.4' &&
    from.facts.family !== to.facts.family
      ? conversionRemovalFindings(t)
      : { findings: [], before: [], after: [] };
  findings.push(...removal.findings);

  // Storage: every stored version must be served by the target. Live: what the API server recorded (a CRD that does
  // not exist stores nothing); offline: at least the storage version of `from`, which the API server always records.
  if (live === undefined)
    unknowns.push(
      `status.storedVersions of the Agent Sandbox CRDs (no cluster read: pass --kubeconfig; assumed only the storage versions of ${f})`,
    );
  const stored = (kind: SandboxKind): readonly string[] =>
    live !== undefined
      ? (live.storedVersions[kind] ?? [])
      : storageVersion(from, kind)
        ? [storageVersion(from, kind)!]
        : [];
  const blocked: SandboxKind[] = [];
  for (const kind of KINDS) {
    const missing = stored(kind).filter((v) => !served(to, kind).includes(v));
    if (missing.length > 0) {
      blocked.push(kind);
      findings.push({
        severity: 'block',
        topic: 'storage',
        reason: 'StoredVersionNotServed',
        message: `${kind}: objects are stored as ${missing.join(', ')}, which ${t} does not serve (it serves ${served(to, kind).join(', ')})`,
        operations: [...ALL_OPS],
        subject: { kind, storedVersions: missing, served: served(to, kind) },
      });
    }
    const sf = storageVersion(from, kind);
    const st = storageVersion(to, kind);
    if (missing.length === 0 && sf !== st && st !== undefined) {
      findings.push({
        severity: 'migrate',
        topic: 'storage',
        reason: 'StorageVersionChanged',
        message: `${kind}: storage version ${sf ?? 'none'} -> ${st}; existing objects stay stored as ${sf ?? 'none'} until rewritten`,
        operations: [...ALL_OPS],
        subject: { kind, before: sf, after: st },
      });
    }
    if (missing.length === 0 && live !== undefined && st !== undefined && stored(kind).some((v) => v !== st)) {
      findings.push({
        severity: 'migrate',
        topic: 'live',
        reason: 'StoredVersionsStale',
        message: `${kind}: status.storedVersions is [${stored(kind).join(', ')}]; after the ${direction === 'downgrade' ? 'downgrade' : 'upgrade'} rewrite every object and prune storedVersions to [${st}]`,
        operations: ['observe'],
        subject: { kind, storedVersions: stored(kind), served: [st] },
      });
    }
  }
  if (blocked.length > 0) {
    const target = (kind: SandboxKind): string | undefined => storageVersion(to, kind);
    // newest intermediate first, never one with a blocking defect: v0.4.6 -> v1.0.3 goes through v0.5.6, not v0.5.0
    const candidates = [
      from,
      ...[...intermediates]
        .filter((r) => !BLOCKING_DEFECTS.some((d) => d.releases.includes(r.facts.tag)))
        .sort((a, b) => compareTags(b.facts.tag, a.facts.tag)),
    ];
    const via = candidates.find((r) =>
      blocked.every((kind) => {
        const st = target(kind);
        return (
          st !== undefined &&
          stored(kind).every((v) => served(r, kind).includes(v)) &&
          served(r, kind).includes(st) &&
          storageVersion(r, kind) === st
        );
      }),
    );
    if (via === undefined) {
      blockPath.push(
        `no supported release both serves what is stored and stores what ${t} serves: stay on ${f}, or move the objects out (export, delete, re-create on ${t})`,
      );
    } else {
      const at = via.facts.tag;
      if (via !== from) {
        findings.push({
          severity: 'migrate',
          topic: 'advice',
          reason: 'IntermediateRelease',
          message: `${f} -> ${t} cannot be made directly: go through ${at}, which serves what is stored and stores what ${t} serves`,
          operations: [...ALL_OPS],
          source: 'docs/api-migration-guide.md@v1.0.3',
          subject: { storedVersions: [...new Set(blocked.flatMap((k) => stored(k)))], served: served(via, 'Sandbox') },
        });
        if (from.facts.family === 'v0.4')
          blockPath.push(
            `before leaving ${f}: create the warm pools the v1alpha1 claims convert to (plan-upgrade --to ${at} lists them as ClaimPoolMissing)`,
          );
        // One entry per set of served versions, with the kinds that have it.
        const bySet = new Map<string, SandboxKind[]>();
        for (const k of blocked)
          bySet.set(served(via, k).join('+'), [...(bySet.get(served(via, k).join('+')) ?? []), k]);
        const serves = [...bySet].map(([versions, kinds]) => `${versions} for ${kinds.join(', ')}`).join('; ');
        blockPath.push(`install the intermediate release ${at} (serves ${serves})`);
      }
      const versions = [...new Set(blocked.map(target))].join(', ');
      blockPath.push(
        `migrate storage at ${at}: rewrite every ${blocked.join(', ')} object so it is stored as ${versions} (agentplane migrate-storage --kubeconfig FILE shows what it would rewrite; add --apply to write)`,
      );
      blockPath.push(
        `prune status.storedVersions of the ${blocked.join(', ')} CRD(s) to [${versions}] (migrate-storage --apply does it once every object of a kind is rewritten and a re-list confirms the count)`,
      );
      blockPath.push(...removal.before, `install ${t}`, ...removal.after);
    }
  }

  // Live v1alpha1 claims convert to pools that must exist (`extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6`,
  // `docs/api-migration-guide.md@v0.5.6`).
  if (served(to, 'SandboxClaim').includes('v1beta1') && !served(from, 'SandboxClaim').includes('v1beta1')) {
    if (live === undefined)
      unknowns.push('v1alpha1 claims and warm pools (whether each claim converts to a pool that exists)');
    const pools = new Set(live?.pools ?? []);
    for (const claim of live?.claims ?? []) {
      const pool = convertedPoolName(claim);
      if (!pools.has(`${claim.namespace}/${pool}`)) {
        findings.push({
          severity: 'migrate',
          topic: 'live',
          reason: 'ClaimPoolMissing',
          message: `claim ${claim.namespace}/${claim.name} converts to warmPoolRef ${pool}, which does not exist: it would sit at Ready=False/WarmPoolNotFound`,
          operations: ['createFromTemplate', 'observe'],
          source: 'extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6',
          claim: { namespace: claim.namespace, name: claim.name, pool },
        });
      }
    }
  }

  // Blocking defects of the target, against what is live.
  for (const d of direction === 'same' ? [] : BLOCKING_DEFECTS.filter((x) => x.releases.includes(t))) {
    const cite = `${d.id}: ${d.message} (${d.source}, fixed in ${d.fixedIn}+)`;
    const warm = live?.warmClaims;
    if (warm === undefined) {
      unknowns.push(`warm-started claims (${d.id} blocks ${t} while any is active)`);
      findings.push({
        severity: 'review',
        topic: 'defect',
        reason: 'BlockingDefectUnread',
        message: `${cite}: blocks the move if warm-started claims are active; read them with --kubeconfig, or move to ${d.suggest}`,
        operations: ['createFromTemplate', 'observe'],
        source: d.source,
        subject: { defect: d.id },
      });
    } else if (warm.length === 0) {
      findings.push({
        severity: 'info',
        topic: 'defect',
        reason: 'BlockingDefectInactive',
        message: `${cite}: no warm-started claim is active, so it does not apply now`,
        operations: ['createFromTemplate', 'observe'],
        source: d.source,
        subject: { defect: d.id },
      });
    } else if (options.accept?.includes(d.id)) {
      accepted.push(d.id);
      findings.push({
        severity: 'review',
        topic: 'defect',
        reason: 'BlockingDefectAccepted',
        message: `${cite}: accepted with --accept ${d.id}; these claims restart cold: ${warm.join(', ')}`,
        operations: ['createFromTemplate', 'observe'],
        source: d.source,
        subject: { defect: d.id, claims: warm },
      });
    } else {
      findings.push({
        severity: 'block',
        topic: 'defect',
        reason: 'BlockingDefectActive',
        message: `${cite}: ${warm.length} warm-started claim(s) active: ${warm.join(', ')}`,
        operations: ['createFromTemplate', 'observe'],
        source: d.source,
        subject: { defect: d.id, claims: warm },
      });
      blockPath.push(
        `move to ${d.suggest} instead of ${t} (${d.id} is fixed in ${d.fixedIn}+), or accept the cold restarts with --accept ${d.id}`,
      );
    }
  }

  if (direction === 'upgrade' && from.facts.family === 'v0.4' && to.facts.family === 'v0.5') {
    findings.push({
      severity: 'migrate',
      topic: 'advice',
      reason: 'MigrationAdvised',
      message: `from v0.4.x upstream advises running migrate.sh --phase=bootstrap and going straight to >= v0.5.2${t === 'v0.5.0' ? ': prefer v0.5.6 over v0.5.0' : ''}`,
      operations: ['createFromTemplate'],
      source: 'docs/api-migration-guide.md@v0.5.6',
    });
  }
  for (const d of KNOWN_DEFECTS) {
    if (!d.releases.includes(t)) continue;
    const back =
      direction === 'downgrade' && !d.releases.includes(f) ? ` (absent from ${f}: the downgrade brings it back)` : '';
    findings.push({
      severity: 'info',
      topic: 'defect',
      reason: 'KnownDefect',
      message: `known defect of ${t}: ${d.message}${back}`,
      operations: d.operations,
      source: d.source,
      subject: { reintroduced: back !== '' },
    });
  }

  const certain: Exclude<UpgradeVerdict, 'unknown'> = findings.some((x) => x.severity === 'block')
    ? 'blocked'
    : findings.some((x) => x.severity === 'migrate')
      ? 'needs-migration'
      : 'safe';
  const verdict: UpgradeVerdict = certain !== 'blocked' && unknowns.length > 0 ? 'unknown' : certain;
  if (verdict === 'unknown')
    path.push(
      'read the live state first (plan-upgrade --kubeconfig FILE): the verdict depends on the live state listed as not read (`unknowns`)',
    );
  const install = direction === 'downgrade' ? `downgrade: install ${t} in place of ${f}` : `install ${t}`;
  if (certain === 'blocked') path.push(...blockPath);
  else if (certain === 'needs-migration') {
    const migrate = findings.filter((y) => y.severity === 'migrate');
    const moved = KINDS.filter(
      (k) => storageVersion(from, k) !== storageVersion(to, k) && storageVersion(to, k) !== undefined,
    );
    for (const x of migrate.filter((y) => y.topic === 'advice' && !REMOVAL_REASONS.has(y.reason))) path.push(x.message);
    if (migrate.some((y) => y.topic === 'schema'))
      path.push(
        `update manifests and clients that use the renamed, removed or retyped fields listed below${direction === 'downgrade' ? ` (fields ${t} does not define are pruned)` : ''}`,
      );
    for (const { claim: c } of migrate.filter((y) => y.reason === 'ClaimPoolMissing')) {
      if (c !== undefined)
        path.push(
          `before ${direction === 'downgrade' ? 'downgrading' : 'upgrading'}: claim ${c.namespace}/${c.name} converts to warmPoolRef ${c.pool}, which does not exist; create that pool or re-create the claim`,
        );
    }
    path.push(...removal.before, install, ...removal.after);
    const stale = KINDS.filter((k) => moved.includes(k) || stored(k).some((v) => v !== storageVersion(to, k)));
    if (stale.length > 0) {
      path.push(
        `migrate storage: rewrite every ${stale.join(', ')} object (a no-op update) so it is stored as ${storageVersion(to, stale[0]!)}`,
      );
      path.push(`prune status.storedVersions of the ${stale.join(', ')} CRD(s) to [${storageVersion(to, stale[0]!)}]`);
    }
  }
  return {
    from: f,
    to: t,
    direction,
    verdict,
    ...(verdict === 'unknown' ? { assumedVerdict: certain } : {}),
    unknowns,
    accepted,
    storedVersionsSource:
      live !== undefined
        ? `live (${live.source})`
        : `assumed: the storage versions of ${f} (pass --kubeconfig to read status.storedVersions)`,
    findings,
    path,
    schemaChanges,
  };
}

/** The supported releases other than `from` and `to`, for {@link planUpgrade}'s search of an intermediate release. */
export function intermediateTags(from: ReleaseTag, to: ReleaseTag): ReleaseTag[] {
  return SUPPORTED_RELEASES.filter((r) => r !== from && r !== to);
}
