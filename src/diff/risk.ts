/**
 * Risk rules: the labels reviewers look for in a manifest diff. Each rule reads one changed object pair (and, for
 * warm pools, the head set) and says in plain words what the change does.
 *
 * | rule | fires on |
 * |---|---|
 * | `crd-removed` | a CRD removed: deleting it deletes every object of its kind in the whole cluster |
 * | `crd-schema-change` | a CRD whose versions, schemas, printer columns or conversion changed (field-level summary from `diffCrdSchemas`); the message names versions no longer served; `subject.breaking` labels a version no longer served and a conversion webhook removed (v0.5 -> v1.0, `k8s/crds/*.yaml@v1.0.3`) |
 * | `rbac-widening` | a (Cluster)Role granting a verb/resource it did not, or a binding gaining subjects or changing its role |
 * | `networkpolicy-widening` | a NetworkPolicy removed, losing a policy type, gaining or changing a rule or its pod selector; a SandboxTemplate's `networkPolicy` or `networkPolicyManagement` changing |
 * | `runtimeclass-change` | a RuntimeClass removed or its handler/scheduling/overhead changed; a pod template's `runtimeClassName` changed or dropped (isolation downgrade) |
 * | `image-change` | a container image changed |
 * | `release-change` | the `app.kubernetes.io/version` label (the pinned release) changed |
 * | `warm-pool-roll` | a SandboxTemplate blueprint change that makes the members of a warm pool using it stale, or a pool pointed at another template, with the pool's update strategy |
 * | `immutable-field` | a change the API server refuses on update (`IMMUTABLE_FIELDS`): a Sandbox's `spec.volumeClaimTemplates`, a Job's pod template or selector, a workload's selector, a binding's `roleRef`; not for a Job its delivery replaces (an Argo CD hook with `BeforeHookCreation`, Flux's per-object force annotation, Argo CD `Force=true,Replace=true`; a Flux Job named by its template hash is a new object) |
 * | `secret-change` | a Secret's data changed (values redacted) |
 */
import { appendAll } from '../model/arrays.js';
import { isPlainObject } from '../model/objects.js';
import type { KubeObject } from '../releases/index.js';
import { diffCrdSchemas } from '../releases/schema-diff.js';
import type { ObjectKey } from './identity.js';
import type { FieldChange } from './structural.js';

/**
 * The head set, for rules that look beyond one pair, by key: `poolsUsing` gives the keys of the SandboxWarmPools of
 * `namespace` whose `spec.sandboxTemplateRef.name` is `template` (in head order); `normalized` the normalized copy of
 * an object on demand.
 */
export interface HeadObjects {
  poolsUsing(namespace: string | undefined, template: string | undefined): readonly ObjectKey[];
  normalized(key: ObjectKey): KubeObject;
}

export type RiskRule =
  | 'crd-removed'
  | 'crd-schema-change'
  | 'rbac-widening'
  | 'networkpolicy-widening'
  | 'runtimeclass-change'
  | 'image-change'
  | 'release-change'
  | 'warm-pool-roll'
  | 'immutable-field'
  | 'secret-change';

/** What a risk is about, as typed fields: the message says the same for people, programs and tests read these. */
export interface RiskSubject {
  /** What happened to the object. */
  readonly change?: 'added' | 'removed' | 'changed';
  /** `rbac-widening`: new grants or subjects; whether a binding's roleRef changed. */
  readonly count?: number;
  readonly roleChanged?: boolean;
  /** `runtimeclass-change` (runtimeClassName; absent `after`: dropped) and `release-change`: the values either side. */
  readonly before?: string;
  readonly after?: string;
  /** `warm-pool-roll`: the pool, the template it now uses, the one it used (a re-pointed pool), its update strategy. */
  readonly pool?: string;
  readonly template?: string;
  readonly previousTemplate?: string;
  readonly strategy?: string;
  /** CRD risks: the kind, the `group/version`s no longer served, the number of schema changes. */
  readonly kind?: string;
  readonly unserved?: readonly string[];
  readonly changes?: number;
  /** `immutable-field`: the immutable fields the change touches (the table `IMMUTABLE_FIELDS` in src/diff/risk.ts), e.g. `spec.template`. */
  readonly fields?: readonly string[];
  /**
   * `crd-schema-change`: what breaks clients or stored objects: `version-unserved` (a `group/version` no longer served:
   * its requests fail), `conversion-removed` (strategy `Webhook` -> `None`: nothing converts between versions any more,
   * and a leftover `caBundle` owned by another field manager makes a server-side apply invalid). Absent when nothing.
   */
  readonly breaking?: readonly CrdBreak[];
}

/** A breaking CRD change (see {@link RiskSubject.breaking}). */
export type CrdBreak = 'version-unserved' | 'conversion-removed';

/** One risk label on one object. `details` are extra lines (field-level summary, rules granted, ...). */
export interface Risk {
  readonly rule: RiskRule;
  readonly object: ObjectKey;
  readonly message: string;
  readonly details: readonly string[];
  readonly subject?: RiskSubject;
}

/** A compared pair: normalized (and redacted) objects and their field changes. */
export interface ComparedPair {
  readonly key: ObjectKey;
  readonly base?: KubeObject;
  readonly head?: KubeObject;
  readonly fields: readonly FieldChange[];
}

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isPlainObject(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strs = (v: unknown): string[] => list(v).map(String);

const POD_TEMPLATE_KINDS: Readonly<Record<string, readonly string[]>> = {
  Sandbox: ['spec', 'podTemplate', 'spec'],
  SandboxTemplate: ['spec', 'podTemplate', 'spec'],
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  Pod: ['spec'],
};

function podSpec(obj: KubeObject | undefined): Rec | undefined {
  if (obj === undefined) return undefined;
  const path = POD_TEMPLATE_KINDS[obj.kind];
  if (path === undefined) return undefined;
  let node: unknown = obj;
  for (const k of path) node = rec(node)[k];
  return rec(node);
}

function images(spec: Rec | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const group of ['initContainers', 'containers']) {
    for (const c of list(spec?.[group])) {
      const r = rec(c);
      if (typeof r.image === 'string') out.set(`${group}/${String(r.name)}`, r.image);
    }
  }
  return out;
}

/** `apiGroup resource verb [resourceName]` grants of a Role/ClusterRole. */
function grants(role: KubeObject | undefined): Set<string> {
  const out = new Set<string>();
  for (const rule of list(role?.rules)) {
    const r = rec(rule);
    const names = strs(r.resourceNames);
    for (const verb of strs(r.verbs)) {
      for (const url of strs(r.nonResourceURLs)) out.add(`url ${url} ${verb}`);
      for (const g of strs(r.apiGroups)) {
        for (const res of strs(r.resources)) {
          if (names.length === 0) out.add(`${g || 'core'} ${res} ${verb} *`);
          for (const n of names) out.add(`${g || 'core'} ${res} ${verb} ${n}`);
        }
      }
    }
  }
  return out;
}

function covered(grant: string, base: Set<string>): boolean {
  if (base.has(grant)) return true;
  const [g, res, verb, name] = grant.split(' ');
  for (const b of base) {
    const [bg, bres, bverb, bname] = b.split(' ');
    if (
      (bg === g || bg === '*') &&
      (bres === res || bres === '*') &&
      (bverb === verb || bverb === '*') &&
      (bname === name || bname === '*')
    )
      return true;
  }
  return false;
}

function rbacRisk(p: ComparedPair): Risk | undefined {
  const kind = (p.head ?? p.base)!.kind;
  if (p.head === undefined) return undefined;
  if (kind === 'Role' || kind === 'ClusterRole') {
    const before = grants(p.base);
    const wider = [...grants(p.head)].filter((g) => !covered(g, before));
    const aggregation =
      p.head.aggregationRule !== undefined &&
      JSON.stringify(p.head.aggregationRule) !== JSON.stringify(p.base?.aggregationRule);
    if (wider.length === 0 && !aggregation) return undefined;
    const details = wider.map((g) => `grants ${g.replace(/ \*$/, '')}`);
    if (aggregation) details.push('aggregationRule added or changed: the role grows with every matching ClusterRole');
    return {
      rule: 'rbac-widening',
      object: p.key,
      message: `${kind} ${p.base === undefined ? 'added' : 'widened'}: ${wider.length} new grant(s)`,
      details,
      subject: { change: p.base === undefined ? 'added' : 'changed', count: wider.length },
    };
  }
  if (kind === 'RoleBinding' || kind === 'ClusterRoleBinding') {
    const subj = (o: KubeObject | undefined): Set<string> =>
      new Set(
        list(o?.subjects).map((s) => {
          const r = rec(s);
          return `${String(r.kind)} ${r.namespace ? `${String(r.namespace)}/` : ''}${String(r.name)}`;
        }),
      );
    const before = subj(p.base);
    const added = [...subj(p.head)].filter((s) => !before.has(s));
    const roleA = JSON.stringify(p.base?.roleRef);
    const roleB = JSON.stringify(p.head.roleRef);
    const roleChanged = p.base !== undefined && roleA !== roleB;
    if (added.length === 0 && !roleChanged) return undefined;
    const details = added.map((s) => `binds ${s}`);
    if (roleChanged) details.push(`roleRef ${roleA} -> ${roleB}`);
    return {
      rule: 'rbac-widening',
      object: p.key,
      message: `${kind} ${p.base === undefined ? 'added' : 'changed'}: ${added.length} new subject(s)${roleChanged ? ', role changed' : ''}`,
      details,
      subject: { change: p.base === undefined ? 'added' : 'changed', count: added.length, roleChanged },
    };
  }
  return undefined;
}

function netpolRisk(p: ComparedPair): Risk | undefined {
  const kind = (p.head ?? p.base)!.kind;
  if (kind === 'NetworkPolicy') {
    if (p.head === undefined)
      return {
        rule: 'networkpolicy-widening',
        object: p.key,
        message: 'NetworkPolicy removed: the pods it selected lose its restrictions',
        details: [],
        subject: { change: 'removed' },
      };
    if (p.base === undefined) return undefined;
    const details: string[] = [];
    const types = (o: KubeObject | undefined): string[] => strs(rec(o?.spec).policyTypes);
    for (const t of types(p.base))
      if (!types(p.head).includes(t))
        details.push(`policyTypes no longer include ${t}: that direction is unrestricted`);
    for (const dir of ['ingress', 'egress']) {
      const before = new Set(list(rec(p.base.spec)[dir]).map((r) => JSON.stringify(r)));
      for (const r of list(rec(p.head.spec)[dir]))
        if (!before.has(JSON.stringify(r))) details.push(`${dir} rule added or changed: ${JSON.stringify(r)}`);
    }
    if (JSON.stringify(rec(p.base.spec).podSelector) !== JSON.stringify(rec(p.head.spec).podSelector))
      details.push('podSelector changed: a different set of pods is covered');
    return details.length === 0
      ? undefined
      : { rule: 'networkpolicy-widening', object: p.key, message: 'NetworkPolicy may allow more traffic', details };
  }
  if (kind === 'SandboxTemplate' && p.base !== undefined && p.head !== undefined) {
    const details: string[] = [];
    const mode = (o: KubeObject): string => String(rec(o.spec).networkPolicyManagement ?? 'Managed');
    if (mode(p.base) !== mode(p.head))
      details.push(
        `networkPolicyManagement ${mode(p.base)} -> ${mode(p.head)}${mode(p.head) === 'Unmanaged' ? ': the controller deletes its policy; sandbox pods rely on policies declared elsewhere' : ''}`,
      );
    if (p.fields.some((f) => f.path.startsWith('spec.networkPolicy.') || f.path === 'spec.networkPolicy'))
      details.push('spec.networkPolicy changed: the custom rules replace the default ones wholesale');
    return details.length === 0
      ? undefined
      : { rule: 'networkpolicy-widening', object: p.key, message: 'sandbox network policy changed', details };
  }
  return undefined;
}

function runtimeClassRisk(p: ComparedPair): Risk | undefined {
  const obj = (p.head ?? p.base)!;
  if (obj.kind === 'RuntimeClass') {
    if (p.head === undefined)
      return {
        rule: 'runtimeclass-change',
        object: p.key,
        message: `RuntimeClass ${String(obj.metadata?.name)} removed: pods naming it fail to start or templates fall back to another runtime`,
        details: [],
        subject: { change: 'removed' },
      };
    if (p.base === undefined) return undefined;
    const details = p.fields
      .filter((f) => /^(handler|scheduling|overhead)/.test(f.path))
      .map((f) => `${f.path}: ${JSON.stringify(f.before)} -> ${JSON.stringify(f.after)}`);
    return details.length === 0
      ? undefined
      : {
          rule: 'runtimeclass-change',
          object: p.key,
          message: 'RuntimeClass changed: isolation or placement of every pod using it changes',
          details,
        };
  }
  if (p.base === undefined || p.head === undefined) return undefined;
  const a = podSpec(p.base)?.runtimeClassName;
  const b = podSpec(p.head)?.runtimeClassName;
  if (a === b || a === undefined) return undefined;
  return {
    rule: 'runtimeclass-change',
    object: p.key,
    message:
      b === undefined
        ? `runtimeClassName ${String(a)} dropped: pods fall back to the node's default runtime (isolation downgrade)`
        : `runtimeClassName ${String(a)} -> ${String(b)}: check the isolation of the new runtime`,
    details: [],
    subject: { change: 'changed', before: String(a), ...(b === undefined ? {} : { after: String(b) }) },
  };
}

function imageRisk(p: ComparedPair): Risk | undefined {
  if (p.base === undefined || p.head === undefined) return undefined;
  const a = images(podSpec(p.base));
  const b = images(podSpec(p.head));
  const details: string[] = [];
  for (const [c, img] of b) if (a.has(c) && a.get(c) !== img) details.push(`${c}: ${a.get(c)} -> ${img}`);
  for (const [c, img] of b) if (!a.has(c)) details.push(`${c} added: ${img}`);
  return details.length === 0
    ? undefined
    : { rule: 'image-change', object: p.key, message: `${details.length} container image(s) changed`, details };
}

function releaseRisk(p: ComparedPair): Risk | undefined {
  const label = 'app.kubernetes.io/version';
  const a = rec(p.base?.metadata?.labels)[label];
  const b = rec(p.head?.metadata?.labels)[label];
  if (p.base === undefined || p.head === undefined || a === b) return undefined;
  return {
    rule: 'release-change',
    object: p.key,
    message: `release ${String(a ?? 'none')} -> ${String(b ?? 'none')}`,
    details: [],
    subject: {
      change: 'changed',
      ...(a === undefined ? {} : { before: String(a) }),
      ...(b === undefined ? {} : { after: String(b) }),
    },
  };
}

/** Blueprint fields of a template: a change there makes pool members stale (label/annotation-only edits do not). */
const BLUEPRINT = /^spec\.(podTemplate\.spec|volumeClaimTemplates|service)(\.|\[|$)/;

function rollEffect(strategy: string): string {
  return strategy === 'Recreate'
    ? 'Recreate: unclaimed members are deleted and refilled from the new template now; claimed sandboxes are untouched'
    : 'OnReplenish: stale unclaimed members stay until claimed or deleted, so claims may still get the old template';
}

const strategyOf = (pool: KubeObject): string => String(rec(rec(pool.spec).updateStrategy).type ?? 'OnReplenish');

function warmPoolRisks(p: ComparedPair, head: HeadObjects): Risk[] {
  if (
    p.base !== undefined &&
    p.head?.kind === 'SandboxWarmPool' &&
    p.fields.some((f) => f.path.startsWith('spec.sandboxTemplateRef'))
  ) {
    const from = String(rec(rec(p.base.spec).sandboxTemplateRef).name);
    const to = String(rec(rec(p.head.spec).sandboxTemplateRef).name);
    return [
      {
        rule: 'warm-pool-roll',
        object: p.key,
        message: `warm pool ${String(p.head.metadata?.name)} now uses template ${to} instead of ${from}: pool rollout required (strategy: ${strategyOf(p.head)})`,
        details: [rollEffect(strategyOf(p.head))],
        subject: {
          change: 'changed',
          pool: String(p.head.metadata?.name),
          template: to,
          previousTemplate: from,
          strategy: strategyOf(p.head),
        },
      },
    ];
  }
  if (p.base === undefined || p.head?.kind !== 'SandboxTemplate') return [];
  if (!p.fields.some((f) => BLUEPRINT.test(f.path))) return [];
  const name = p.head.metadata?.name;
  const ns = p.head.metadata?.namespace;
  const out: Risk[] = [];
  const env = p.key.slice(0, p.key.indexOf(':') + 1);
  for (const key of head.poolsUsing(ns, name)) {
    if (!key.startsWith(env)) continue;
    const pool = head.normalized(key);
    const strategy = strategyOf(pool);
    out.push({
      rule: 'warm-pool-roll',
      object: key,
      message: `template ${String(name)} changed: pool rollout required for warm pool ${String(pool.metadata?.name)} (strategy: ${strategy})`,
      details: [rollEffect(strategy)],
      subject: { change: 'changed', pool: String(pool.metadata?.name), template: String(name), strategy },
    });
  }
  return out;
}

/** A field the API server refuses to change on update: the kind, the field path (dotted, from the root), the source. */
interface ImmutableField {
  readonly kind: string;
  readonly field: string;
  readonly source: string;
  /** What to do instead of updating. */
  readonly instead: string;
}

/** Immutable fields of the kinds AgentPlane writes. */
export const IMMUTABLE_FIELDS: readonly ImmutableField[] = [
  {
    kind: 'Sandbox',
    field: 'spec.volumeClaimTemplates',
    source: 'api/v1beta1/sandbox_types.go@v0.5.6',
    instead: 'delete and recreate the Sandbox (its PVCs and data go with it)',
  },
  ...['spec.template', 'spec.selector', 'spec.completionMode'].map((field) => ({
    kind: 'Job',
    field,
    source: 'pkg/apis/batch/validation/validation.go@v1.31.0 (ValidateJobSpecUpdate)',
    instead:
      'delete the Job before applying, or deliver it so that a change is a new Job (VerifierJob delivery argocd or flux)',
  })),
  ...['Deployment', 'StatefulSet', 'DaemonSet'].map((kind) => ({
    kind,
    field: 'spec.selector',
    source: 'pkg/apis/apps/validation/validation.go@v1.31.0',
    instead: `delete and recreate the ${kind} (its pods are replaced)`,
  })),
  ...['spec.volumeClaimTemplates', 'spec.serviceName', 'spec.podManagementPolicy'].map((field) => ({
    kind: 'StatefulSet',
    field,
    source: 'pkg/apis/apps/validation/validation.go@v1.31.0 (ValidateStatefulSetUpdate)',
    instead: 'delete and recreate the StatefulSet',
  })),
  ...['RoleBinding', 'ClusterRoleBinding'].map((kind) => ({
    kind,
    field: 'roleRef',
    source: 'pkg/apis/rbac/validation/validation.go@v1.31.0 (ValidateRoleBindingUpdate)',
    instead: `delete and recreate the ${kind} (its subjects lose the rights in between)`,
  })),
];

/** Whether the tool delivering `obj` deletes and recreates it on change, so an immutable field may change. */
function replacedOnChange(obj: KubeObject): string | undefined {
  const a = rec(obj.metadata?.annotations);
  // Argo CD deletes a hook with this policy before creating it again (resource hooks, hook deletion policies).
  const policies = String(a['argocd.argoproj.io/hook-delete-policy'] ?? '')
    .split(',')
    .map((x) => x.trim());
  if (a['argocd.argoproj.io/hook'] !== undefined && policies.includes('BeforeHookCreation'))
    return 'an Argo CD hook with BeforeHookCreation is deleted and created again';
  // Flux recreates an object it cannot patch when it carries this annotation (fluxcd/kustomize-controller#787).
  if (a['kustomize.toolkit.fluxcd.io/force'] === 'enabled')
    return 'Flux recreates it (kustomize.toolkit.fluxcd.io/force: enabled)';
  const options = String(a['argocd.argoproj.io/sync-options'] ?? '')
    .split(',')
    .map((x) => x.trim());
  if (options.includes('Force=true') && options.includes('Replace=true'))
    return 'Argo CD deletes and recreates it (sync-options Force=true,Replace=true)';
  return undefined;
}

const under = (path: string, field: string): boolean =>
  path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);

function immutableRisk(p: ComparedPair): Risk | undefined {
  if (p.base === undefined || p.head === undefined) return undefined;
  const kind = p.head.kind;
  const fields = IMMUTABLE_FIELDS.filter((f) => f.kind === kind);
  if (fields.length === 0) return undefined;
  const hit = fields.filter((f) => p.fields.some((c) => under(c.path, f.field)));
  if (hit.length === 0 || replacedOnChange(p.head) !== undefined) return undefined;
  const paths = p.fields.filter((c) => hit.some((f) => under(c.path, f.field))).map((c) => c.path);
  return {
    rule: 'immutable-field',
    object: p.key,
    message: `${kind} ${hit.map((f) => f.field).join(', ')} ${hit.length === 1 ? 'is' : 'are'} immutable: the update is rejected; ${hit[0]!.instead}`,
    details: paths,
    subject: { change: 'changed', kind, fields: hit.map((f) => f.field) },
  };
}

interface CrdView {
  group?: string;
  names?: { kind?: string };
  versions?: Array<{ name?: string; served?: boolean }>;
}

/** `group/version` of each served version of a CRD. */
function servedApiVersions(crd: KubeObject): string[] {
  const spec = rec(crd.spec) as CrdView;
  return (spec.versions ?? []).filter((v) => v.served === true).map((v) => `${String(spec.group)}/${String(v.name)}`);
}

function crdRisk(p: ComparedPair): Risk | undefined {
  const crd = (p.head ?? p.base)!;
  if (crd.kind !== 'CustomResourceDefinition' || p.base === undefined) return undefined;
  const kind = String((rec(crd.spec) as CrdView).names?.kind ?? crd.metadata?.name);
  if (p.head === undefined) {
    // Kubernetes garbage-collects the custom objects of a deleted CRD, in every namespace, with no undo.
    return {
      rule: 'crd-removed',
      object: p.key,
      message: `CRD ${String(crd.metadata?.name)} removed: every ${kind} in the cluster, in all namespaces, is deleted with it`,
      details: [`served versions: ${servedApiVersions(p.base).join(', ') || 'none'}`],
      subject: { change: 'removed', kind, unserved: servedApiVersions(p.base) },
    };
  }
  const changes = diffCrdSchemas(p.base, p.head);
  if (changes.length === 0) return undefined;
  const stillServed = new Set(servedApiVersions(p.head));
  const dropped = servedApiVersions(p.base).filter((v) => !stillServed.has(v));
  const removed = changes.some((c) => c.change === 'version-removed');
  const lost =
    dropped.length === 0
      ? ''
      : `; ${dropped.join(', ')} no longer served: requests and manifests using that apiVersion fail${removed ? ' (the API server rejects removing a version still listed in status.storedVersions)' : ''}`;
  const conversionRemoved = changes.some(
    (c) => c.change === 'conversion-changed' && c.before === 'Webhook' && c.after !== 'Webhook',
  );
  const breaking: CrdBreak[] = [
    ...(dropped.length > 0 ? (['version-unserved'] as const) : []),
    ...(conversionRemoved ? (['conversion-removed'] as const) : []),
  ];
  const unhooked = conversionRemoved
    ? '; conversion webhook removed: nothing converts between versions any more (merge-patch the conversion to None before a server-side apply)'
    : '';
  return {
    rule: 'crd-schema-change',
    object: p.key,
    message: `${breaking.length > 0 ? 'breaking: ' : ''}CRD schema changed: ${changes.length} change(s)${lost}${unhooked}`,
    details: changes.map((c) => c.summary),
    subject: {
      change: 'changed',
      kind,
      unserved: dropped,
      changes: changes.length,
      ...(breaking.length > 0 ? { breaking } : {}),
    },
  };
}

function secretRisk(p: ComparedPair): Risk | undefined {
  if ((p.head ?? p.base)!.kind !== 'Secret' || p.base === undefined || p.head === undefined) return undefined;
  const keys = p.fields.filter((f) => f.path.startsWith('data')).map((f) => f.path);
  return keys.length === 0
    ? undefined
    : { rule: 'secret-change', object: p.key, message: 'Secret data changed (values redacted)', details: keys };
}

/** All risks of a set of compared pairs; `head` is the whole head set (pools are looked up there). */
export function assessRisks(pairs: readonly ComparedPair[], head: HeadObjects): Risk[] {
  const out: Risk[] = [];
  for (const p of pairs) {
    for (const r of [
      crdRisk(p),
      rbacRisk(p),
      netpolRisk(p),
      runtimeClassRisk(p),
      imageRisk(p),
      releaseRisk(p),
      immutableRisk(p),
      secretRisk(p),
    ])
      if (r !== undefined) out.push(r);
    appendAll(out, warmPoolRisks(p, head));
  }
  return out;
}
