/**
 * Maps errors thrown by the library layers to CLI exit codes and one readable message.
 * Layers the CLI imports are matched with `instanceof`; errors of layers behind them (the adapter's kubeconfig and
 * credential errors) by class name. Anything else exits with {@link ExitCode.internal} and prints its stack.
 */
import { CommanderError } from 'commander';
// The layers' error modules, not their barrels: every command loads this file, and a barrel would load the layer
// (cdk8s for constructs, ajv and zod for releases) before the command runs.
import { ConstructError } from '../constructs/errors.js';
import { LockFileInvalidError, LockMismatchError, ReleaseError } from '../releases/errors.js';
import { SynthesisError } from '../synth/errors.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { UsageError } from './usage-error.js';

export { UsageError };

/** Errors from layers the CLI does not import directly, by class name (the class or any parent). */
const BY_NAME: Readonly<Record<string, ExitCodeValue>> = {
  EnvironmentDescriptorError: ExitCode.invalid,
  KubeconfigError: ExitCode.usage,
  ExecCredentialError: ExitCode.unauthenticated,
  KubeDeadlineError: ExitCode.cluster,
  LiveReadError: ExitCode.cluster,
  LiveStateError: ExitCode.cluster,
  ManifestParseError: ExitCode.invalid,
  ManifestSourceError: ExitCode.invalid,
  ObjectIdentityError: ExitCode.invalid,
  VerifyCouldNotRunError: ExitCode.cluster,
};

/** The exit code of a classified adapter error category (src/adapter/types.ts AdapterError), when it has its own. */
export function exitCodeForCategory(category: string): ExitCodeValue | undefined {
  if (category === 'unauthenticated') return ExitCode.unauthenticated;
  if (category === 'forbidden') return ExitCode.forbidden;
  if (category === 'unreachable' || category === 'timeout') return ExitCode.cluster;
  return undefined;
}

/** The exit code for an error (see exit-codes.ts); a cluster error carrying a classified `category` gets that category's code. */
export function exitCodeFor(err: unknown): ExitCodeValue {
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  if (err instanceof UsageError) return ExitCode.usage;
  if (err instanceof LockMismatchError) return ExitCode.lockMismatch;
  if (err instanceof LockFileInvalidError) return ExitCode.invalid;
  if (err instanceof ReleaseError) return ExitCode.release;
  if (err instanceof ConstructError || err instanceof SynthesisError) return ExitCode.invalid;
  const category = (err as { category?: unknown } | null)?.category;
  const byCategory = typeof category === 'string' ? exitCodeForCategory(category) : undefined;
  if (byCategory !== undefined) return byCategory;
  let proto: unknown = err === null || typeof err !== 'object' ? undefined : Object.getPrototypeOf(err);
  while (proto !== null && proto !== undefined && proto !== Error.prototype) {
    const name = (proto as { constructor?: { name?: string } }).constructor?.name;
    if (name !== undefined && name in BY_NAME) return BY_NAME[name]!;
    proto = Object.getPrototypeOf(proto);
  }
  return ExitCode.internal;
}

/** One message for the terminal: the message, its `hint` unless the message already shows it, and the stack only for internal errors. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return `error: ${String(err)}`;
  const hint = (err as { hint?: unknown }).hint;
  const parts = [`error: ${err.message}`];
  if (typeof hint === 'string' && hint.length > 0 && !err.message.includes(hint)) parts.push(`hint: ${hint}`);
  if (exitCodeFor(err) === ExitCode.internal && err.stack !== undefined) parts.push(err.stack);
  return parts.join('\n');
}
