/**
 * Field-level diff of CustomResourceDefinition schemas: between two pinned releases (for `plan-upgrade`) or between
 * the base and head CRD objects of a manifest diff (for the `crd-schema-change` risk).
 *
 * Each version's `openAPIV3Schema` is flattened into `path -> facts` (type, format, default, enum, required,
 * x-kubernetes-* keywords, CEL rules); paths read `spec.podTemplate.spec.containers[].image`, map values `{}`.
 * Added and removed subtrees are reported once at their root. A removed and an added field under the same parent
 * with identical sub-schemas (same {@link schemaFingerprint}) are reported as one rename; renames between the old
 * and new storage version that upstream's conversion performs are named in {@link KNOWN_RENAMES}.
 */
import { canonicalJson, schemaFingerprint, type JsonSchema } from './crd-schema.js';
import type { KubeObject } from './types.js';

export type SchemaChangeKind =
  | 'field-added'
  | 'field-removed'
  | 'field-renamed'
  | 'type-changed'
  | 'default-changed'
  | 'enum-changed'
  | 'required-changed'
  | 'validation-changed'
  | 'version-added'
  | 'version-removed'
  | 'served-changed'
  | 'storage-changed'
  | 'deprecated-changed'
  | 'subresource-changed'
  | 'printer-column-added'
  | 'printer-column-removed'
  | 'printer-column-changed'
  | 'conversion-changed';

/** One schema change. `version` is the CRD version it is in (`*` for CRD-level changes); `path` is empty for version-level ones. */
export interface SchemaChange {
  readonly kind: string;
  readonly version: string;
  readonly change: SchemaChangeKind;
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
  /** One line for people: `SandboxWarmPool v1beta1 spec.replicas: default none -> 1`. */
  readonly summary: string;
  /** The summary after its `<kind> <version>` (or `<kind>`) subject, e.g. ` spec.replicas: default none -> 1`. */
  readonly detail: string;
}

/** `summary` and `detail` of a change: the subject (`<kind> <version>`, or `<kind>` for CRD-level changes) and the rest. */
function said(kind: string, version: string | undefined, detail: string): { summary: string; detail: string } {
  return { summary: `${kind}${version === undefined ? '' : ` ${version}`}${detail}`, detail };
}

/** The facts of one flattened schema node that a client or the API server acts on. */
interface FieldFacts {
  readonly type: string;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly required: boolean;
  readonly validation?: string;
  /** The schema node itself (fingerprinted only when a rename is looked for). */
  readonly node: JsonSchema;
}

/** A field renamed by upstream's conversion between the old and the new storage version. */
export interface KnownRename {
  readonly kind: string;
  readonly from: string;
  readonly to: string;
  readonly source: string;
}

/** Renames performed by the v1alpha1 <-> v1beta1 conversion (v0.5.x). */
export const KNOWN_RENAMES: readonly KnownRename[] = [
  {
    kind: 'Sandbox',
    from: 'spec.replicas',
    to: 'spec.operatingMode',
    source: 'api/v1alpha1/sandbox_conversion.go@v0.5.6',
  },
  {
    kind: 'SandboxClaim',
    from: 'spec.sandboxTemplateRef',
    to: 'spec.warmPoolRef',
    source: 'extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6',
  },
];

type Schema = JsonSchema & {
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  required?: string[];
};

function typeOf(s: Schema): string {
  if (s['x-kubernetes-int-or-string'] === true) return 'int-or-string';
  const t = s.type ?? (s['x-kubernetes-preserve-unknown-fields'] === true ? 'any' : 'object');
  const f = typeof s.format === 'string' ? `/${s.format}` : '';
  const list = typeof s['x-kubernetes-list-type'] === 'string' ? ` (${String(s['x-kubernetes-list-type'])} list)` : '';
  return `${t}${f}${list}`;
}

function validationOf(s: Schema): string | undefined {
  const parts: Record<string, unknown> = {};
  for (const k of [
    'x-kubernetes-validations',
    'minimum',
    'maximum',
    'pattern',
    'maxLength',
    'minLength',
    'maxItems',
    'minItems',
  ]) {
    if (s[k] !== undefined) parts[k] = s[k];
  }
  return Object.keys(parts).length === 0 ? undefined : canonicalJson(parts);
}

/**
 * Flattened schemas by object: one CRD version's schema is compared more than once when the storage version moves
 * (as a shared version and as the old storage version), and flattening a PodSpec-sized schema is the costly part.
 * Callers never mutate the maps.
 */
const flattened = new WeakMap<JsonSchema, Map<string, FieldFacts>>();

/** Flattens a schema into `path -> facts`. */
function flattenSchema(schema: JsonSchema): Map<string, FieldFacts> {
  const known = flattened.get(schema);
  if (known !== undefined) return known;
  const out = new Map<string, FieldFacts>();
  flattened.set(schema, out);
  const walk = (s: Schema, path: string, required: boolean): void => {
    if (path !== '') {
      const validation = validationOf(s);
      out.set(path, {
        type: typeOf(s),
        required,
        node: s,
        ...(s.default !== undefined ? { default: s.default } : {}),
        ...(Array.isArray(s.enum) ? { enum: s.enum } : {}),
        ...(validation !== undefined ? { validation } : {}),
      });
    }
    const req = new Set(s.required ?? []);
    for (const [name, child] of Object.entries(s.properties ?? {}))
      walk(child, path === '' ? name : `${path}.${name}`, req.has(name));
    if (s.items !== undefined) walk(s.items, `${path}[]`, false);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${path}{}`, false);
  };
  walk(schema as Schema, '', false);
  return out;
}

function parentOf(path: string): string {
  const m = /^(.*?)(?:\.[^.[\]{}]+|\[\]|\{\})$/.exec(path);
  return m?.[1] ?? '';
}

function lastSegment(path: string): string {
  return path.slice(parentOf(path).length).replace(/^\./, '');
}

/** Keeps only the roots of a set of paths (drops paths whose ancestor is in the set). */
function roots(paths: readonly string[]): string[] {
  const set = new Set(paths);
  return paths.filter((p) => {
    for (let q = parentOf(p); q !== ''; q = parentOf(q)) if (set.has(q)) return false;
    return true;
  });
}

const show = (v: unknown): string => (v === undefined ? 'none' : JSON.stringify(v));

/** Validation keywords in short: CEL rules by their message, bounds and patterns by name and value. */
function describeValidation(v: string | undefined): string {
  if (v === undefined) return 'none';
  const parsed = JSON.parse(v) as Record<string, unknown>;
  return Object.entries(parsed)
    .map(([k, x]) =>
      k === 'x-kubernetes-validations'
        ? `CEL [${(x as Array<{ message?: string; rule?: string }>).map((r) => JSON.stringify(r.message ?? r.rule)).join(', ')}]`
        : `${k}=${JSON.stringify(x)}`,
    )
    .join(', ');
}

/**
 * Field-level changes between two schemas of one kind. `label` names the versions compared, e.g. `v1beta1` or
 * `v1alpha1 -> v1beta1` when comparing the old storage version with the new one.
 */
export function diffSchemas(kind: string, label: string, before: JsonSchema, after: JsonSchema): SchemaChange[] {
  const a = flattenSchema(before);
  const b = flattenSchema(after);
  const removed = roots([...a.keys()].filter((p) => !b.has(p)));
  const added = roots([...b.keys()].filter((p) => !a.has(p)));
  const out: SchemaChange[] = [];
  const renamedFrom = new Set<string>();
  const renamedTo = new Set<string>();
  for (const known of KNOWN_RENAMES.filter((r) => r.kind === kind)) {
    if (removed.includes(known.from) && added.includes(known.to)) {
      renamedFrom.add(known.from);
      renamedTo.add(known.to);
      out.push({
        kind,
        version: label,
        change: 'field-renamed',
        path: known.to,
        before: known.from,
        after: known.to,
        ...said(kind, label, ` ${known.from} renamed to ${known.to} (${known.source})`),
      });
    }
  }
  for (const from of removed) {
    if (renamedFrom.has(from)) continue;
    const twin = added.find(
      (to) =>
        !renamedTo.has(to) &&
        parentOf(to) === parentOf(from) &&
        schemaFingerprint(b.get(to)?.node) === schemaFingerprint(a.get(from)?.node),
    );
    if (twin === undefined) continue;
    renamedFrom.add(from);
    renamedTo.add(twin);
    out.push({
      kind,
      version: label,
      change: 'field-renamed',
      path: twin,
      before: from,
      after: twin,
      ...said(kind, label, ` ${from} renamed to ${lastSegment(twin)} (same schema)`),
    });
  }
  for (const p of removed) {
    if (!renamedFrom.has(p))
      out.push({
        kind,
        version: label,
        change: 'field-removed',
        path: p,
        before: a.get(p)?.type,
        ...said(kind, label, ` ${p} removed`),
      });
  }
  for (const p of added) {
    if (renamedTo.has(p)) continue;
    const f = b.get(p)!;
    const req = f.required ? ', required' : '';
    const def = f.default !== undefined ? `, default ${show(f.default)}` : '';
    out.push({
      kind,
      version: label,
      change: 'field-added',
      path: p,
      after: f.type,
      ...said(kind, label, ` ${p} added (${f.type}${req}${def})`),
    });
  }
  for (const [p, fa] of a) {
    const fb = b.get(p);
    if (fb === undefined) continue;
    if (fa.type !== fb.type)
      out.push({
        kind,
        version: label,
        change: 'type-changed',
        path: p,
        before: fa.type,
        after: fb.type,
        ...said(kind, label, ` ${p}: type ${fa.type} -> ${fb.type}`),
      });
    if (canonicalJson(fa.default) !== canonicalJson(fb.default))
      out.push({
        kind,
        version: label,
        change: 'default-changed',
        path: p,
        before: fa.default,
        after: fb.default,
        ...said(kind, label, ` ${p}: default ${show(fa.default)} -> ${show(fb.default)}`),
      });
    if (canonicalJson(fa.enum) !== canonicalJson(fb.enum))
      out.push({
        kind,
        version: label,
        change: 'enum-changed',
        path: p,
        before: fa.enum,
        after: fb.enum,
        ...said(kind, label, ` ${p}: allowed values ${show(fa.enum)} -> ${show(fb.enum)}`),
      });
    if (fa.required !== fb.required)
      out.push({
        kind,
        version: label,
        change: 'required-changed',
        path: p,
        before: fa.required,
        after: fb.required,
        ...said(kind, label, ` ${p}: ${fb.required ? 'now required' : 'no longer required'}`),
      });
    if (fa.validation !== fb.validation)
      out.push({
        kind,
        version: label,
        change: 'validation-changed',
        path: p,
        before: fa.validation,
        after: fb.validation,
        ...said(
          kind,
          label,
          ` ${p}: validation ${describeValidation(fa.validation)} -> ${describeValidation(fb.validation)}`,
        ),
      });
  }
  return out;
}

interface CrdVersionView {
  name: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  subresources?: Record<string, unknown>;
  additionalPrinterColumns?: Array<{ name: string; jsonPath?: string; type?: string }>;
  schema?: { openAPIV3Schema?: JsonSchema };
}

function versionsOf(crd: KubeObject | undefined): CrdVersionView[] {
  const spec = crd?.spec as { versions?: CrdVersionView[] } | undefined;
  return spec?.versions ?? [];
}

function kindOf(crd: KubeObject | undefined): string {
  const spec = crd?.spec as { names?: { kind?: string } } | undefined;
  return spec?.names?.kind ?? crd?.metadata?.name ?? 'CustomResourceDefinition';
}

function conversionOf(crd: KubeObject | undefined): string {
  const spec = crd?.spec as { conversion?: { strategy?: string } } | undefined;
  return crd === undefined ? 'absent' : (spec?.conversion?.strategy ?? 'None');
}

function storageOf(crd: KubeObject | undefined): CrdVersionView | undefined {
  return versionsOf(crd).find((v) => v.storage === true);
}

/**
 * All changes between two CRD objects of the same kind: versions added/removed, served/storage/deprecated flags,
 * subresources, printer columns, conversion strategy, and per-version field changes. When the storage version
 * moves, the old storage schema is also compared with the new one (label `old -> new`), which is where
 * conversion renames show. Either side may be undefined (CRD added or removed): then only version-level
 * changes are listed.
 */
export function diffCrdSchemas(before: KubeObject | undefined, after: KubeObject | undefined): SchemaChange[] {
  const kind = kindOf(after ?? before);
  const out: SchemaChange[] = [];
  const va = new Map(versionsOf(before).map((v) => [v.name, v]));
  const vb = new Map(versionsOf(after).map((v) => [v.name, v]));
  const ca = conversionOf(before);
  const cb = conversionOf(after);
  if (before !== undefined && after !== undefined && ca !== cb)
    out.push({
      kind,
      version: '*',
      change: 'conversion-changed',
      path: 'spec.conversion.strategy',
      before: ca,
      after: cb,
      ...said(kind, undefined, `: conversion strategy ${ca} -> ${cb}`),
    });
  for (const [name, v] of vb) {
    if (!va.has(name))
      out.push({
        kind,
        version: name,
        change: 'version-added',
        path: '',
        after: { served: v.served === true, storage: v.storage === true },
        ...said(kind, name, ` added (${v.served ? 'served' : 'not served'}${v.storage ? ', storage' : ''})`),
      });
  }
  for (const [name, v] of va) {
    const w = vb.get(name);
    if (w === undefined) {
      out.push({
        kind,
        version: name,
        change: 'version-removed',
        path: '',
        before: { served: v.served === true, storage: v.storage === true },
        ...said(kind, name, ` removed`),
      });
      continue;
    }
    const flag = (change: SchemaChangeKind, key: 'served' | 'storage' | 'deprecated'): void => {
      const x = v[key] === true;
      const y = w[key] === true;
      if (x !== y)
        out.push({
          kind,
          version: name,
          change,
          path: '',
          before: x,
          after: y,
          ...said(kind, name, `: ${key} ${x} -> ${y}`),
        });
    };
    flag('served-changed', 'served');
    flag('storage-changed', 'storage');
    flag('deprecated-changed', 'deprecated');
    const sa = Object.keys(v.subresources ?? {})
      .sort()
      .join(',');
    const sb = Object.keys(w.subresources ?? {})
      .sort()
      .join(',');
    if (sa !== sb)
      out.push({
        kind,
        version: name,
        change: 'subresource-changed',
        path: '',
        before: sa,
        after: sb,
        ...said(kind, name, `: subresources [${sa}] -> [${sb}]`),
      });
    out.push(...diffPrinterColumns(kind, name, v.additionalPrinterColumns ?? [], w.additionalPrinterColumns ?? []));
    const sch = v.schema?.openAPIV3Schema;
    const tch = w.schema?.openAPIV3Schema;
    if (sch !== undefined && tch !== undefined) out.push(...diffSchemas(kind, name, sch, tch));
  }
  const sa = storageOf(before);
  const sb = storageOf(after);
  if (
    sa !== undefined &&
    sb !== undefined &&
    sa.name !== sb.name &&
    sa.schema?.openAPIV3Schema &&
    sb.schema?.openAPIV3Schema
  ) {
    out.push(...diffSchemas(kind, `${sa.name} -> ${sb.name}`, sa.schema.openAPIV3Schema, sb.schema.openAPIV3Schema));
  }
  return out;
}

function diffPrinterColumns(
  kind: string,
  version: string,
  a: ReadonlyArray<{ name: string; jsonPath?: string; type?: string }>,
  b: ReadonlyArray<{ name: string; jsonPath?: string; type?: string }>,
): SchemaChange[] {
  const out: SchemaChange[] = [];
  const ma = new Map(a.map((c) => [c.name, c]));
  const mb = new Map(b.map((c) => [c.name, c]));
  for (const [name, c] of mb) {
    const old = ma.get(name);
    if (old === undefined)
      out.push({
        kind,
        version,
        change: 'printer-column-added',
        path: c.jsonPath ?? '',
        after: name,
        ...said(kind, version, `: printer column ${name} (${c.jsonPath ?? ''}) added`),
      });
    else if (old.jsonPath !== c.jsonPath || old.type !== c.type)
      out.push({
        kind,
        version,
        change: 'printer-column-changed',
        path: c.jsonPath ?? '',
        before: old.jsonPath,
        after: c.jsonPath,
        ...said(kind, version, `: printer column ${name} ${old.jsonPath} -> ${c.jsonPath}`),
      });
  }
  for (const [name, c] of ma) {
    if (!mb.has(name))
      out.push({
        kind,
        version,
        change: 'printer-column-removed',
        path: c.jsonPath ?? '',
        before: name,
        ...said(kind, version, `: printer column ${name} removed`),
      });
  }
  return out;
}
