/**
 * What a failed command prints on stdout under `-o json|yaml`: one error document (shape {@link ErrorDocumentSchema},
 * documented in docs/output.md "Errors"), so a pipeline reading stdout always gets a document in the format it
 * asked for. stderr keeps the message for people; table and markdown print nothing on stdout, as before.
 */
import { CommanderError } from 'commander';
import { plainValue } from '../constructs/props.js';
import { AgentPlaneError } from '../model/errors.js';
import { describeError, exitCodeFor, reasonOf, type DocumentReason } from './errors.js';
import { toYaml, type OutputChoice } from './output.js';

export const ERROR_API_VERSION = 'agentplane.dev/v1alpha1';

/**
 * The error document. Its zod schema, which tests and consumers validate against, is in ./error-document-schema.ts,
 * so a failing command does not load zod.
 */
export interface ErrorDocument {
  readonly apiVersion: typeof ERROR_API_VERSION;
  readonly kind: 'Error';
  /** The command that failed, e.g. `verify`, `mirror pull`. */
  readonly command: string;
  /**
   * The error's stable CamelCase reason code (`InvalidUsage` for a bad command line, `InternalError` for a bug); a
   * failure of the cluster has one code by its cause in every command (`CLUSTER_FAILURE_REASONS`, ./errors.ts).
   */
  readonly reason: DocumentReason;
  /** The process exit code. */
  readonly exitCode: number;
  /** The message for people, without the hint; its wording may change. */
  readonly message: string;
  /** What to do, when the error says. */
  readonly hint?: string;
  /**
   * The error's structured fields (construct path, value, file, ...), by the error class; `{}` when it has none. A
   * cluster failure adds `commandReason`, the command's own code for where it stopped (e.g. `VerifyCouldNotRun`).
   */
  readonly details: Record<string, unknown>;
}

/** Keys every AgentPlane error has, shown at the top of the document or not at all (the stack stays on stderr). */
const BASE_KEYS = new Set([
  'name',
  'message',
  'stack',
  'cause',
  'reason',
  'exitCategory',
  'hintInMessage',
  'hint',
  'summary',
]);

/** The error document of `err`, thrown by `command`, which exits with `exitCode`. */
export function errorDocument(err: unknown, command: string, exitCode: number): ErrorDocument {
  const doc = (
    reason: DocumentReason,
    message: string,
    details: Record<string, unknown>,
    hint?: string,
  ): ErrorDocument => ({
    apiVersion: ERROR_API_VERSION,
    kind: 'Error',
    command,
    reason,
    exitCode,
    message,
    ...(hint !== undefined ? { hint } : {}),
    details,
  });
  if (err instanceof CommanderError)
    return doc('InvalidUsage', err.message.replace(/^error: /, ''), { code: err.code });
  if (!(err instanceof AgentPlaneError))
    return doc('InternalError', err instanceof Error ? err.message : String(err), {
      error: err instanceof Error ? err.name : typeof err,
    });
  const rawHint = 'hint' in err ? err.hint : undefined;
  const hint = typeof rawHint === 'string' && rawHint.length > 0 ? rawHint : undefined;
  const details: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    const plain = BASE_KEYS.has(key) ? undefined : plainValue(value);
    // an error's own `details` are the document's details, not one more level of them
    if (plain !== undefined && key === 'details' && typeof plain === 'object' && !Array.isArray(plain))
      Object.assign(details, plain);
    else if (plain !== undefined) details[key] = plain;
  }
  // a cluster failure has one reason in every command; the command's own code says where it stopped
  const reason = reasonOf(err);
  if (reason !== err.reason) details['commandReason'] = err.reason;
  return doc(reason, err.summary, details, hint);
}

/** How a command failed and what it asked for. */
export interface Failure {
  /** The command, e.g. `verify`, `mirror pull`; `agentplane` when none was named. */
  readonly command: string;
  /** The `-o` given: json and yaml get the error document on stdout. */
  readonly output: OutputChoice | undefined;
  /** The exit code, when the command has its own (diff and compat: 2); default {@link exitCodeFor}. */
  readonly exitCode?: number;
  /** Put before the message on stderr, e.g. `could not run: `. */
  readonly prefix?: string;
  /** Also point at the command's --help on stderr. */
  readonly usageHint?: boolean;
}

/**
 * Reports a failed command: the message on stderr (commander has written its own), with `-o json|yaml` the error
 * document on stdout, and the exit code.
 */
export function reportFailure(err: unknown, f: Failure): void {
  const exitCode = f.exitCode ?? exitCodeFor(err);
  if (!(err instanceof CommanderError)) process.stderr.write(`${describeError(err, f.prefix)}\n`);
  if (f.usageHint === true)
    process.stderr.write(`(run agentplane ${f.command === 'agentplane' ? '' : `${f.command} `}--help for usage)\n`);
  if (f.output === 'json' || f.output === 'yaml') {
    const doc = errorDocument(err, f.command, exitCode);
    process.stdout.write(f.output === 'json' ? `${JSON.stringify(doc, null, 2)}\n` : toYaml(doc));
  }
  process.exitCode = exitCode;
}

/** The `-o` value on a command line (the last one, as commander takes it), read before or without parsing. */
export function requestedOutput(argv: readonly string[]): string | undefined {
  let output: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === '-o' || arg === '--output') output = argv[++i];
    else if (arg.startsWith('--output=')) output = arg.slice('--output='.length);
    else if (/^-o[^-]/.test(arg)) output = arg.slice(2);
  }
  return output;
}
