/**
 * The lock file `agentplane.lock.json`: what an environment was synthesized from (release, commit, pinned file hashes,
 * CRD schema fingerprints, images). Written as stable JSON (2-space indent, map keys sorted, trailing newline).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import type { Assert, SameType } from '../model/same-type.js';
import { pinnedSchemaFingerprint, servedVersions } from './crd-schema.js';
import { LockFileInvalidError, LockMismatchError, type LockIssue } from './errors.js';
import type { LockDifference } from './lock-difference.js';
import type { LoadedRelease, SandboxKind } from './types.js';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lower-case hex sha256');

/** A parsed lock file. */
export interface LockFile {
  lockVersion: 1;
  /** The release tag, e.g. `v0.5.6`. */
  release: string;
  /** The release's 40-character git commit. */
  commit: string;
  /** Upstream path -> sha256 of the pinned file. */
  files: Record<string, string>;
  /** `<Kind>/<version>` -> schemaFingerprint of that served version's openAPIV3Schema. */
  crdFingerprints: Record<string, string>;
  /** Logical name (e.g. `controller`) -> image reference. */
  images: Record<string, string>;
  /** `<environment>/<sdk>/<mode>` -> client version; only when an environment declares a client. */
  clients?: Record<string, string>;
  /**
   * `<environment>/<rule>/<construct path>` -> reason: output rules an environment breaks on purpose
   * (`AgentEnvironment.acknowledge`); only when one is acknowledged.
   */
  acknowledgements?: Record<string, string>;
}

/**
 * zod schema of {@link LockFile}; it must infer exactly that interface (checked below).
 * @internal
 */
export const LockFileSchema = z.strictObject({
  lockVersion: z.literal(1),
  release: z.string().min(1),
  commit: z.string().regex(/^[0-9a-f]{40}$/, 'must be a 40-character git commit'),
  files: z.record(z.string(), sha256),
  crdFingerprints: z.record(z.string(), sha256),
  images: z.record(z.string(), z.string().min(1)),
  clients: z.record(z.string(), z.string().min(1)).exactOptional(),
  acknowledgements: z.record(z.string(), z.string().min(1)).exactOptional(),
});

/** @internal */
export type LockFileMatchesSchema = Assert<SameType<LockFile, z.infer<typeof LockFileSchema>>>;

/** The lock an environment on `release` with these `images` (and declared `clients`, acknowledged rules) must match. */
export function lockFor(
  release: LoadedRelease,
  images: Record<string, string>,
  clients: Record<string, string> = {},
  acknowledgements: Record<string, string> = {},
): LockFile {
  const { facts } = release;
  const crdFingerprints: Record<string, string> = {};
  for (const kind of Object.keys(facts.crds).sort() as SandboxKind[]) {
    for (const version of servedVersions(release, kind)) {
      crdFingerprints[`${kind}/${version}`] = pinnedSchemaFingerprint(release, kind, version);
    }
  }
  return {
    lockVersion: 1,
    release: facts.tag,
    commit: facts.commit,
    files: sortedRecord(Object.fromEntries(facts.files.map((f) => [f.path, f.sha256]))),
    crdFingerprints: sortedRecord(crdFingerprints),
    images: sortedRecord(images),
    ...(Object.keys(clients).length > 0 ? { clients: sortedRecord(clients) } : {}),
    ...(Object.keys(acknowledgements).length > 0 ? { acknowledgements: sortedRecord(acknowledgements) } : {}),
  };
}

/**
 * Reads a lock file. Returns undefined when `path` does not exist.
 * @throws LockFileInvalidError when the file is not JSON or does not match LockFileSchema (lists every problem).
 */
export function readLock(path: string): LockFile | undefined {
  if (!existsSync(path)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new LockFileInvalidError(path, `not JSON (${(err as Error).message})`, [
      { field: '(root)', code: 'NotJson' },
    ]);
  }
  const parsed = LockFileSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
    throw new LockFileInvalidError(path, problems.join('; '), lockIssues(parsed.error.issues));
  }
  return parsed.data;
}

/** The schema's issues as fields and codes; an unrecognized key is an issue of that key. */
function lockIssues(issues: readonly z.core.$ZodIssue[]): LockIssue[] {
  return issues.flatMap((i) => {
    const at = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys')
      return i.keys.map((k) => ({ field: at ? `${at}.${k}` : k, code: 'UnrecognizedKey' }));
    return [{ field: at || '(root)', code: i.code }];
  });
}

/** The stable text of a lock: 2-space JSON, top-level fields in schema order, map keys sorted, trailing newline. */
function formatLock(lock: LockFile): string {
  const stable: LockFile = {
    lockVersion: lock.lockVersion,
    release: lock.release,
    commit: lock.commit,
    files: sortedRecord(lock.files),
    crdFingerprints: sortedRecord(lock.crdFingerprints),
    images: sortedRecord(lock.images),
    ...(lock.clients !== undefined && Object.keys(lock.clients).length > 0
      ? { clients: sortedRecord(lock.clients) }
      : {}),
    ...(lock.acknowledgements !== undefined && Object.keys(lock.acknowledgements).length > 0
      ? { acknowledgements: sortedRecord(lock.acknowledgements) }
      : {}),
  };
  return `${JSON.stringify(stable, null, 2)}\n`;
}

/** Writes `lock` to `path` as formatLock does. @throws LockFileInvalidError when `lock` does not match LockFileSchema. */
export function writeLock(path: string, lock: LockFile): void {
  const parsed = LockFileSchema.safeParse(lock);
  if (!parsed.success)
    throw new LockFileInvalidError(
      path,
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
      lockIssues(parsed.error.issues),
    );
  writeFileSync(path, formatLock(parsed.data));
}

/** Differences between the lock file (`expected`) and what the environment would write (`actual`); empty when they agree. */
export function compareLock(expected: LockFile, actual: LockFile): LockDifference[] {
  const out: LockDifference[] = [];
  for (const field of ['lockVersion', 'release', 'commit'] as const) {
    if (expected[field] !== actual[field])
      out.push({ field, locked: String(expected[field]), declared: String(actual[field]) });
  }
  for (const field of ['files', 'crdFingerprints', 'images', 'clients', 'acknowledgements'] as const) {
    const a = expected[field] ?? {};
    const b = actual[field] ?? {};
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (a[key] === b[key]) continue;
      out.push({
        field,
        key,
        ...(key in a ? { locked: a[key] } : {}),
        ...(key in b ? { declared: b[key] } : {}),
      });
    }
  }
  return out;
}

/** What happened to the lock file. */
export type LockOutcome = 'created' | 'unchanged' | 'updated';

/**
 * Compares the lock at `path` with `expected`: writes it when absent, rewrites it when they differ and `update` is set.
 * @throws LockMismatchError (differences listed; `hint` replaces the default advice) when they disagree and `update` is
 *   false; LockFileInvalidError on a corrupt lock.
 */
export function reconcileLock(path: string, expected: LockFile, update: boolean, hint?: string): LockOutcome {
  const current = readLock(path);
  if (current === undefined) {
    writeLock(path, expected);
    return 'created';
  }
  const differences = compareLock(current, expected);
  if (differences.length === 0) return 'unchanged';
  if (!update) {
    const environments = [...new Set(Object.keys(expected.images).map((k) => k.split('/')[0]!))];
    throw new LockMismatchError(path, differences, environments, hint);
  }
  writeLock(path, expected);
  return 'updated';
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k] as string]),
  );
}
