/**
 * Comparison of two manifest sets: match objects by identity, normalize both sides, redact Secrets, diff each pair
 * structurally, label risks, and keep a unified text view of each changed object.
 */
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import { canonicalJson } from '../releases/crd-schema.js';
import type { KubeObject } from '../releases/index.js';
import { indexObjects, type ObjectKey } from './identity.js';
import { normalizeObject, type NormalizeOptions, type SchemaLookup } from './normalize.js';
import { assessRisks, type ComparedPair, type Risk } from './risk.js';
import { firstOf, schemaLookupFromObjects } from './schema-lookup.js';
import { redactSecretPair } from './secrets.js';
import { fieldChanges, type FieldChange } from './structural.js';

/** One side of a comparison: a label for people (`dist/`, `main`, `live (context kind-a)`) and its objects. */
export interface ManifestSet {
  readonly label: string;
  readonly objects: readonly KubeObject[];
  /** The environment of each object when the set holds several (synth writes one directory per environment). */
  readonly environmentOf?: ReadonlyMap<KubeObject, string>;
}

export interface DiffOptions {
  /** Extra schemas for defaulting (e.g. the pinned release's), used after the CRDs found in each set. */
  readonly schemaFor?: SchemaLookup;
  /** Overrides the detection of who manages the conversion caBundle (see {@link caBundleExternallyManaged}). */
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
  /** Unified diff of the normalized YAML (keys sorted), produced by `diff`'s `createTwoFilesPatch`. */
  readonly unified: string;
}

/** The whole comparison. `objects` holds only the objects that differ, ordered by key. */
export interface DiffReport {
  readonly base: string;
  readonly head: string;
  readonly objects: readonly ObjectDiff[];
  readonly risks: readonly Risk[];
  readonly counts: { readonly added: number; readonly removed: number; readonly changed: number; readonly unchanged: number };
}

/**
 * Whether the CRDs' conversion `caBundle` is written by someone other than the manifests: true unless the controller
 * Deployment in `objects` runs with `--manage-webhook-certs=false` (v0.5.6 flag, `cmd/agent-sandbox-controller/main.go@v0.5.6`)
 * and no CRD asks a CA injector (`cert-manager.io/inject-ca-from`).
 */
export function caBundleExternallyManaged(objects: readonly KubeObject[]): boolean {
  const injector = objects.some((o) => o.kind === 'CustomResourceDefinition' && typeof (o.metadata?.annotations as Record<string, unknown> | undefined)?.['cert-manager.io/inject-ca-from'] === 'string');
  if (injector) return true;
  const optedOut = objects.some((o) => {
    if (o.kind !== 'Deployment') return false;
    const containers = ((o.spec as { template?: { spec?: { containers?: Array<{ args?: unknown[] }> } } } | undefined)?.template?.spec?.containers) ?? [];
    return containers.some((c) => (c.args ?? []).map(String).includes('--manage-webhook-certs=false'));
  });
  return !optedOut;
}

function toYamlSorted(obj: KubeObject | undefined): string {
  return obj === undefined ? '' : stringify(obj, { version: '1.1', lineWidth: 0, sortMapEntries: true });
}

/** Compares two manifest sets. Throws `ObjectIdentityError` when a set holds an unnamed or duplicated object. */
export function diffManifests(base: ManifestSet, head: ManifestSet, opts: DiffOptions = {}): DiffReport {
  const baseIdx = indexObjects(base.objects, base.label, base.environmentOf);
  const headIdx = indexObjects(head.objects, head.label, head.environmentOf);
  const baseSchemas = schemaLookupFromObjects(base.objects);
  const headSchemas = schemaLookupFromObjects(head.objects);
  const external = opts.caBundleExternallyManaged ?? caBundleExternallyManaged(head.objects);
  const baseOpts: NormalizeOptions = { schemaFor: firstOf(baseSchemas, headSchemas, opts.schemaFor), caBundleExternallyManaged: external };
  const headOpts: NormalizeOptions = { schemaFor: firstOf(headSchemas, baseSchemas, opts.schemaFor), caBundleExternallyManaged: external };
  const keys = [...new Set([...baseIdx.keys(), ...headIdx.keys()])].sort();
  const pairs: ComparedPair[] = [];
  const objects: ObjectDiff[] = [];
  const headNormalized = new Map<ObjectKey, KubeObject>();
  let unchanged = 0;
  for (const key of keys) {
    const b0 = baseIdx.get(key);
    const h0 = headIdx.get(key);
    const [b, h] = redactSecretPair(b0 && normalizeObject(b0, baseOpts), h0 && normalizeObject(h0, headOpts));
    if (h !== undefined) headNormalized.set(key, h);
    // Canonical JSON equality first: most objects are unchanged, and this is far cheaper than a structural diff.
    const fields = b !== undefined && h !== undefined && canonicalJson(b) !== canonicalJson(h) ? fieldChanges(b, h) : [];
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
      unified: createTwoFilesPatch(`a/${key}`, `b/${key}`, toYamlSorted(b), toYamlSorted(h), base.label, head.label),
    });
  }
  const count = (c: ObjectDiff['change']): number => objects.filter((o) => o.change === c).length;
  return {
    base: base.label,
    head: head.label,
    objects,
    risks: assessRisks(pairs, headNormalized),
    counts: { added: count('added'), removed: count('removed'), changed: count('changed'), unchanged },
  };
}
