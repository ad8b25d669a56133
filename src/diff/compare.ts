/**
 * Comparison of two manifest sets: match objects by identity, normalize both sides, redact Secrets, diff each pair
 * structurally, label risks, and keep a unified text view of each changed object.
 */
import { createTwoFilesPatch } from 'diff/lib/patch/create.js';
import equal from 'fast-deep-equal';
import type { KubeObject } from '../releases/index.js';
import type { ObjectKey } from './identity.js';
import { normalizeObject, type NormalizeOptions, type SchemaLookup } from './normalize.js';
import { assessRisks, type ComparedPair, type HeadObjects, type Risk } from './risk.js';
import { isShared, pairSets, type Indexed, type PairedSets } from './pairing.js';
import type { ManifestSet } from './manifest-set.js';
import { firstOf } from './schema-lookup.js';
import type { ScopeLookup } from './scope.js';
import { redactSecretPair } from './secrets.js';
import { toYamlSorted } from './sorted-yaml.js';
import { fieldChanges, type FieldChange } from './structural.js';

export interface DiffOptions {
  /**
   * Extra schemas for defaulting (e.g. the pinned release's), used after the CRDs found in each set.
   * @default - none: only the CRDs found in each set
   */
  readonly schemaFor?: SchemaLookup;
  /**
   * Extra scopes (e.g. the pinned release's, `scopeLookupFromRelease`), used after the core table and the CRDs found in
   * each set to decide which objects are cluster-scoped (their `metadata.namespace` is dropped before comparing).
   * @default - none: the core table and the CRDs found in each set
   */
  readonly scopeFor?: ScopeLookup;
  /**
   * Overrides the detection of who manages the conversion caBundle (see {@link caBundleExternallyManaged}).
   * @default - detected from the head set's CRDs and controller flags
   */
  readonly caBundleExternallyManaged?: boolean;
}

/** The outcome for one object that differs. Objects are normalized and redacted: safe to print. */
export interface ObjectDiff {
  readonly key: ObjectKey;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly change: 'added' | 'removed' | 'changed';
  readonly fields: readonly FieldChange[];
  /** Unified diff of the normalized YAML (keys sorted, js-yaml `dump`), produced by `diff`'s `createTwoFilesPatch`. */
  readonly unified: string;
}

/** The whole comparison. `objects` holds only the objects that differ, ordered by key. */
export interface DiffReport {
  readonly base: string;
  readonly head: string;
  readonly objects: readonly ObjectDiff[];
  readonly risks: readonly Risk[];
  readonly counts: {
    readonly added: number;
    readonly removed: number;
    readonly changed: number;
    readonly unchanged: number;
  };
}

/** A CRD that asks a CA injector for its caBundle (`cert-manager.io/inject-ca-from`). */
const INJECTOR_ANNOTATION = 'cert-manager.io/inject-ca-from';
const asksInjector = (o: KubeObject): boolean =>
  o.kind === 'CustomResourceDefinition' &&
  typeof (o.metadata?.annotations as Record<string, unknown> | undefined)?.[INJECTOR_ANNOTATION] === 'string';
/** The controller flag (v0.5.6, `cmd/agent-sandbox-controller/main.go@v0.5.6`) that leaves the caBundle to the manifests. */
const OPT_OUT_FLAG = '--manage-webhook-certs=false';
const optsOut = (o: KubeObject): boolean => {
  if (o.kind !== 'Deployment') return false;
  const containers =
    (o.spec as { template?: { spec?: { containers?: Array<{ args?: unknown[] }> } } } | undefined)?.template?.spec
      ?.containers ?? [];
  return containers.some((c) => (c.args ?? []).map(String).includes(OPT_OUT_FLAG));
};

/**
 * Whether the CRDs' conversion `caBundle` is written by someone other than the manifests: true unless the controller
 * Deployment in `objects` runs with `--manage-webhook-certs=false` and no CRD asks a CA injector.
 */
export function caBundleExternallyManaged(objects: readonly KubeObject[]): boolean {
  return objects.some(asksInjector) || !objects.some(optsOut);
}

/** YAML with keys sorted, for the unified view (js-yaml's layout, see ./sorted-yaml.ts); empty for no object. */
const unifiedYaml = (obj: KubeObject | undefined): string => (obj === undefined ? '' : toYamlSorted(obj));

/**
 * Whether a pair needs no normalization to be known equal: the same object (one parse through a `DocumentCache`, sources.ts)
 * or deep-equal as read, and defaulted from the same schema on both sides (a changed CRD default is compared).
 */
function equalAsRead(b: KubeObject, h: KubeObject, baseOpts: NormalizeOptions, headOpts: NormalizeOptions): boolean {
  if (b !== h && !equal(b, h)) return false;
  return baseOpts.schemaFor?.(b.apiVersion, b.kind) === headOpts.schemaFor?.(h.apiVersion, h.kind);
}

/**
 * Compares two manifest sets. A cluster-scoped object's `metadata.namespace` is dropped first, as the API server does
 * (scope: core table, CRDs of both sets, `opts.scopeFor`; see ./scope.ts). Sets read from files are compared
 * document by document first (./pairing.ts): what is the same text on both sides is neither parsed nor compared.
 * Throws `ObjectIdentityError` when a set holds an unnamed or duplicated object.
 */
export function diffManifests(base: ManifestSet, head: ManifestSet, opts: DiffOptions = {}): DiffReport {
  const sets = pairSets(base, head, opts.scopeFor);
  const { objectOf } = sets;
  const external =
    opts.caBundleExternallyManaged ??
    (sets.headMatching(INJECTOR_ANNOTATION, asksInjector) || !sets.headMatching(OPT_OUT_FLAG, optsOut));
  const baseOpts: NormalizeOptions = {
    schemaFor: firstOf(sets.baseSchemas, opts.schemaFor),
    caBundleExternallyManaged: external,
  };
  const headOpts: NormalizeOptions = {
    schemaFor: firstOf(sets.headSchemas, opts.schemaFor),
    caBundleExternallyManaged: external,
  };
  const headNormalized = new Map<ObjectKey, KubeObject>();
  const normalizedHead = (key: ObjectKey): KubeObject => {
    let n = headNormalized.get(key);
    if (n === undefined) headNormalized.set(key, (n = normalizeObject(objectOf(sets.head.get(key)!), headOpts)));
    return n;
  };
  let unchanged = 0;
  // A key whose entry is the same shared document on both sides is unchanged: it is never parsed (pairing.ts).
  const keys: ObjectKey[] = [];
  for (const [key, b] of sets.base) {
    if (sets.head.get(key) === b && isShared(b)) unchanged += 1;
    else keys.push(key);
  }
  for (const key of sets.head.keys()) if (!sets.base.has(key)) keys.push(key);
  keys.sort();
  const pairs: ComparedPair[] = [];
  const objects: ObjectDiff[] = [];
  for (const key of keys) {
    const bi = sets.base.get(key);
    const hi = sets.head.get(key);
    const b0 = bi && objectOf(bi);
    const h0 = hi && objectOf(hi);
    // Most objects of a review are unchanged: equal as read means equal after normalization, at a fraction of the cost.
    if (b0 !== undefined && h0 !== undefined && equalAsRead(b0, h0, baseOpts, headOpts)) {
      unchanged += 1;
      continue;
    }
    const [b, h] = redactSecretPair(b0 && normalizeObject(b0, baseOpts), h0 && normalizedHead(key));
    // Deep equality next (key order ignored): cheaper than a structural diff, and most pairs that differ as read
    // (server defaults, status, metadata) are equal once normalized.
    const fields = b !== undefined && h !== undefined && !equal(b, h) ? fieldChanges(b, h) : [];
    if (b !== undefined && h !== undefined && fields.length === 0) {
      unchanged += 1;
      continue;
    }
    const any = (h ?? b)!;
    pairs.push({ key, ...(b ? { base: b } : {}), ...(h ? { head: h } : {}), fields });
    objects.push({
      key,
      apiVersion: any.apiVersion,
      kind: any.kind,
      ...(any.metadata?.namespace !== undefined ? { namespace: any.metadata.namespace } : {}),
      name: String(any.metadata?.name),
      change: b === undefined ? 'added' : h === undefined ? 'removed' : 'changed',
      fields,
      unified: createTwoFilesPatch(`a/${key}`, `b/${key}`, unifiedYaml(b), unifiedYaml(h), base.label, head.label),
    });
  }
  const count = (c: ObjectDiff['change']): number => objects.filter((o) => o.change === c).length;
  return {
    base: base.label,
    head: head.label,
    objects,
    risks: assessRisks(pairs, headObjects(sets, normalizedHead)),
    counts: { added: count('added'), removed: count('removed'), changed: count('changed'), unchanged },
  };
}

/**
 * The head set for the risk rules: warm pools indexed by namespace (from the scanned identity of a shared document, no
 * parse), then, per question, parsed only when their text names the template (a pool naming it contains the name,
 * unless its text holds an escape).
 */
function headObjects(sets: PairedSets, normalized: (key: ObjectKey) => KubeObject): HeadObjects {
  let pools: Map<string, Array<[ObjectKey, Indexed]>> | undefined;
  const rec = (v: unknown): Record<string, unknown> =>
    typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  return {
    normalized,
    poolsUsing(namespace, template) {
      if (pools === undefined) {
        pools = new Map();
        for (const [key, v] of sets.head) {
          if ((isShared(v) ? v.identity.kind : v.kind) !== 'SandboxWarmPool') continue;
          const ns = String(isShared(v) ? v.identity.namespace : v.metadata?.namespace);
          pools.set(ns, [...(pools.get(ns) ?? []), [key, v]]);
        }
      }
      const out: ObjectKey[] = [];
      for (const [key, v] of pools.get(String(namespace)) ?? []) {
        const text = isShared(v) ? v.doc.text : undefined;
        if (text !== undefined && !text.includes(String(template)) && !text.includes('\\')) continue;
        const pool = sets.objectOf(v);
        if (String(rec(rec(pool.spec).sandboxTemplateRef).name) === String(template)) out.push(key);
      }
      return out;
    },
  };
}

export type { ManifestSet };
