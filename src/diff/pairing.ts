/**
 * Indexing both sides of a diff by object key, paying only for what differs. When both sets come from files
 * (`documents`, sources.ts), a document that is the same text in the same environment on both sides is not parsed: its
 * key is read from its text (./document-identity.ts) and it counts as unchanged, unless the CRD its kind is defaulted
 * from differs between the sides (then it is parsed and compared, so a changed CRD default still shows). CRDs that
 * are the same on both sides are parsed only when a lookup asks for their group; warm pools only when a template's
 * blueprint changed. Every other document is parsed once for both sides.
 */
import { appendAll } from '../model/arrays.js';
import type { KubeObject } from '../releases/index.js';
import { apiGroup } from '../releases/scope.js';
import { scanCrdScope, scanIdentity, type ScannedIdentity } from './document-identity.js';
import { keyOfParts, objectKey, ObjectIdentityError, type ObjectKey } from './identity.js';
import type { SchemaLookup } from './normalize.js';
import { firstOf, schemaLookupFromObjects } from './schema-lookup.js';
import { clusterScopedBy, scopeLookupFromObjects, withoutClusterNamespaces, type ScopeLookup } from './scope.js';
import { parseDocument, type DocumentCache, type ManifestDocument } from './sources.js';
import type { ManifestSet } from './manifest-set.js';

/** A document that is the same text in the same environment on both sides; `object` once parsed. */
export interface SharedDocument {
  readonly doc: ManifestDocument;
  readonly identity: ScannedIdentity;
  object?: KubeObject;
}

/** What an index holds for a key: the object, or a shared document not parsed yet. */
export type Indexed = KubeObject | SharedDocument;

export const isShared = (v: Indexed): v is SharedDocument => 'identity' in v && 'doc' in v;

/** Both sides indexed, with the lookups built from the CRDs of both. */
export interface PairedSets {
  readonly base: Map<ObjectKey, Indexed>;
  readonly head: Map<ObjectKey, Indexed>;
  /** The object of an index entry, parsing a shared document on first use. */
  objectOf(v: Indexed): KubeObject;
  readonly baseSchemas: SchemaLookup;
  readonly headSchemas: SchemaLookup;
  /** Head objects whose text contains `hint` (a cheap filter for rules that scan the head set), parsed. */
  headMatching(hint: string, pred: (obj: KubeObject) => boolean): boolean;
}

type WithDocuments = ManifestSet & { readonly documents: readonly ManifestDocument[] };
const hasDocuments = (s: ManifestSet): s is WithDocuments => Array.isArray((s as Partial<WithDocuments>).documents);

/** The environments a set is laid out by (synth's phase directories, one per environment); empty for none. */
const environmentNames = (s: ManifestSet): Set<string> =>
  new Set(
    (hasDocuments(s) ? s.documents.map((d) => d.environment) : (s.environments ?? [])).filter(
      (e): e is string => e !== undefined,
    ),
  );

/** The environment a top-level file `<env>.k8s.yaml` (`cdk8s synth`'s file per chart) or `<env>.yaml` is named for. */
const environmentOfFile = (file: string): string | undefined => /^([^/\\]+?)(\.k8s)?\.(ya?ml|json)$/.exec(file)?.[1];

/**
 * How objects are keyed by environment: `both` when both sides are laid out by environment; `base` or `head` when that
 * side is files named for the other side's environments (`cdk8s synth` writes `dist/<chart>.k8s.yaml`, synth writes
 * `dist/<chart>/NN-<phase>.yaml`), each file then standing for its environment; else `none`: objects pair by identity
 * alone (one `cdk8s synth` file against phase directories, in either direction).
 */
function environmentsOf(base: ManifestSet, head: ManifestSet): 'both' | 'base' | 'head' | 'none' {
  const [b, h] = [environmentNames(base), environmentNames(head)];
  if (b.size > 0 && h.size > 0) return 'both';
  if (!hasDocuments(base) || !hasDocuments(head)) return 'none';
  const [flat, names, side] = b.size > 0 ? [head, b, 'head' as const] : [base, h, 'base' as const];
  const named = names.size > 0 && flat.documents.every((d) => names.has(environmentOfFile(d.file) ?? ''));
  return named ? side : 'none';
}

/** The group a CRD defines, from its name (`<plural>.<group>`, enforced by the API server). */
const crdGroupOf = (name: string): string => name.slice(name.indexOf('.') + 1);

/**
 * Schema and scope lookups over parsed CRDs plus CRD documents parsed when their group is first asked for. A scope
 * is read from the pending documents' text when it is laid out plainly (`scanCrdScope`): keying an object needs its
 * scope, and only a changed object needs its schema.
 */
function lazyCrds(
  parsed: KubeObject[],
  pending: Map<string, SharedDocument[]>,
  objectOf: (v: Indexed) => KubeObject,
  crdScope: (d: SharedDocument) => ReturnType<typeof scanCrdScope>,
): { schemas: SchemaLookup; scopes: ScopeLookup } {
  let schemas = schemaLookupFromObjects(parsed);
  let scopes = scopeLookupFromObjects(parsed);
  const load = (group: string): void => {
    const docs = pending.get(group);
    if (docs === undefined) return;
    pending.delete(group);
    appendAll(parsed, docs.map(objectOf));
    schemas = schemaLookupFromObjects(parsed);
    scopes = scopeLookupFromObjects(parsed);
  };
  // Scopes read from pending CRD texts, per group; undefined for a group one of whose CRDs is not read that simply.
  const scanned = new Map<string, Map<string, boolean> | undefined>();
  const scannedScope = (group: string, kind: string): boolean | undefined => {
    if (!scanned.has(group)) {
      const byKind = new Map<string, boolean>();
      for (const d of pending.get(group) ?? []) {
        const s = crdScope(d);
        if (s === undefined || s.group !== group) {
          scanned.set(group, undefined);
          return undefined;
        }
        byKind.set(s.kind, s.clusterScoped);
      }
      scanned.set(group, byKind);
    }
    return scanned.get(group)?.get(kind);
  };
  return {
    schemas: (apiVersion, kind) => (load(apiGroup(apiVersion)), schemas(apiVersion, kind)),
    scopes: (apiVersion, kind) => {
      const group = apiGroup(apiVersion);
      if (!pending.has(group)) return scopes(apiVersion, kind);
      const s = scopes(apiVersion, kind) ?? scannedScope(group, kind);
      if (s !== undefined || scanned.get(group) !== undefined) return s;
      load(group);
      return scopes(apiVersion, kind);
    },
  };
}

/**
 * Indexes `base` and `head` (see the file comment); `scopeFor` and `schemaFor` are the caller's extra lookups.
 * @throws {ObjectIdentityError} an object without a name, or two different objects with one key in one set.
 * @throws {ManifestParseError} a document that had to be parsed and does not parse.
 */
export function pairSets(base: ManifestSet, head: ManifestSet, scopeFor?: ScopeLookup): PairedSets {
  const cache: DocumentCache = new Map();
  const objectOf = (v: Indexed): KubeObject => {
    if (!isShared(v)) return v;
    if (v.object === undefined) {
      const objects = parseDocument(v.doc, cache);
      if (objects.length !== 1)
        throw new Error(
          `internal: ${v.doc.file}:${v.doc.line + 1} scanned as one object but parsed as ${objects.length}`,
        );
      v.object = objects[0]!;
    }
    return v.object;
  };

  // Objects pair by identity whatever the file layout of each side (see `environmentsOf`).
  const environments = environmentsOf(base, head);
  const envOf = (env: string | undefined): string | undefined => (environments === 'none' ? undefined : env);
  const docEnv = (side: 'base' | 'head', d: ManifestDocument): string | undefined =>
    environments === 'none' ? undefined : environments === side ? environmentOfFile(d.file) : d.environment;

  // Per side: objects parsed (with their environment) and, for file sets, documents shared with the other side.
  const parsed = {
    base: [] as Array<[KubeObject, string | undefined]>,
    head: [] as Array<[KubeObject, string | undefined]>,
  };
  const shared: SharedDocument[] = [];
  if (hasDocuments(base) && hasDocuments(head)) {
    const textKey = (side: 'base' | 'head', d: ManifestDocument): string => {
      const env = docEnv(side, d);
      return env === undefined ? d.text : `${env}\0${d.text}`;
    };
    const headKeys = new Set(head.documents.map((d) => textKey('head', d)));
    // Each shared text is scanned once: its entry, or null when it must be parsed. The base pass records every base
    // text that the head holds, so the head pass finds the shared ones there (and needs no set of base texts).
    const seen = new Map<string, SharedDocument | null>();
    for (const [side, set] of [
      ['base', base],
      ['head', head],
    ] as const) {
      for (const doc of set.documents) {
        const k = textKey(side, doc);
        let entry = side === 'head' ? (seen.get(k) ?? null) : headKeys.has(k) ? seen.get(k) : null;
        if (entry === undefined) {
          const identity = scanIdentity(doc.text);
          entry =
            identity === undefined || identity.apiVersion.startsWith('agentplane.dev/') ? null : { doc, identity };
          seen.set(k, entry);
          if (entry !== null) shared.push(entry);
        }
        if (entry === null) for (const obj of parseDocument(doc, cache)) parsed[side].push([obj, docEnv(side, doc)]);
      }
    }
  } else {
    for (const [side, set] of [
      ['base', base],
      ['head', head],
    ] as const)
      set.objects.forEach((obj, i) => parsed[side].push([obj, envOf(set.environments?.[i])]));
  }

  // CRD lookups: parsed CRDs at once, shared ones by group on demand (the same document serves both sides).
  const pendingCrds = (): Map<string, SharedDocument[]> => {
    const m = new Map<string, SharedDocument[]>();
    for (const s of shared)
      if (s.identity.kind === 'CustomResourceDefinition')
        m.set(crdGroupOf(s.identity.name), [...(m.get(crdGroupOf(s.identity.name)) ?? []), s]);
    return m;
  };
  const crds = (side: 'base' | 'head'): KubeObject[] =>
    parsed[side].map(([o]) => o).filter((o) => o.kind === 'CustomResourceDefinition');
  // A shared CRD's scope is scanned once for both sides (a CRD is hundreds of KiB).
  const scannedCrds = new Map<SharedDocument, ReturnType<typeof scanCrdScope>>();
  const crdScope = (d: SharedDocument): ReturnType<typeof scanCrdScope> => {
    if (!scannedCrds.has(d)) scannedCrds.set(d, scanCrdScope(d.doc.text));
    return scannedCrds.get(d);
  };
  const baseCrds = lazyCrds(crds('base'), pendingCrds(), objectOf, crdScope);
  const headCrds = lazyCrds(crds('head'), pendingCrds(), objectOf, crdScope);
  // Scope asked once per kind: thousands of objects share a handful of kinds (the lookups' answers are fixed).
  const scopeOf = clusterScopedBy(headCrds.scopes, baseCrds.scopes, scopeFor);
  const scopeByKind = new Map<string, boolean>();
  const clusterScoped = (obj: KubeObject): boolean => {
    const kindKey = `${obj.apiVersion}/${obj.kind}`;
    let s = scopeByKind.get(kindKey);
    if (s === undefined) scopeByKind.set(kindKey, (s = scopeOf(obj)));
    return s;
  };

  // Groups whose CRD is not the same on both sides: shared objects of those groups are compared like any other.
  const changedGroups = new Set(
    [...crds('base'), ...crds('head')].map((c) => String((c.spec as { group?: unknown } | undefined)?.group)),
  );

  const inEnvironment = (key: ObjectKey, env: string | undefined): ObjectKey =>
    env === undefined ? key : `${env}:${key}`;
  // A shared object of a changed group: the same parsed object on both sides, compared like any other.
  const materializedObjects = new Map<SharedDocument, KubeObject>();
  const materialized = (s: SharedDocument): KubeObject => {
    let obj = materializedObjects.get(s);
    if (obj === undefined)
      materializedObjects.set(s, (obj = withoutNamespaceIfClusterScoped(objectOf(s), clusterScoped)));
    return obj;
  };
  const index = (side: 'base' | 'head', where: string): Map<ObjectKey, Indexed> => {
    const byKey = new Map<ObjectKey, Indexed>();
    const put = (key: ObjectKey, v: Indexed): void => {
      const seen = byKey.get(key);
      if (seen !== undefined && seen !== v) {
        const [a, b] = [objectOf(seen), objectOf(v)];
        if (a !== b && JSON.stringify(a) !== JSON.stringify(b)) {
          throw new ObjectIdentityError(
            `${where} holds two different objects ${key}`,
            'keep one: each apiVersion/kind/namespace/name may appear once (identical copies, e.g. the same CRD in two environments, are merged)',
            'duplicate',
            key,
            where,
          );
        }
        if (isShared(seen)) return; // keep the shared entry: the other side holds it too
      }
      byKey.set(key, v);
    };
    for (const [obj, env] of parsed[side]) {
      const scoped = withoutNamespaceIfClusterScoped(obj, clusterScoped);
      put(inEnvironment(objectKey(scoped), env), scoped);
    }
    for (const [key, v] of sharedEntries()) put(key, v);
    return byKey;
  };
  // The key and entry of each shared document, computed once for both sides (scope is memoized per kind above).
  let sharedKeyed: Array<[ObjectKey, Indexed]> | undefined;
  const sharedEntries = (): Array<[ObjectKey, Indexed]> =>
    (sharedKeyed ??= shared.map((s) => {
      const { apiVersion, kind, namespace, name } = s.identity;
      const scoped = clusterScoped({ apiVersion, kind });
      // a scanned name is never empty: the key objectKey gives, without building the object
      const key = keyOfParts(apiVersion, kind, scoped ? undefined : namespace, name);
      const changedGroup = changedGroups.has(apiGroup(apiVersion));
      // shared entries are made from base documents (the head pass only finds them)
      return [inEnvironment(key, docEnv('base', s.doc)), changedGroup ? materialized(s) : s];
    }));
  const baseIdx = index('base', base.label);
  const headIdx = index('head', head.label);
  return {
    base: baseIdx,
    head: headIdx,
    objectOf,
    baseSchemas: firstOf(baseCrds.schemas, headCrds.schemas),
    headSchemas: firstOf(headCrds.schemas, baseCrds.schemas),
    headMatching(hint, pred) {
      if (parsed.head.some(([o]) => pred(o))) return true;
      return shared.some((s) => s.doc.text.includes(hint) && pred(objectOf(s)));
    },
  };
}

/** The object without `metadata.namespace` when it is cluster-scoped (a shallow copy), else the object itself. */
const withoutNamespaceIfClusterScoped = (obj: KubeObject, clusterScoped: (o: KubeObject) => boolean): KubeObject =>
  obj.metadata?.namespace === undefined || !clusterScoped(obj)
    ? obj
    : withoutClusterNamespaces([obj], clusterScoped)[0]!;
