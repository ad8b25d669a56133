/**
 * Why an environment cannot be synthesized, typed: each problem names its construct path and a stable reason code
 * beside its sentence, so programs and tests act on the reason (the sentence is for people). Construct validations
 * that cdk8s runs as text (`node.addValidation`) register here too, so one check serves both.
 */
import type { ErrorReason } from '../model/error-reasons.js';
import type { IConstruct } from 'constructs';
import { ConstructError } from './errors.js';

/** One problem: `message` is `<path>: <what is wrong>`, as printed. */
export interface EnvironmentProblem {
  readonly path: string;
  /** Stable CamelCase code: the ConstructError's reason, or `ValidationFailed` for a construct validation of text only. */
  readonly reason: ErrorReason;
  readonly message: string;
}

/** A problem from an error: a ConstructError by its own path, reason and detail (no hint); anything else at `path`. */
export function problemOf(err: unknown, path: string): EnvironmentProblem {
  if (err instanceof ConstructError)
    return { path: err.path, reason: err.reason, message: `${err.path}: ${err.detail}` };
  return { path, reason: 'RenderFailed', message: `${path}: ${err instanceof Error ? err.message : String(err)}` };
}

/** A problem as a cdk8s validation line: the sentence, then its reason code (cdk8s validations carry text only). */
export function validationLine(p: EnvironmentProblem): string {
  return `${p.message} (${p.reason})`;
}

/** A problem the environment itself finds (not an error thrown by a construct). */
export function problem(path: string, reason: ErrorReason, what: string): EnvironmentProblem {
  return { path, reason, message: `${path}: ${what}` };
}

const CHECKS = new WeakMap<IConstruct, Array<() => readonly ConstructError[]>>();

/**
 * Adds a validation to `c` that cdk8s runs (as the errors' details) and {@link childProblems} reads typed.
 * `check` returns the errors it finds; it may throw none.
 */
export function addProblemCheck(c: IConstruct, check: () => readonly ConstructError[]): void {
  c.node.addValidation({ validate: () => check().map((e) => `${e.detail} (${e.reason})`) });
  CHECKS.set(c, [...(CHECKS.get(c) ?? []), check]);
}

/** The errors `fn` throws as a check's result: none when it returns, the ConstructError it throws otherwise. */
export function thrownErrors(fn: () => unknown): ConstructError[] {
  try {
    fn();
    return [];
  } catch (err) {
    if (err instanceof ConstructError) return [err];
    throw err;
  }
}

/**
 * Construct validations of every construct under `scope` except `scope` itself: typed where registered with
 * `addProblemCheck`, `ValidationFailed` for validations that give only text (e.g. a user's own).
 */
export function childProblems(scope: IConstruct): EnvironmentProblem[] {
  const problems: EnvironmentProblem[] = [];
  for (const c of scope.node.findAll()) {
    if (c === scope) continue;
    const typed = (CHECKS.get(c) ?? []).flatMap((check) => check().map((e) => problemOf(e, c.node.path)));
    // the text addProblemCheck gave cdk8s for each typed problem: `<detail> (<reason>)`
    const typedDetails = new Set(typed.map((p) => `${p.message.slice(p.path.length + 2)} (${p.reason})`));
    problems.push(...typed);
    for (const e of c.node.validate())
      if (!typedDetails.has(e)) problems.push(problem(c.node.path, 'ValidationFailed', e));
  }
  return problems;
}
