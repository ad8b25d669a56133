/**
 * Maps errors to CLI exit codes and one readable message. Every AgentPlane error carries an `exitCategory`
 * (src/model/errors.ts) and {@link EXIT_CODES} maps each category to its code, so a class name never decides an exit
 * code. Anything else exits with {@link ExitCode.internal} and prints its stack.
 */
import { CommanderError } from 'commander';
import type { ErrorReason } from '../model/error-reasons.js';
import { AgentPlaneError, exitCategoryOfFailure, type ExitCategory } from '../model/errors.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { UsageError } from './usage-error.js';

export { UsageError };

/** The exit code of each exit category. */
export const EXIT_CODES: Readonly<Record<ExitCategory, ExitCodeValue>> = {
  internal: ExitCode.internal,
  usage: ExitCode.usage,
  release: ExitCode.release,
  invalid: ExitCode.invalid,
  'lock-mismatch': ExitCode.lockMismatch,
  'not-verified': ExitCode.notVerified,
  cluster: ExitCode.cluster,
  unauthenticated: ExitCode.unauthenticated,
  forbidden: ExitCode.forbidden,
  'not-ready': ExitCode.notReady,
};

/** The exit code for an error (see exit-codes.ts). */
export function exitCodeFor(err: unknown): ExitCodeValue {
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  if (err instanceof AgentPlaneError) return EXIT_CODES[err.exitCategory];
  return ExitCode.internal;
}

/**
 * Failure categories of a refused object (the server found it invalid or too large, its namespace or kind missing, a
 * conflict): the input cannot be applied to this cluster as it is.
 */
const INVALID_INPUT: ReadonlySet<string> = new Set(['invalid', 'too-large', 'not-found', 'conflict']);

/**
 * The exit code of an answer the cluster left incomplete (`diff --live` objects it refused to read or dry-run,
 * `compat` reads it refused), from the failure categories of the refused calls, the codes every command gives these
 * failures: 8 when credentials were refused, else 9 when access was, else 7 when the cluster failed a read (no
 * answer, 5xx), else 4 when every refusal was about the object itself (422, too large, namespace or kind missing).
 */
export function refusedReadsExitCode(categories: ReadonlyArray<string | undefined>): ExitCodeValue {
  const exits = new Set(
    categories.map((c) => (INVALID_INPUT.has(c ?? '') ? 'invalid' : exitCategoryOfFailure(c ?? '', 'cluster'))),
  );
  if (exits.has('unauthenticated')) return ExitCode.unauthenticated;
  if (exits.has('forbidden')) return ExitCode.forbidden;
  if (exits.has('cluster')) return ExitCode.cluster;
  return ExitCode.invalid;
}

/**
 * The reason of a failure of the cluster itself, by the adapter's classified cause, the same in every command (each
 * command's own code for where it stopped stays in the error document's `details.commandReason`).
 */
export const CLUSTER_FAILURE_REASONS = {
  ClusterUnreachable: 'the API server did not answer: connection refused or reset, or its name does not resolve',
  ClusterTimeout: 'the API server did not answer within the deadline',
  CredentialsRejected: "the API server rejected the kubeconfig user's credentials (401)",
  AccessForbidden: 'the API server refused the kubeconfig user access to an object it needs (403)',
  ClusterFailed: 'the API server answered with an error of its own (5xx, or an answer that is no Kubernetes status)',
} as const;

/** The `reason` of a cluster failure (see {@link CLUSTER_FAILURE_REASONS}). */
export type ClusterFailureReason = keyof typeof CLUSTER_FAILURE_REASONS;

/** The `reason` of the CLI's error document and error line: an error's own code, or a cluster failure's. */
export type DocumentReason = ErrorReason | ClusterFailureReason;

const CLUSTER_FAILURE_BY_CATEGORY: Readonly<Record<string, ClusterFailureReason>> = {
  unreachable: 'ClusterUnreachable',
  timeout: 'ClusterTimeout',
  unauthenticated: 'CredentialsRejected',
  forbidden: 'AccessForbidden',
};

/** The adapter's failure category an error carries (`category`, or a stopped migration's `failure.category`). */
function failureCategoryOf(err: AgentPlaneError): string | undefined {
  if ('category' in err && typeof err.category === 'string') return err.category;
  const failure = 'failure' in err ? err.failure : undefined;
  if (typeof failure !== 'object' || failure === null || !('category' in failure)) return undefined;
  return typeof failure.category === 'string' ? failure.category : undefined;
}

/**
 * The reason code of any failure, as the error document and the error line give it: a failure of the cluster (exit
 * 7, 8 or 9 with the adapter's category) by its cause, from {@link CLUSTER_FAILURE_REASONS}, whichever command met it;
 * else the error's own reason; `InternalError` for what is no AgentPlaneError.
 */
export function reasonOf(err: unknown): DocumentReason {
  if (!(err instanceof AgentPlaneError)) return 'InternalError';
  const exit = err.exitCategory;
  const category = failureCategoryOf(err);
  if (category === undefined || (exit !== 'cluster' && exit !== 'unauthenticated' && exit !== 'forbidden'))
    return err.reason;
  return CLUSTER_FAILURE_BY_CATEGORY[category] ?? 'ClusterFailed';
}

/** The start of every error line on stderr: `error [<reason>]: `, the reason code the error document carries. */
export const errorLead = (reason: string): string => `error [${reason}]: `;

/**
 * One message for the terminal: `error [<reason>]: <prefix><message>`, its `hint` unless the message already shows
 * it, and the stack only for internal errors.
 */
export function describeError(err: unknown, prefix = ''): string {
  const lead = errorLead(reasonOf(err));
  if (!(err instanceof Error)) return `${lead}${prefix}${String(err)}`;
  const hint = 'hint' in err ? err.hint : undefined;
  const parts = [`${lead}${prefix}${err.message}`];
  const shown = err instanceof AgentPlaneError && err.hintInMessage;
  if (typeof hint === 'string' && hint.length > 0 && !shown) parts.push(`hint: ${hint}`);
  if (exitCodeFor(err) === ExitCode.internal && err.stack !== undefined) parts.push(err.stack);
  return parts.join('\n');
}
