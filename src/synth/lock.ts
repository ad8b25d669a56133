/**
 * The lock side of synthesis: write `agentplane.lock.json` when absent, refuse when environment and lock disagree,
 * rewrite it only when asked (`--update-lock`).
 */
import type { LoadedRelease } from '../releases/index.js';
import { compareLock, lockFor, LockMismatchError, readLock, writeLock } from '../releases/index.js';

/** What happened to the lock file. */
export type LockOutcome = 'created' | 'unchanged' | 'updated';

/**
 * Compares the lock at `path` with the one `release` + `images` + `clients` give.
 * @throws LockMismatchError (differences listed) when they disagree and `update` is false; LockFileInvalidError on a corrupt lock.
 */
export function reconcileLock(
  path: string,
  release: LoadedRelease,
  images: Record<string, string>,
  update: boolean,
  clients: Record<string, string> = {},
): LockOutcome {
  const expected = lockFor(release, images, clients);
  const current = readLock(path);
  if (current === undefined) {
    writeLock(path, expected);
    return 'created';
  }
  const differences = compareLock(current, expected);
  if (differences.length === 0) return 'unchanged';
  if (!update)
    throw new LockMismatchError(path, differences, [...new Set(Object.keys(images).map((k) => k.split('/')[0]!))]);
  writeLock(path, expected);
  return 'updated';
}
