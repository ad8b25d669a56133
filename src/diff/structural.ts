/**
 * The structural comparison of two normalized objects, done by jsondiffpatch 0.7 (list items matched with
 * {@link listItemHash}, moves detected), and the walk of its delta into readable field changes.
 */
import { create, type Delta } from 'jsondiffpatch';
import { appendAll } from '../model/arrays.js';
import { listItemHash, listItemLabel } from './identity.js';

/** One changed field. `path` is readable: `spec.podTemplate.spec.containers[name=app].env[name=A].value`. */
export interface FieldChange {
  readonly path: string;
  readonly op: 'added' | 'removed' | 'changed' | 'moved';
  readonly before?: unknown;
  readonly after?: unknown;
  /** For `moved`: list positions (0-based) before and after. */
  readonly from?: number;
  readonly to?: number;
}

const differ = create({
  objectHash: listItemHash,
  arrays: { detectMove: true, includeValueOnMove: false },
  cloneDiffValues: false,
});

/** The jsondiffpatch delta of two values (undefined when equal). */
export function structuralDelta(base: unknown, head: unknown): Delta {
  return differ.diff(base, head);
}

function keySegment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function join(path: string, segment: string): string {
  return path === '' && segment.startsWith('.') ? segment.slice(1) : `${path}${segment}`;
}

function child(value: unknown, key: string | number): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key as string] : undefined;
}

/** Walks a jsondiffpatch delta into field changes, depth-first, in delta key order. */
export function fieldChanges(
  base: unknown,
  head: unknown,
  delta: Delta = structuralDelta(base, head),
  path = '',
): FieldChange[] {
  if (delta === undefined) return [];
  if (Array.isArray(delta)) {
    if (delta.length === 1) return [{ path: path || '.', op: 'added', after: delta[0] }];
    if (delta.length === 2) return [{ path: path || '.', op: 'changed', before: delta[0], after: delta[1] }];
    return [{ path: path || '.', op: 'removed', before: delta[0] }];
  }
  const out: FieldChange[] = [];
  if ((delta as { _t?: string })._t === 'a') {
    const before = Array.isArray(base) ? base : [];
    const after = Array.isArray(head) ? head : [];
    for (const [key, d] of Object.entries(delta)) {
      if (key === '_t') continue;
      if (key.startsWith('_')) {
        const from = Number(key.slice(1));
        const item = before[from];
        const tuple = d as unknown[];
        if (tuple[2] === 3) {
          out.push({ path: join(path, listItemLabel(item, from)), op: 'moved', from, to: tuple[1] as number });
        } else {
          out.push({ path: join(path, listItemLabel(item, from)), op: 'removed', before: item });
        }
        continue;
      }
      const index = Number(key);
      const item = after[index];
      if (Array.isArray(d) && d.length === 1) {
        out.push({ path: join(path, listItemLabel(item, index)), op: 'added', after: item });
        continue;
      }
      // A modified item keeps its identity; find its base position by the same hash.
      const hash = typeof item === 'object' && item !== null ? listItemHash(item) : undefined;
      const baseItem =
        hash === undefined
          ? before[index]
          : (before.find((b) => typeof b === 'object' && b !== null && listItemHash(b) === hash) ?? before[index]);
      appendAll(out, fieldChanges(baseItem, item, d, join(path, listItemLabel(item, index))));
    }
    return out;
  }
  for (const [key, d] of Object.entries(delta as Record<string, Delta>)) {
    appendAll(out, fieldChanges(child(base, key), child(head, key), d, join(path, keySegment(key))));
  }
  return out;
}
