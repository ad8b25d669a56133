/**
 * A command line that cannot be run as given, found after parsing (e.g. `--env` omitted while dist/ holds several
 * environments): exit 2 (ExitCode.usage). `hint` says what to pass. Its own module so start-up paths can throw it
 * without loading the error mapping.
 */
import { AgentPlaneError } from '../model/errors.js';

export class UsageError extends AgentPlaneError {
  readonly reason = 'InvalidUsage';
  readonly exitCategory = 'usage';
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}
