/**
 * The support-state machine (docs/architecture.md, "Vocabulary" and "The verifier"): turns the evidence gathered for one capability into its state and
 * the next missing piece of evidence. Pure. Rules:
 * - a step is reached only when it has at least one fact and every fact for it is `proven`, and every lower step
 *   was reached (no skipping: `verified` without `configured` stays where the ladder broke);
 * - `unknown` (timeout, stale condition, 403, not run) and `missing` never advance;
 * - any `contradicted` fact makes the capability `failed`; any `unsupported` fact makes it `unsupported`
 *   (contradiction wins: it is news about a running system).
 */
import type { SupportState } from '../model/states.js';
import { SUPPORT_STATES as ORDERED_STATES } from '../model/states.js';
import { STEPS, type Evidence, type Step } from './evidence.js';
import type { EvidenceReason } from './reasons.js';

/** A state the environment may require; `failed`/`unsupported` are outcomes, never requirements. */
export type RequiredState = Exclude<SupportState, 'failed' | 'unsupported'>;

export interface Settled {
  readonly state: SupportState;
  /** The next missing evidence in plain words, or null when nothing is missing up to `verified`. */
  readonly next: string | null;
  /** The reason code of that evidence (`NoEvidence` when its step has none); null with `next`. */
  readonly nextReason: EvidenceReason | null;
}

/** Position of an ordered state (absent = 0 … verified = 4); -1 for `failed`/`unsupported`. */
export function rank(state: SupportState): number {
  return (ORDERED_STATES as readonly string[]).indexOf(state);
}

/** Whether `state` satisfies `required` (`failed`/`unsupported` satisfy only `absent`). */
export function meets(state: SupportState, required: RequiredState): boolean {
  if (required === 'absent') return true;
  const r = rank(state);
  return r >= 0 && r >= rank(required);
}

const PRIORITY: Record<string, number> = { contradicted: 0, missing: 1, unknown: 2, unsupported: 3, proven: 4 };

function explain(e: Evidence): string {
  const test = e.missingTest !== undefined ? ` (acceptance test missing: ${e.missingTest})` : '';
  return `${e.step} not reached: ${e.message}${test}`;
}

/** Settles the evidence of one capability into a state and the next missing evidence. */
export function settle(evidence: readonly Evidence[]): Settled {
  const contradiction = evidence.find((e) => e.verdict === 'contradicted');
  if (contradiction !== undefined)
    return { state: 'failed', next: contradiction.message, nextReason: contradiction.reason };
  const unsupported = evidence.find((e) => e.verdict === 'unsupported');
  if (unsupported !== undefined) return { state: 'unsupported', next: null, nextReason: null };

  let state: SupportState = 'absent';
  for (const step of STEPS) {
    const facts = evidence.filter((e) => e.step === step);
    if (facts.length === 0)
      return { state, next: `${step} not reached: no evidence was collected for it`, nextReason: 'NoEvidence' };
    const blocking = [...facts]
      .filter((e) => e.verdict !== 'proven')
      .sort((a, b) => PRIORITY[a.verdict]! - PRIORITY[b.verdict]!);
    if (blocking.length > 0) return { state, next: explain(blocking[0]!), nextReason: blocking[0]!.reason };
    state = step as Step;
  }
  return { state, next: null, nextReason: null };
}
