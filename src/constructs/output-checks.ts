/**
 * The checks on an environment's rendered output, which the environment runs as cdk8s validations and
 * `agentplane synth` turns into typed errors: objects written twice, Agent Sandbox objects the pinned CRD schemas
 * refuse, objects over the API server's object limit. Each finding is data; `describe*` gives its line for a person.
 */
import type { ErrorReason } from '../model/error-reasons.js';
import { apiGroup, CustomObjectValidator, type LoadedRelease } from '../releases/index.js';
import { OBJECT_LIMIT_BYTES, type RenderedObject } from './render.js';

/** Which object a finding is about. `namespace` is absent for a cluster-scoped object. */
export interface ObjectIdentity {
  /** The API group, `core` for the core group. */
  readonly group: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** An object the environment writes more than once, with the construct paths that write it, first one first. */
export interface DuplicateObject {
  readonly object: ObjectIdentity;
  readonly paths: readonly string[];
}

/** An object over the API server's object limit. */
export interface OversizeObject {
  readonly path: string;
  readonly object: ObjectIdentity;
  /** Its size as JSON. */
  readonly bytes: number;
}

/** A field of an Agent Sandbox object that the pinned CRD schema refuses. */
export interface ObjectSchemaViolation {
  readonly path: string;
  readonly object: ObjectIdentity;
  /** The field, as the validator names it (`spec.updateStrategy.typ`). */
  readonly field: string;
  /** The validator's reason code (`UnknownField`, `InvalidEnum`, …). */
  readonly reason: ErrorReason;
  readonly message: string;
}

/** The identity of a rendered object. */
export function objectIdentity(o: RenderedObject): ObjectIdentity {
  const m = o.object.metadata;
  return {
    group: apiGroup(o.object.apiVersion),
    kind: o.object.kind,
    ...(m?.namespace ? { namespace: m.namespace } : {}),
    name: m?.name ?? '?',
  };
}

function describeIdentity(id: ObjectIdentity): string {
  return `${id.group}/${id.kind}/${id.namespace ?? '(cluster)'}/${id.name}`;
}

/** Objects over {@link OBJECT_LIMIT_BYTES} of JSON. */
export function tooLargeObjects(objects: readonly RenderedObject[]): OversizeObject[] {
  return objects
    .filter((o) => (o.oversizeBytes ?? 0) > OBJECT_LIMIT_BYTES)
    .map((o) => ({ path: o.constructPath, object: objectIdentity(o), bytes: o.oversizeBytes ?? 0 }));
}

/** `<path>: <kind> <ns/name> is N bytes as JSON`. */
export function describeOversize(o: OversizeObject): string {
  const ns = o.object.namespace === undefined ? '' : `${o.object.namespace}/`;
  return `${o.path}: ${o.object.kind} ${ns}${o.object.name} is ${o.bytes} bytes as JSON`;
}

/** Objects written more than once, by (group, kind, namespace, name). */
export function duplicateObjects(objects: readonly RenderedObject[]): DuplicateObject[] {
  const seen = new Map<string, { object: ObjectIdentity; paths: string[] }>();
  for (const item of objects) {
    const object = objectIdentity(item);
    const key = describeIdentity(object);
    const entry = seen.get(key);
    if (entry === undefined) seen.set(key, { object, paths: [item.constructPath] });
    else entry.paths.push(item.constructPath);
  }
  return [...seen.values()].filter((e) => e.paths.length > 1);
}

/** `<group>/<kind>/<namespace>/<name> at <path> and <path>`. */
export function describeDuplicate(d: DuplicateObject): string {
  return `${describeIdentity(d.object)} at ${d.paths.join(' and ')}`;
}

/** Agent Sandbox objects that the pinned CRD's `openAPIV3Schema` refuses (unknown fields are errors). */
export function schemaViolations(objects: readonly RenderedObject[], release: LoadedRelease): ObjectSchemaViolation[] {
  const validator = CustomObjectValidator.forRelease(release);
  const groups = new Set(Object.values(release.facts.crds).map((crd) => crd.group));
  const violations: ObjectSchemaViolation[] = [];
  for (const item of objects) {
    if (!groups.has(apiGroup(item.object.apiVersion))) continue;
    for (const v of validator.validate(item.object))
      violations.push({
        path: item.constructPath,
        object: objectIdentity(item),
        field: v.path,
        reason: v.reason,
        message: v.message,
      });
  }
  return violations;
}

/** `<path>: <kind> <name>: <field>: <why>`. */
export function describeViolation(v: ObjectSchemaViolation): string {
  return `${v.path}: ${v.object.kind} ${v.object.name}: ${v.field}: ${v.message}`;
}
