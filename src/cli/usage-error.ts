/**
 * A command line that cannot be run as given, found after parsing (e.g. `--env` omitted while dist/ holds several
 * environments): exit 2 (ExitCode.usage). `hint` says what to pass.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(message: string, readonly hint: string) {
    super(message);
  }
}
