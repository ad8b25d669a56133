/**
 * Helpers for plain Kubernetes objects (JSON form) taken from pinned release files.
 */
import { ApiObject } from './cdk8s.js';
import type { Construct } from 'constructs';
import { isPlainObject } from '../model/objects.js';
import type { KubeObject } from '../releases/index.js';
import {
  ANNOTATION_RELEASE,
  ANNOTATION_RELEASE_COMMIT,
  LABEL_MANAGED_BY,
  LABEL_VERSION,
  MANAGED_BY,
} from './metadata.js';

/** A JSON object (non-null, non-array). */
export type Json = Record<string, unknown>;

/** `obj[key]` as an object, created when absent. */
export function child(obj: Json, key: string): Json {
  const cur = obj[key];
  if (isPlainObject(cur)) return cur;
  const created: Json = {};
  obj[key] = created;
  return created;
}

/** `obj[key]` as an array, created when absent. */
export function list(obj: Json, key: string): unknown[] {
  const cur = obj[key];
  if (Array.isArray(cur)) return cur;
  const created: unknown[] = [];
  obj[key] = created;
  return created;
}

/** A construct id for an object: `Kind.namespace.name` (cluster-scoped: `Kind.name`). */
export function objectId(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  return [obj.kind, ns, obj.metadata?.name].filter((p) => p !== undefined && p !== '').join('.');
}

/** Stamps the release identity on an object: `app.kubernetes.io/version`, managed-by, release and commit annotations. */
export function stampRelease(obj: Json, tag: string, commit: string): void {
  const metadata = child(obj, 'metadata');
  const labels = child(metadata, 'labels');
  labels[LABEL_VERSION] = tag;
  labels[LABEL_MANAGED_BY] = MANAGED_BY;
  const annotations = child(metadata, 'annotations');
  annotations[ANNOTATION_RELEASE] = tag;
  annotations[ANNOTATION_RELEASE_COMMIT] = commit;
}

/** Adds a plain object as a cdk8s ApiObject (deep-copied; `apiVersion`, `kind`, `metadata` and all other top-level keys kept). */
export function addObject(scope: Construct, obj: KubeObject, id = objectId(obj)): ApiObject {
  const copy = structuredClone(obj) as Json;
  const { apiVersion, kind, metadata, ...rest } = copy;
  return new ApiObject(scope, id, {
    apiVersion: String(apiVersion),
    kind: String(kind),
    metadata: (metadata ?? {}) as Json,
    ...rest,
  });
}

/** Every container (init, regular, ephemeral) of a pod spec in JSON form. */
export function podContainers(podSpec: Json): Json[] {
  const out: Json[] = [];
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) {
    const l = podSpec[field];
    if (Array.isArray(l)) for (const c of l) if (isPlainObject(c)) out.push(c);
  }
  return out;
}
