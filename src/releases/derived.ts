/**
 * Derived cache entries: a value computed from verified bytes (e.g. the parsed YAML documents of a pinned file), stored
 * as JSON under `<root>/.derived/<kind>/<key>.json` so later processes skip the computation.
 *
 * An entry is trusted only when (a) its header names the exact key asked for (the sha256 of the source bytes, which the
 * caller has just verified, plus the producer's version) and (b) the sha256 of its payload matches the header. Anything
 * else (missing, unreadable, truncated, a flipped byte, another key) is reported as absent and removed, so the caller
 * rebuilds it from the verified source; a derived entry is never a reason to skip verifying the source.
 *
 * Synchronous, because validation and synthesis are (entries are read once per process and key).
 *
 * File layout: one header line `{"key":"<key>","payloadSha256":"<hex>"}`, a newline, then the payload (JSON text).
 */
import { isDeepStrictEqual } from 'node:util';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sha256Hex } from './cache.js';
import type { LoadedRelease } from './types.js';

/** Path of a derived entry: `<root>/.derived/<kind>/<name>.json`; `name` is a sha256 of the key. */
export function derivedPath(root: string, kind: string, key: string): string {
  return join(root, '.derived', kind, `${sha256Hex(key)}.json`);
}

/**
 * The payload of the derived entry for `key`, parsed, when present and intact; undefined otherwise (a damaged entry or
 * one written for another key is removed).
 */
export function readDerived(root: string, kind: string, key: string): unknown {
  const path = derivedPath(root, kind, key);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const nl = text.indexOf('\n');
  if (nl > 0) {
    const payload = text.slice(nl + 1);
    try {
      const header = JSON.parse(text.slice(0, nl)) as { key?: unknown; payloadSha256?: unknown };
      if (header.key === key && header.payloadSha256 === sha256Hex(payload)) return JSON.parse(payload);
    } catch {
      // unparsable header or payload: damaged, rebuilt below
    }
  }
  try {
    rmSync(path, { force: true });
  } catch {
    // a read-only cache: the damaged entry stays, and is still never used
  }
  return undefined;
}

/**
 * Stores `value` as the derived entry for `key` (temporary name, then rename). Values JSON cannot carry exactly
 * (undefined in arrays, NaN, Infinity, Dates, BigInts, ...) are not stored: returns false and the caller keeps computing.
 * Also false when the cache cannot be written.
 */
export function writeDerived(root: string, kind: string, key: string, value: unknown): boolean {
  const payload = JSON.stringify(value);
  if (payload === undefined || !isDeepStrictEqual(JSON.parse(payload), value)) return false;
  const path = derivedPath(root, kind, key);
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, `${JSON.stringify({ key, payloadSha256: sha256Hex(payload) })}\n${payload}`);
    renameSync(tmp, path);
    return true;
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was written
    }
    return false;
  }
}

const cacheRoots = new WeakMap<LoadedRelease, string>();

/** Records the cache root `release` was loaded with (called by loadRelease). */
export function rememberCacheRoot(release: LoadedRelease, root: string): void {
  cacheRoots.set(release, root);
}

/**
 * The cache root `release` was loaded with, where later stages keep their derived entries (compiled validators, emitted
 * YAML); undefined for a release object not made by loadRelease (those stages then compute everything in process).
 */
export function releaseCacheRoot(release: LoadedRelease): string | undefined {
  return cacheRoots.get(release);
}
