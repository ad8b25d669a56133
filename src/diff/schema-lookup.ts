/**
 * Where defaults come from: the `openAPIV3Schema` of each served version of the CustomResourceDefinitions in a
 * manifest set (synthesized installs carry the pinned, checksum-verified CRDs) or of a loaded release.
 */
import { crdObject } from '../releases/crd-schema.js';
import { SANDBOX_KINDS } from '../model/releases.js';
import type { KubeObject, LoadedRelease, SandboxKind } from '../releases/index.js';
import type { SchemaLookup } from './normalize.js';
import type { SchemaNode } from './schema-defaults.js';

interface CrdSpecView {
  group?: string;
  names?: { kind?: string };
  versions?: Array<{ name: string; served?: boolean; schema?: { openAPIV3Schema?: SchemaNode } }>;
}

function addCrd(into: Map<string, SchemaNode>, crd: KubeObject): void {
  const spec = crd.spec as CrdSpecView | undefined;
  const kind = spec?.names?.kind;
  if (spec?.group === undefined || kind === undefined) return;
  for (const v of spec.versions ?? []) {
    const schema = v.schema?.openAPIV3Schema;
    if (v.served !== false && schema !== undefined) into.set(`${spec.group}/${v.name}/${kind}`, schema);
  }
}

/** A lookup over the CRDs found in `objects` (other objects are ignored). */
export function schemaLookupFromObjects(objects: Iterable<KubeObject>): SchemaLookup {
  const byKey = new Map<string, SchemaNode>();
  for (const obj of objects) if (obj.kind === 'CustomResourceDefinition') addCrd(byKey, obj);
  return (apiVersion, kind) => byKey.get(`${apiVersion}/${kind}`);
}

const KINDS: readonly SandboxKind[] = SANDBOX_KINDS;

/** A lookup over the pinned CRDs of a loaded release (`crdObject`, `k8s/crds/*.yaml@tag`). */
export function schemaLookupFromRelease(release: LoadedRelease): SchemaLookup {
  return schemaLookupFromObjects(KINDS.map((k) => crdObject(release, k)));
}

/** The first lookup that knows the kind wins. */
export function firstOf(...lookups: ReadonlyArray<SchemaLookup | undefined>): SchemaLookup {
  return (apiVersion, kind) => {
    for (const l of lookups) {
      const s = l?.(apiVersion, kind);
      if (s !== undefined) return s;
    }
    return undefined;
  };
}
