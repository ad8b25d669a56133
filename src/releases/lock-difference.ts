/** How a lock file and an environment disagree, as data and as one line for a person. */

/** A lock field that can differ: a scalar, or a map whose entries are compared one by one. */
export type LockField =
  'lockVersion' | 'release' | 'commit' | 'files' | 'crdFingerprints' | 'images' | 'clients' | 'acknowledgements';

/** One way the lock file and the environment disagree. */
export interface LockDifference {
  readonly field: LockField;
  /** The entry of a map field: a file path, CRD name, image role, client key or acknowledged rule. */
  readonly key?: string;
  /** The lock's value; absent when only the environment has the entry. */
  readonly locked?: string;
  /** What the environment would write; absent when only the lock has the entry. */
  readonly declared?: string;
}

/** One line for a person: `images[controller]: lock has A, environment has B`. */
export function describeLockDifference(d: LockDifference): string {
  const where = d.key === undefined ? d.field : `${d.field}[${d.key}]`;
  if (d.declared === undefined) return `${where}: in the lock (${d.locked}) but not in the environment`;
  if (d.locked === undefined) return `${where}: in the environment (${d.declared}) but not in the lock`;
  return `${where}: lock has ${d.locked}, environment has ${d.declared}`;
}
