/**
 * Reading Kubernetes conditions the only trustworthy way: by type (never by position in the array) and only at the
 * object's current generation. A condition written for an older generation counts as unknown: it neither grants nor
 * denies (cases/01-claim-ready-stale-generation). Condition semantics: `api/v1beta1/sandbox_types.go@v0.5.6`,
 * `controllers/sandbox_controller.go@v0.5.6`, FACTS.md §1.8.
 */

/** What a condition says once its generation has been checked. */
export type ConditionReading =
  | { readonly kind: 'current'; readonly status: 'True' | 'False' | 'Unknown'; readonly reason: string; readonly message: string; readonly generation: number }
  | { readonly kind: 'stale'; readonly status: string; readonly reason: string; readonly observedGeneration: number; readonly generation: number }
  | { readonly kind: 'absent'; readonly generation: number };

interface RawCondition {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
  observedGeneration?: unknown;
}

/** `metadata.generation` of an object, or 0 when it has none. */
export function generationOf(obj: unknown): number {
  const g = (obj as { metadata?: { generation?: unknown } } | undefined)?.metadata?.generation;
  return typeof g === 'number' ? g : 0;
}

/**
 * Reads condition `type` of `obj` against `metadata.generation`.
 * A condition without `observedGeneration` is judged by `status.observedGeneration`; with neither it is `stale`
 * (we cannot tell which spec it describes). Returns `absent` when no condition of that type exists.
 */
export function readCondition(obj: unknown, type: string): ConditionReading {
  const generation = generationOf(obj);
  const status = (obj as { status?: { conditions?: unknown; observedGeneration?: unknown } } | undefined)?.status;
  const list = Array.isArray(status?.conditions) ? (status.conditions as RawCondition[]) : [];
  const found = list.find((c) => c !== null && typeof c === 'object' && c.type === type);
  if (found === undefined) return { kind: 'absent', generation };
  const observed = typeof found.observedGeneration === 'number' ? found.observedGeneration : typeof status?.observedGeneration === 'number' ? status.observedGeneration : -1;
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  if (observed !== generation) {
    return { kind: 'stale', status: text(found.status), reason: text(found.reason), observedGeneration: observed, generation };
  }
  const s = text(found.status);
  return { kind: 'current', status: s === 'True' || s === 'False' ? s : 'Unknown', reason: text(found.reason), message: text(found.message), generation };
}

/** One line describing a reading, e.g. `Ready=True (DependenciesReady) at generation 3` or `Ready stale: observedGeneration 2 < generation 4`. */
export function describeReading(type: string, r: ConditionReading): string {
  switch (r.kind) {
    case 'current':
      return `${type}=${r.status}${r.reason ? ` (${r.reason})` : ''} at generation ${r.generation}`;
    case 'stale':
      return `${type}=${r.status || '?'} is stale: observedGeneration ${r.observedGeneration < 0 ? 'unset' : r.observedGeneration} ≠ generation ${r.generation}, reconcile pending`;
    case 'absent':
      return `no ${type} condition at generation ${r.generation}`;
  }
}

/** True only for `Ready=True` (or any `type=True`) at the current generation. */
export function isCurrentlyTrue(obj: unknown, type: string): boolean {
  const r = readCondition(obj, type);
  return r.kind === 'current' && r.status === 'True';
}
