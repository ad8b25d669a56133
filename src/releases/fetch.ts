/**
 * Where pinned release files come from: a mirror directory laid out as `<mirror>/<tag>/<mirrorPath>`
 * (as `../shared/agent-sandbox/releases`), or the upstream repository's raw files at the pinned commit.
 * Sources only return bytes; the caller verifies them (load.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UPSTREAM_REPO } from './catalog.js';
import { MissingFileError, SourceUnreachableError } from './errors.js';
import type { PinnedFile, ReleaseFacts } from './types.js';

/** Options for loadRelease. */
export interface FetchOptions {
  /**
   * Mirror directory (`<mirror>/<tag>/<path>`). Default: defaultMirror(). `false`: use no mirror, fetch from upstream.
   */
  mirror?: string | false;
  /** Cache root; files go to `<cacheDir>/<tag>/<path>`. Default: defaultCacheDir(). */
  cacheDir?: string;
  /** fetch implementation for the upstream source. Default: the global fetch. */
  fetch?: typeof fetch;
  /** Timeout per upstream request in milliseconds. Default 30000. */
  timeoutMs?: number;
}

/** A place pinned files can be read from. `name` is shown in errors. */
export interface FileSource {
  readonly name: string;
  /** The file's bytes, unverified. Throws MissingFileError or SourceUnreachableError. */
  read(facts: ReleaseFacts, file: PinnedFile): Promise<Buffer>;
}

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SHARED_MIRROR = '../shared/agent-sandbox/releases';

/**
 * The mirror used when none is given: `AGENTPLANE_MIRROR` when set, else `../shared/agent-sandbox/releases` relative to
 * the current directory or to the repository root, when that directory exists; else undefined (fetch from upstream).
 */
export function defaultMirror(): string | undefined {
  const fromEnv = process.env.AGENTPLANE_MIRROR;
  if (fromEnv) return resolve(fromEnv);
  for (const candidate of [resolve(process.cwd(), SHARED_MIRROR), resolve(REPO_ROOT, SHARED_MIRROR)]) {
    if (isDirectory(candidate)) return candidate;
  }
  return undefined;
}

/** Raw-file URL of `path` at `commit` in the upstream repository (`https://raw.githubusercontent.com/<owner>/<repo>/<commit>/<path>`). */
export function upstreamUrl(commit: string, path: string): string {
  return `https://raw.githubusercontent.com/${UPSTREAM_REPO}/${commit}/${path}`;
}

/**
 * A mirror directory that was named (`--mirror`, AGENTPLANE_MIRROR) but does not exist. A SourceUnreachableError (CLI
 * exit 3) whose hint says what to set instead: the network has nothing to do with it.
 */
export class MirrorDirectoryMissingError extends SourceUnreachableError {
  override readonly reason = 'MirrorDirectoryMissing';
  override readonly hint: string;
  constructor(root: string) {
    super(`mirror ${root}`, new Error('the mirror directory does not exist'));
    this.hint = `${root} does not exist: point AGENTPLANE_MIRROR (or --mirror) at an existing directory laid out as <dir>/<tag>/<path>, or unset AGENTPLANE_MIRROR to use the default (../shared/agent-sandbox/releases when it exists, else the upstream files at the pinned commit)`;
    this.message = `cannot reach release source mirror ${root}: the mirror directory does not exist\n  hint: ${this.hint}`;
  }
}

/**
 * Reads `<dir>/<tag>/<mirrorPath>`; a missing file is MissingFileError.
 * @throws MirrorDirectoryMissingError (a SourceUnreachableError) at once when `dir` is not a directory, even if every file is cached: a mirror that
 *   was named (`--mirror`, AGENTPLANE_MIRROR) but does not exist is refused, never silently unused.
 */
export function mirrorSource(dir: string): FileSource {
  const root = resolve(dir);
  const name = `mirror ${root}`;
  if (!isDirectory(root)) throw new MirrorDirectoryMissingError(root);
  return {
    name,
    async read(facts, file) {
      const full = join(root, facts.tag, file.mirrorPath);
      try {
        return await readFile(full);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new MissingFileError(file.path, `${name} (looked for ${full})`);
        throw new SourceUnreachableError(name, err);
      }
    },
  };
}

/** Fetches raw files from the upstream repository at the pinned commit. HTTP 404 is MissingFileError; network errors, timeouts and other non-2xx are SourceUnreachableError. */
export function upstreamSource(fetchImpl: typeof fetch = globalThis.fetch, timeoutMs = 30_000): FileSource {
  const name = `upstream github.com/${UPSTREAM_REPO}`;
  return {
    name,
    async read(facts, file) {
      const url = upstreamUrl(facts.commit, file.path);
      let res: Response;
      try {
        res = await fetchImpl(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
      } catch (err) {
        throw new SourceUnreachableError(`${name} (${url})`, err);
      }
      if (res.status === 404) throw new MissingFileError(file.path, `${name} (${url} answered 404)`);
      if (!res.ok) throw new SourceUnreachableError(`${name} (${url})`, new Error(`HTTP ${res.status} ${res.statusText}`));
      try {
        return Buffer.from(await res.arrayBuffer());
      } catch (err) {
        throw new SourceUnreachableError(`${name} (${url})`, err);
      }
    },
  };
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}
