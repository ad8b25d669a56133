/**
 * Exit codes of `agentplane migrate-storage`: 0 when the dry-run or the run finished, one code per kind of stop. They
 * sit above the CLI-wide table (src/cli/exit-codes.ts, 0-9) and plan-upgrade's verdicts (10-12); a cluster that does
 * not answer, refuses the credentials or the access keeps the CLI-wide 7, 8, 9. Whatever the code, no storedVersions
 * of a kind whose objects were not all rewritten were touched.
 */
import type { StorageMigrationReason } from '../../adapter/kubernetes/storage-migration.js';

export const MIGRATE_EXIT_CODES = {
  /** Dry-run printed, or every object rewritten and storedVersions pruned where needed. */
  ok: 0,
  /** A write (or the storedVersions status patch) failed. */
  writeFailed: 13,
  /** The re-list found objects without the run's marker after the last pass. */
  unconfirmed: 14,
} as const;

/**
 * The exit code of a stop; undefined (the CLI-wide code of the error's category) for a read that failed and for a
 * cluster that did not answer (`unreachable`, `timeout`) or refused the credentials or the access.
 */
export function migrateExitCode(reason: StorageMigrationReason, failureCategory?: string): number | undefined {
  if (
    failureCategory !== undefined &&
    ['unreachable', 'timeout', 'unauthenticated', 'forbidden'].includes(failureCategory)
  )
    return undefined;
  switch (reason) {
    case 'StorageWriteFailed':
    case 'StoragePruneFailed':
      return MIGRATE_EXIT_CODES.writeFailed;
    case 'StorageCountUnconfirmed':
      return MIGRATE_EXIT_CODES.unconfirmed;
    case 'StorageReadFailed':
      return undefined;
  }
}

/** The exit-code lines of `migrate-storage --help`. */
export function migrateExitCodeHelp(): string {
  return [
    'Exit codes:',
    `  ${MIGRATE_EXIT_CODES.ok}   done (dry-run: printed what --apply would rewrite and prune)`,
    `  ${MIGRATE_EXIT_CODES.writeFailed}  a write or the storedVersions patch failed (StorageWriteFailed, StoragePruneFailed)`,
    `  ${MIGRATE_EXIT_CODES.unconfirmed}  the re-list found objects without this run's marker (StorageCountUnconfirmed)`,
    '  2-9 an error, as in `agentplane --help` (2 usage, 7 cluster unreachable or a read failed, 8 credentials refused, 9 forbidden)',
    'Every stop leaves status.storedVersions of unfinished kinds untouched; resume with --apply --resume MARKER.',
  ].join('\n');
}
