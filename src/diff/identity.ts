/**
 * Object and list-item identity for the diff.
 *
 * An object is `apiVersion/kind/namespace/name` (cluster-scoped objects have an empty namespace: the diff drops a stray
 * one first, see ./scope.ts). List items are matched by `name` where Kubernetes merges them by name (containers,
 * initContainers, env, volumes, volumeMounts, named ports, ...); other object items by their content, so a changed
 * unnamed item shows as one removed and one added. Matching never reorders: a reordered env list is reported as moves, because order carries meaning.
 */
import { canonicalJson } from '../releases/crd-schema.js';
import type { KubeObject } from '../releases/index.js';
import { AgentPlaneError } from '../model/errors.js';

/** `apiVersion/kind/namespace/name`, e.g. `extensions.agents.x-k8s.io/v1beta1/SandboxWarmPool/agents/pool`, prefixed with `<environment>:` for objects of a named environment when both sides of a diff name environments (src/diff/pairing.ts). */
export type ObjectKey = string;

/** The identity of an object. Throws when it has no `metadata.name` (such an object cannot be applied either). */
export function objectKey(obj: KubeObject): ObjectKey {
  const name = obj.metadata?.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new ObjectIdentityError(
      `${obj.apiVersion} ${obj.kind} has no metadata.name`,
      'give every object a metadata.name (generateName cannot be diffed)',
      'unnamed',
    );
  }
  return keyOfParts(obj.apiVersion, obj.kind, obj.metadata?.namespace, name);
}

/** The {@link objectKey} of an object with these fields (`name` non-empty), without building the object. */
export function keyOfParts(apiVersion: string, kind: string, namespace: string | undefined, name: string): ObjectKey {
  return `${apiVersion}/${kind}/${namespace ?? ''}/${name}`;
}

/** An object that cannot be identified, or two objects with the same identity in one set. */
export class ObjectIdentityError extends AgentPlaneError {
  readonly reason = 'ObjectIdentityInvalid';
  readonly exitCategory = 'invalid';
  constructor(
    message: string,
    readonly hint: string,
    /** `unnamed`: an object without metadata.name; `duplicate`: two different objects with one key in one set. */
    readonly problem?: 'unnamed' | 'duplicate',
    /** The object key (`duplicate`), and the set that holds it (`base`/`head`). */
    readonly key?: string,
    readonly set?: string,
  ) {
    super(message);
  }
}

/** `name`, or `metadata.name` for embedded objects such as volumeClaimTemplates. */
function itemName(rec: Record<string, unknown>): string | undefined {
  if (typeof rec.name === 'string') return rec.name;
  const meta = rec.metadata;
  if (typeof meta === 'object' && meta !== null && typeof (meta as Record<string, unknown>).name === 'string')
    return (meta as Record<string, string>).name;
  return undefined;
}

/**
 * The jsondiffpatch `objectHash` for list items: `name` (or `metadata.name`) when the item has one, `containerPort/protocol` for unnamed
 * container ports, else the item's canonical JSON (content identity; key order does not matter).
 */
export function listItemHash(item: object): string {
  const rec = item as Record<string, unknown>;
  const name = itemName(rec);
  if (name !== undefined) return `name:${name}`;
  if (typeof rec.containerPort === 'number') return `port:${rec.containerPort}/${String(rec.protocol ?? 'TCP')}`;
  return `json:${canonicalJson(item)}`;
}

/** A readable label for a list item in a field path: `[name=app]`, `[containerPort=8080]` or `[3]`. */
export function listItemLabel(item: unknown, index: number): string {
  if (typeof item === 'object' && item !== null) {
    const rec = item as Record<string, unknown>;
    const name = itemName(rec);
    if (name !== undefined) return `[name=${name}]`;
    if (typeof rec.containerPort === 'number') return `[containerPort=${rec.containerPort}]`;
  }
  return `[${index}]`;
}
