/**
 * Maps errors to CLI exit codes and one readable message. Every AgentPlane error carries an `exitCategory`
 * (src/model/errors.ts) and {@link EXIT_CODES} maps each category to its code, so a class name never decides an exit
 * code. Anything else exits with {@link ExitCode.internal} and prints its stack.
 */
import { CommanderError } from 'commander';
import { AgentPlaneError, type ExitCategory } from '../model/errors.js';
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
 * One message for the terminal: `error: <prefix><message>`, its `hint` unless the message already shows it, and the
 * stack only for internal errors.
 */
export function describeError(err: unknown, prefix = ''): string {
  if (!(err instanceof Error)) return `error: ${prefix}${String(err)}`;
  const hint = 'hint' in err ? err.hint : undefined;
  const parts = [`error: ${prefix}${err.message}`];
  const shown = err instanceof AgentPlaneError && err.hintInMessage;
  if (typeof hint === 'string' && hint.length > 0 && !shown) parts.push(`hint: ${hint}`);
  if (exitCodeFor(err) === ExitCode.internal && err.stack !== undefined) parts.push(err.stack);
  return parts.join('\n');
}
