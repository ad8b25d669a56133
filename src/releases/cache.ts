/**
 * The cache of verified release files: `<root>/<tag>/<path>`. Every read is re-verified against the pinned sha256;
 * an entry that does not match is deleted and reported as absent, so it is refetched and never trusted.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { PinnedFile } from './types.js';

/**
 * The cache root: `AGENTPLANE_CACHE_DIR`, else `$XDG_CACHE_HOME/agentplane`, else `~/.cache/agentplane`.
 */
export function defaultCacheDir(): string {
  if (process.env.AGENTPLANE_CACHE_DIR) return resolve(process.env.AGENTPLANE_CACHE_DIR);
  if (process.env.XDG_CACHE_HOME) return join(resolve(process.env.XDG_CACHE_HOME), 'agentplane');
  return join(homedir(), '.cache', 'agentplane');
}

/** Lower-case hex sha256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Path of a cached file: `<root>/<tag>/<file.path>`. */
function cachePath(root: string, tag: string, file: PinnedFile): string {
  return join(root, tag, file.path);
}

/**
 * The cached bytes of `file` when present and matching the pinned sha256; undefined otherwise.
 * A cached copy that does not match is removed.
 */
export async function readCached(root: string, tag: string, file: PinnedFile): Promise<Buffer | undefined> {
  const path = cachePath(root, tag, file);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    return undefined;
  }
  if (sha256Hex(bytes) === file.sha256) return bytes;
  await rm(path, { force: true });
  return undefined;
}

/**
 * Stores verified bytes (write to a temporary name, then rename, so readers never see half a file).
 * Returns false when the cache cannot be written (read-only home, full disk); the caller goes on with the verified bytes.
 */
export async function writeCached(root: string, tag: string, file: PinnedFile, bytes: Buffer): Promise<boolean> {
  const path = cachePath(root, tag, file);
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(tmp, bytes);
    await rename(tmp, path);
    return true;
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
    return false;
  }
}
