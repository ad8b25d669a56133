/**
 * Typed errors of synthesis. Each names the construct path(s) or file, shows the value and says what to do (`hint`).
 * An environment that cannot be synthesized exits with the `invalid` category.
 */
import { AgentPlaneError, type ExitCategory } from '../model/errors.js';
import {
  describeDuplicate,
  describeOutputRuleViolation,
  describeOversize,
  describeViolation,
  type DuplicateObject,
  type OutputRuleViolation,
  type EnvironmentProblem,
  type ObjectSchemaViolation,
  type OversizeObject,
} from '../constructs/index.js';

/** Base class; `hint` is also appended to the message. */
export abstract class SynthesisError extends AgentPlaneError {
  readonly exitCategory: ExitCategory = 'invalid';
  override readonly hintInMessage = true;
  readonly hint: string;
  constructor(message: string, hint: string) {
    super(`${message}\n  hint: ${hint}`, { summary: message });
    this.hint = hint;
  }
}

/** Custom objects that do not match the pinned CRD schema of their apiVersion: each field with its construct path and reason. */
export class SchemaViolationError extends SynthesisError {
  readonly reason = 'SchemaViolation';
  readonly violations: readonly ObjectSchemaViolation[];
  constructor(environment: string, tag: string, violations: readonly ObjectSchemaViolation[]) {
    super(
      `environment ${environment}: ${violations.length} schema violation(s) against the pinned ${tag} CRDs:\n${violations.map((v) => `    - ${describeViolation(v)}`).join('\n')}`,
      'fix the construct props at the named paths; unknown fields are errors because the API server would drop them silently',
    );
    this.violations = violations;
  }
}

/**
 * Written objects that break an output rule (an image not pinned, a sandbox pod without limits, …) after escape
 * hatches such as `addJsonPatch`: each with the rule, the construct path of the ApiObject (where its patches are), the
 * field and the value written.
 */
export class OutputRuleError extends SynthesisError {
  readonly reason = 'OutputRuleBroken';
  readonly violations: readonly OutputRuleViolation[];
  constructor(environment: string, violations: readonly OutputRuleViolation[]) {
    super(
      `environment ${environment} writes ${violations.length} object field(s) its rules refuse:\n${violations.map((v) => `    - ${describeOutputRuleViolation(v)}`).join('\n')}`,
      'remove or fix the escape hatch (addJsonPatch) at the named paths; to keep it on purpose, record it with env.acknowledge({ rule, path, reason })',
    );
    this.violations = violations;
  }
}

/** Objects with the same (group, kind, namespace, name): each with the construct paths that write it. */
export class DuplicateObjectError extends SynthesisError {
  readonly reason = 'DuplicateObject';
  readonly duplicates: readonly DuplicateObject[];
  constructor(environment: string, duplicates: readonly DuplicateObject[]) {
    super(
      `environment ${environment} declares the same object more than once (GitOps tools refuse this):\n${duplicates.map((d) => `    - ${describeDuplicate(d)}`).join('\n')}`,
      'give each object a unique name, or declare it in one construct only',
    );
    this.duplicates = duplicates;
  }
}

/** Problems found by construct validation (cross-construct checks) or thrown while rendering objects. */
export class EnvironmentInvalidError extends SynthesisError {
  readonly reason = 'EnvironmentInvalid';
  /** Each problem with its construct path and reason code. */
  readonly problems: readonly EnvironmentProblem[];
  constructor(environment: string, problems: readonly EnvironmentProblem[]) {
    super(
      `environment ${environment} is invalid:\n${problems.map((p) => `    - ${p.message} (${p.reason})`).join('\n')}`,
      'fix the constructs at the named paths',
    );
    this.problems = problems;
  }
}

/** An environment module that cannot be used: missing file, no `defineEnvironments` default export, no environments, clashes. */
export class EnvironmentModuleError extends SynthesisError {
  readonly reason = 'EnvironmentModuleUnusable';
  readonly file: string;
  constructor(
    file: string,
    message: string,
    hint: string,
    /** What is wrong with the module (see {@link EnvironmentModuleProblem}). */
    readonly problem?: EnvironmentModuleProblem,
  ) {
    super(`${file}: ${message}`, hint);
    this.file = file;
  }
}

/**
 * Why an environment module cannot be used: no such file, it does not import, its default export is not a
 * `defineEnvironments(...)`, its build function threw, it built no environment, two environments share a name, or
 * they pin different releases.
 */
export type EnvironmentModuleProblem =
  'missing' | 'unimportable' | 'not-a-definition' | 'build-failed' | 'no-environment' | 'name-clash' | 'mixed-releases';

/** An object the API server would refuse (over 1 MiB), or, in strict mode, too large for client-side apply. */
export class ObjectTooLargeError extends SynthesisError {
  readonly reason = 'ObjectTooLarge';
  constructor(
    environment: string,
    /** The limit exceeded: the API server's object limit, or client-side apply's annotation limit (`--strict`). */
    readonly limit: 'object' | 'client-side-apply',
    readonly limitBytes: number,
    /** The objects over it, each with its construct path and size. */
    readonly objects: readonly OversizeObject[],
  ) {
    super(
      limit === 'object'
        ? `environment ${environment}: ${objects.length} object(s) over the API server's ${limitBytes}-byte object limit, which no apply method lifts:\n${objects.map((o) => `    - ${describeOversize(o)}`).join('\n')}`
        : `environment ${environment}: ${objects.map(describeOversize).join('; ')}, over the ${limitBytes}-byte annotation limit of client-side apply`,
      limit === 'object'
        ? 'make the named objects smaller (fewer or shorter entries), or split what they declare across several objects or environments'
        : 'shrink the object, or synthesize without --strict and apply with kubectl apply --server-side',
    );
  }
}
