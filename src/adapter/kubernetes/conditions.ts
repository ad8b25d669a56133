/**
 * Reading `status.conditions` without trusting stale or ambiguous evidence (case claim-ready-stale-generation;
 * `controllers/sandbox_controller.go@v0.5.6`, `extensions/controllers/sandboxclaim_controller.go@v0.5.6`).
 *
 * A condition counts only when its `observedGeneration` equals the `metadata.generation` of the object it describes;
 * an older (or missing) observedGeneration is *unknown*: it neither grants nor denies. The order of the array never
 * matters. Pure functions over plain objects; no I/O.
 */

/** One entry of `status.conditions` (metav1.Condition), as read from the API. */
export interface RawCondition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string;
}

/** The minimum object shape the readers need. */
export interface Conditioned {
  readonly metadata?: { readonly generation?: number; readonly name?: string };
  readonly status?: { readonly conditions?: readonly RawCondition[] };
}

/** A condition judged against its object's generation. */
export interface ConditionReading {
  /** `true`/`false` only when the condition is current; otherwise `unknown`. */
  readonly value: 'true' | 'false' | 'unknown';
  /** The condition's reason when current; why it was not trusted otherwise. */
  readonly reason: string;
  readonly message?: string;
  /** The condition's observedGeneration, if any. */
  readonly observedGeneration?: number;
  /** Whether a condition of that type exists at all. */
  readonly present: boolean;
  /** The condition's lastTransitionTime (RFC 3339) when current and set. */
  readonly lastTransitionTime?: string;
}

/**
 * Reads condition `type` of `obj`, judged against `generation` (default: `obj.metadata.generation`).
 * Several entries of one type: the one with the highest observedGeneration wins; entries at that generation that
 * disagree give `unknown`.
 */
export function readCondition(obj: Conditioned, type: string, generation = obj.metadata?.generation): ConditionReading {
  const all = (obj.status?.conditions ?? []).filter((c) => c.type === type);
  if (all.length === 0) return { value: 'unknown', reason: `no ${type} condition`, present: false };
  const newest = Math.max(...all.map((c) => c.observedGeneration ?? -1));
  const top = all.filter((c) => (c.observedGeneration ?? -1) === newest);
  const c = top[0]!;
  const og = c.observedGeneration;
  const base = { present: true, ...(og !== undefined ? { observedGeneration: og } : {}) };
  if (og === undefined)
    return {
      ...base,
      value: 'unknown',
      reason: `${type} condition carries no observedGeneration, so its age is unknown`,
    };
  if (generation === undefined)
    return { ...base, value: 'unknown', reason: `object has no metadata.generation to judge ${type} against` };
  if (og !== generation) {
    return {
      ...base,
      value: 'unknown',
      reason: `${type} condition is for generation ${og}, object is at generation ${generation}: reconcile pending`,
    };
  }
  if (new Set(top.map((t) => t.status)).size > 1)
    return { ...base, value: 'unknown', reason: `conflicting ${type} conditions at generation ${og}` };
  const value = c.status === 'True' ? 'true' : c.status === 'False' ? 'false' : 'unknown';
  return {
    ...base,
    value,
    reason: c.reason ?? (value === 'unknown' ? `${type} status ${c.status ?? 'missing'}` : type),
    ...(c.message ? { message: c.message } : {}),
    ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}),
  };
}

/**
 * The status (`True`, `False`, `Unknown`) of condition `type` for kinds whose conditions carry no observedGeneration
 * (Pod, Node, CustomResourceDefinition): there the condition is as current as the status itself. Undefined when absent.
 * Kinds with per-condition observedGeneration use {@link readCondition}.
 */
export function statusCondition(obj: object, type: string): string | undefined {
  const conditions = (obj as { status?: { conditions?: readonly RawCondition[] } }).status?.conditions ?? [];
  return conditions.find((c) => c.type === type)?.status;
}
