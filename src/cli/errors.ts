/**
 * Maps errors to CLI exit codes and one readable message. Every AgentPlane error carries an `exitCategory`
 * (src/model/errors.ts) and {@link EXIT_CODES} maps each category to its code, so a class name never decides an exit
 * code. Anything else exits with {@link ExitCode.internal} and prints its stack.
 */
import { CommanderError } from 'commander';
import { AgentPlaneError, type ExitCategory } from '../model/errors.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';

/**
 * A command line that cannot be run as given, found after parsing (e.g. `--env` omitted while dist/ holds several
 * environments): exit {@link ExitCode.usage}. `hint` says what to pass.
 */
export class UsageError extends AgentPlaneError {
  readonly reason = 'InvalidUsage';
  readonly exitCategory = 'usage';
  constructor(message: string, readonly hint: string) {
    super(message);
  }
}

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
};

/** The exit code for an error (see exit-codes.ts). */
export function exitCodeFor(err: unknown): ExitCodeValue {
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  if (err instanceof AgentPlaneError) return EXIT_CODES[err.exitCategory];
  return ExitCode.internal;
}

/**
 * One message for the terminal: `error: <prefix><message>`, its `hint` unless the message already shows it, and the
 * stack only for internal errors.
 */
export function describeError(err: unknown, prefix = ''): string {
  if (!(err instanceof Error)) return `error: ${prefix}${String(err)}`;
  const hint = (err as { hint?: unknown }).hint;
  const parts = [`error: ${prefix}${err.message}`];
  const shown = err instanceof AgentPlaneError && err.hintInMessage;
  if (typeof hint === 'string' && hint.length > 0 && !shown) parts.push(`hint: ${hint}`);
  if (exitCodeFor(err) === ExitCode.internal && err.stack !== undefined) parts.push(err.stack);
  return parts.join('\n');
}
