/**
 * Filling a release mirror for offline and air-gapped use: every pinned file of a release, fetched and verified like
 * `loadRelease` does (sha256 against the catalog), written as `<dir>/<tag>/<mirrorPath>`, the layout `--mirror` reads.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { FetchOptions } from './fetch.js';
import { loadRelease } from './load.js';

/** What was written for one release. */
export interface MirroredRelease {
  readonly tag: string;
  readonly commit: string;
  readonly files: number;
  readonly bytes: number;
}

/**
 * Writes the verified files of `tag` under `dir/<tag>/`. The files come from `opts` (another mirror, the cache, else
 * upstream at the pinned commit), so a mirror is never filled with bytes that were not verified.
 * @throws the errors of loadRelease (unknown release, checksum mismatch, missing file, unreachable source).
 */
export async function pullRelease(tag: string, dir: string, opts: FetchOptions = {}): Promise<MirroredRelease> {
  const release = await loadRelease(tag, opts);
  let bytes = 0;
  for (const file of release.facts.files) {
    const content = release.files.get(file.path)!;
    const target = join(resolve(dir), release.facts.tag, file.mirrorPath);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
    bytes += content.length;
  }
  return { tag: release.facts.tag, commit: release.facts.commit, files: release.facts.files.length, bytes };
}
