/**
 * Maps errors thrown by the library layers to CLI exit codes and one readable message.
 * Errors are recognised by their class name (and the `code`/`hint` shape of release errors) so the CLI needs no
 * knowledge of each layer's internals; an error class not listed here exits with {@link ExitCode.internal}.
 */
import { CommanderError } from 'commander';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';

const BY_NAME: Readonly<Record<string, ExitCodeValue>> = {
  LockMismatchError: ExitCode.lockMismatch,
  LockFileInvalidError: ExitCode.invalid,
  ConstructPropsError: ExitCode.invalid,
  SchemaViolationError: ExitCode.invalid,
  DuplicateObjectError: ExitCode.invalid,
  UnpinnedImageError: ExitCode.invalid,
  SynthesisError: ExitCode.invalid,
  EnvironmentModuleError: ExitCode.invalid,
  UnknownReleaseError: ExitCode.release,
  ChecksumMismatchError: ExitCode.release,
  MissingFileError: ExitCode.release,
  SourceUnreachableError: ExitCode.release,
  ReleaseError: ExitCode.release,
  ClusterUnreachableError: ExitCode.cluster,
  ClusterForbiddenError: ExitCode.cluster,
  ClusterUnauthenticatedError: ExitCode.cluster,
};

/** The exit code for an error: its class (or a parent class) by name, else {@link ExitCode.internal}. */
export function exitCodeFor(err: unknown): ExitCodeValue {
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  let proto: unknown = err === null || typeof err !== 'object' ? undefined : Object.getPrototypeOf(err);
  while (proto !== null && proto !== undefined && proto !== Error.prototype) {
    const name = (proto as { constructor?: { name?: string } }).constructor?.name;
    if (name !== undefined && name in BY_NAME) return BY_NAME[name]!;
    proto = Object.getPrototypeOf(proto);
  }
  return ExitCode.internal;
}

/** One message for the terminal: the error message, its `hint` when it has one, and the stack only for internal errors. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return `error: ${String(err)}`;
  const hint = (err as { hint?: unknown }).hint;
  const parts = [`error: ${err.message}`];
  if (typeof hint === 'string' && hint.length > 0) parts.push(`hint: ${hint}`);
  if (exitCodeFor(err) === ExitCode.internal && err.stack !== undefined) parts.push(err.stack);
  return parts.join('\n');
}
