/**
 * The CRD schema model of a loaded release: the pinned CustomResourceDefinition objects
 * (`k8s/crds/*.yaml@tag`), their per-version `openAPIV3Schema`, schema fingerprints and sizes.
 */
import { sha256Hex } from './cache.js';
import { readDerived, releaseCacheRoot, writeDerived } from './derived.js';
import { ReleaseError, VersionNotServedError } from './errors.js';
import { parsedDocumentsKey } from './parsed-documents-key.js';
import type { KubeObject, LoadedRelease, SandboxKind } from './types.js';

/** A JSON Schema object as found in a CRD (`openAPIV3Schema`), including `x-kubernetes-*` keywords. */
export type JsonSchema = Record<string, unknown>;

interface CrdVersion {
  name: string;
  served?: boolean;
  schema?: { openAPIV3Schema?: JsonSchema };
}

/**
 * The pinned CustomResourceDefinition object of `kind` (parsed from the verified CRD file named in the catalog).
 * @throws ReleaseError (reason `CrdNotFound`) when the release's CRD file holds no CRD for the kind.
 */
export function crdObject(release: LoadedRelease, kind: SandboxKind): KubeObject {
  const facts = release.facts.crds[kind];
  const docs = release.objects.get(facts.file) ?? [];
  const crd = docs.find((d) => d.kind === 'CustomResourceDefinition' && d.metadata?.name === facts.crdName);
  if (!crd) {
    throw new ReleaseError(
      'CrdNotFound',
      `release ${release.facts.tag} has no CustomResourceDefinition ${facts.crdName} in ${facts.file}`,
      'the loaded release is incomplete; load it with loadRelease() so every pinned file is present',
    );
  }
  return crd;
}

/** Versions the pinned CRD of `kind` serves, in file order (e.g. `['v1beta1', 'v1alpha1']` on v0.5.x). */
export function servedVersions(release: LoadedRelease, kind: SandboxKind): string[] {
  return crdVersions(release, kind)
    .filter((v) => v.served === true)
    .map((v) => v.name);
}

/**
 * The `schema.openAPIV3Schema` of `version` of the pinned CRD of `kind` (the object inside the release; do not mutate).
 * @throws VersionNotServedError when the release does not serve that version (e.g. v1beta1 on v0.4.6).
 */
export function openApiSchema(release: LoadedRelease, kind: SandboxKind, version: string): JsonSchema {
  const v = crdVersions(release, kind).find((x) => x.name === version && x.served === true);
  if (!v) throw new VersionNotServedError(release.facts.tag, kind, version, servedVersions(release, kind));
  const schema = v.schema?.openAPIV3Schema;
  if (!schema) {
    throw new ReleaseError(
      'CrdSchemaMissing',
      `${kind} ${version} of release ${release.facts.tag} has no openAPIV3Schema`,
      'report this: every pinned CRD version carries a schema',
    );
  }
  return schema;
}

/** Canonical JSON: object keys sorted at every level, no whitespace. Arrays keep their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 (lower-case hex) of the canonical JSON of `schema`; equal schemas give equal fingerprints whatever their key order. */
export function schemaFingerprint(schema: unknown): string {
  return sha256Hex(canonicalJson(schema));
}

const pinnedFingerprints = new WeakMap<LoadedRelease, Map<string, string>>();

/** Derived-cache kind (folder) of pinned schema fingerprints. */
const SCHEMA_FINGERPRINTS = 'schema-fingerprints';

/**
 * {@link schemaFingerprint} of the pinned schema of `version` of `kind` (the lock's `crdFingerprints`, the validator's
 * cache key), computed once per release object. With a cache root it is a derived entry keyed like the parsed documents
 * of the CRD file (its pinned sha256 and the yaml version), so a later process skips the canonical JSON of the schema.
 * @throws VersionNotServedError as {@link openApiSchema}
 */
export function pinnedSchemaFingerprint(release: LoadedRelease, kind: SandboxKind, version: string): string {
  let byVersion = pinnedFingerprints.get(release);
  if (byVersion === undefined) pinnedFingerprints.set(release, (byVersion = new Map()));
  let fingerprint = byVersion.get(`${kind}/${version}`);
  if (fingerprint !== undefined) return fingerprint;
  const schema = openApiSchema(release, kind, version);
  const facts = release.facts.crds[kind];
  const sha256 = release.facts.files.find((f) => f.path === facts.file)?.sha256;
  const root = releaseCacheRoot(release);
  const key =
    sha256 === undefined
      ? undefined
      : `schema-fingerprint/1 ${parsedDocumentsKey(sha256)} crd:${facts.crdName} version:${version}`;
  const cached = root !== undefined && key !== undefined ? readDerived(root, SCHEMA_FINGERPRINTS, key) : undefined;
  if (typeof cached === 'string') fingerprint = cached;
  else {
    fingerprint = schemaFingerprint(schema);
    if (root !== undefined && key !== undefined) writeDerived(root, SCHEMA_FINGERPRINTS, key, fingerprint);
  }
  byVersion.set(`${kind}/${version}`, fingerprint);
  return fingerprint;
}

/**
 * Size in bytes of the pinned CRD file of `kind` (the YAML as released, e.g. 393338 for the v0.5.6 Sandbox CRD,
 * `k8s/crds/agents.x-k8s.io_sandboxes.yaml@v0.5.6`). Compare with 262144 (256 KiB, the API server's cap on all
 * annotations of an object) to decide on server-side apply (docs/architecture.md, "Constructs"); see lastAppliedSizeBytes for the JSON measure.
 */
export function crdSizeBytes(release: LoadedRelease, kind: SandboxKind): number {
  const file = release.facts.crds[kind].file;
  const bytes = release.files.get(file);
  if (bytes) return bytes.length;
  throw new ReleaseError(
    'CrdFileMissing',
    `release ${release.facts.tag} has no bytes for ${file}`,
    'load the release with loadRelease() so every pinned file is present',
  );
}

/**
 * Size in bytes of `obj` as compact JSON: what client-side `kubectl apply` writes into the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation (for the v0.5.6 Sandbox CRD: 132497 bytes).
 */
export function lastAppliedSizeBytes(obj: unknown): number {
  return Buffer.byteLength(JSON.stringify(obj), 'utf8');
}

function crdVersions(release: LoadedRelease, kind: SandboxKind): CrdVersion[] {
  const spec = crdObject(release, kind).spec as { versions?: CrdVersion[] } | undefined;
  return spec?.versions ?? [];
}
