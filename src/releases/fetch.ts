/**
 * Where pinned release files come from: a mirror directory laid out as `<mirror>/<tag>/<mirrorPath>`
 * (as `agentplane mirror pull` writes it), or the upstream repository's raw files at the pinned commit.
 * Sources only return bytes; the caller verifies them (load.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UPSTREAM_REPO } from './catalog.js';
import { MissingFileError, ReleaseError, SourceUnreachableError, type SourceOrigin } from './errors.js';
import type { PinnedFile, ReleaseFacts } from './types.js';

/**
 * The part of a fetch response the upstream source reads. The global `fetch` of Node 20+ returns one; declared here so
 * the package's types need neither DOM nor Node fetch typings in the consumer's project.
 */
export interface FetchResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  readonly body: { cancel(): Promise<void> } | null;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A fetch implementation as the upstream source calls it: the global `fetch` is one. */
export type FetchFunction = (url: string, init: { signal: AbortSignal; redirect: 'manual' }) => Promise<FetchResponse>;

/** Options for loadRelease. */
export interface FetchOptions {
  /**
   * Mirror directory (`<mirror>/<tag>/<path>`). `false`: use no mirror, fetch from upstream.
   * @default - defaultMirror(): `AGENTPLANE_MIRROR`, else none (fetch from upstream)
   */
  mirror?: string | false;
  /**
   * Cache root; files go to `<cacheDir>/<tag>/<path>`.
   * @default - defaultCacheDir()
   */
  cacheDir?: string;
  /**
   * fetch implementation for the upstream source.
   * @default - the global fetch
   */
  fetch?: FetchFunction;
  /**
   * Timeout per upstream request in milliseconds.
   * @default 30000
   */
  timeoutMs?: number;
}

/** A place pinned files can be read from. `name` is shown in errors. */
export interface FileSource {
  readonly name: string;
  /** Which kind of source it is, for the errors' hints. */
  readonly origin: SourceOrigin;
  /** The file's bytes, unverified. Throws MissingFileError or SourceUnreachableError. */
  read(facts: ReleaseFacts, file: PinnedFile): Promise<Buffer>;
}

/**
 * The mirror used when none is given: `AGENTPLANE_MIRROR` when set, else none (fetch from upstream). Nothing depends on
 * the working directory or on where the package is installed.
 */
export function defaultMirror(): string | undefined {
  const fromEnv = process.env.AGENTPLANE_MIRROR;
  return fromEnv ? resolve(fromEnv) : undefined;
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
    super(`mirror ${root}`, new Error('the mirror directory does not exist'), { failure: 'missing-directory' });
    this.hint = `${root} does not exist: point AGENTPLANE_MIRROR (or --mirror) at an existing directory laid out as <dir>/<tag>/<path>, fill one with agentplane mirror pull <release...> --to DIR, or unset AGENTPLANE_MIRROR to fetch the upstream files at the pinned commit`;
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
    origin: 'mirror',
    async read(facts, file) {
      const full = join(root, facts.tag, file.mirrorPath);
      try {
        return await readFile(full);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT')
          throw new MissingFileError(file.path, `${name} (looked for ${full})`, 'mirror');
        throw new SourceUnreachableError(name, err);
      }
    },
  };
}

/**
 * The release source answered a request with a redirect (3xx), which is never followed: a pinned file comes from the
 * pinned URL or not at all, and nothing the request carries reaches another host. `reason` is `RedirectRefused`
 * (CLI exit 3, like every release error); `status` and `location` say where it pointed.
 */
export class RedirectRefusedError extends ReleaseError {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly location: string | undefined,
  ) {
    super(
      'RedirectRefused',
      `release source ${url} answered HTTP ${status} redirecting to ${location ?? '(no Location header)'}: redirects are not followed`,
      'use a verified mirror (--mirror DIR or AGENTPLANE_MIRROR), or reach the upstream raw files without a proxy that redirects',
    );
  }
}

/**
 * Fetches raw files from the upstream repository at the pinned commit. HTTP 404 is MissingFileError; a redirect is
 * RedirectRefusedError (never followed, so no request goes to its target); network errors, timeouts and other non-2xx
 * are SourceUnreachableError.
 */
export function upstreamSource(fetchImpl: FetchFunction = globalThis.fetch, timeoutMs = 30_000): FileSource {
  const name = `upstream github.com/${UPSTREAM_REPO}`;
  return {
    name,
    origin: 'upstream',
    async read(facts, file) {
      const url = upstreamUrl(facts.commit, file.path);
      let res: FetchResponse;
      try {
        res = await fetchImpl(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
      } catch (err) {
        // AbortSignal.timeout rejects with a DOMException named TimeoutError (read by shape: it may come from another realm)
        const timedOut = (err as { name?: unknown } | null)?.name === 'TimeoutError';
        throw new SourceUnreachableError(`${name} (${url})`, err, timedOut ? { failure: 'timeout', timeoutMs } : {});
      }
      // `manual` hands the 3xx back instead of following it (Node's fetch gives the real status and Location)
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel();
        throw new RedirectRefusedError(url, res.status, res.headers.get('location') ?? undefined);
      }
      if (res.status === 404) throw new MissingFileError(file.path, `${name} (${url} answered 404)`, 'upstream');
      if (!res.ok)
        throw new SourceUnreachableError(`${name} (${url})`, new Error(`HTTP ${res.status} ${res.statusText}`), {
          status: res.status,
        });
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
