/**
 * loadRelease: every pinned file of a release, from the cache or a source, sha256-verified, parsed with yaml 2.
 */
import { createRequire } from 'node:module';
import { defaultCacheDir, readCached, sha256Hex, writeCached } from './cache.js';
import { readDerived, rememberCacheRoot, writeDerived } from './derived.js';
import { ChecksumMismatchError, ReleaseParseError } from './errors.js';
import { defaultMirror, mirrorSource, upstreamSource, type FetchOptions, type FileSource } from './fetch.js';
import { isKubeObject } from './kube-object.js';
import { parsedDocumentsKey } from './parsed-documents-key.js';
import { releaseFacts } from './supported.js';
import type { KubeObject, LoadedRelease, PinnedFile, ReleaseFacts } from './types.js';

/**
 * Loads one supported release: each pinned file comes from the cache when its cached copy still matches the pinned
 * sha256, else from the mirror (`opts.mirror`, default defaultMirror()) or, with no mirror, from the upstream raw file at
 * the pinned commit; its sha256 is verified before use and the verified copy cached under `<cacheDir>/<tag>/`.
 * Files are read again (and re-verified) on every call. Parsing is the slow part: the parsed documents of a verified file
 * are reused from memory (same process) or from a derived cache entry (derived.ts) keyed by the file's pinned sha256 and
 * the yaml version, which is used only after the file's bytes were verified against that sha256.
 *
 * `objects` holds the parsed documents (empty ones dropped) of each YAML file whose documents are all Kubernetes
 * objects (`apiVersion` + `kind`); other files (e.g. `helm/values.yaml`, the sandboxd OpenAPI spec) are in `files` only.
 *
 * @throws UnknownReleaseError (tag), ChecksumMismatchError (file, expected, actual), MissingFileError (file, source),
 *   SourceUnreachableError (source, cause), ReleaseParseError (file).
 */
export async function loadRelease(tag: string, opts: FetchOptions = {}): Promise<LoadedRelease> {
  const facts = releaseFacts(tag);
  const cacheRoot = opts.cacheDir ?? defaultCacheDir();
  const mirror = opts.mirror === false ? undefined : (opts.mirror ?? defaultMirror());
  const source = mirror !== undefined ? mirrorSource(mirror) : upstreamSource(opts.fetch, opts.timeoutMs);

  // allSettled: every read finishes before an error is raised (no stray cache writes), and the error reported is
  // the first failing file in catalog order, so the same fault gives the same message every run.
  const settled = await Promise.allSettled(facts.files.map((file) => verifiedBytes(facts, file, source, cacheRoot)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const entries = facts.files.map(
    (file, i) => [file.path, (settled[i] as PromiseFulfilledResult<Buffer>).value] as const,
  );
  const files = new Map<string, Buffer>(entries);
  const objects = new Map<string, readonly KubeObject[]>();
  const yamlFiles = facts.files.filter((f) => /\.ya?ml$/.test(f.path));
  for (const f of yamlFiles) {
    const docs = await parsedCopy(f, files.get(f.path)!, cacheRoot);
    if (docs.length > 0 && docs.every(isKubeObject)) objects.set(f.path, docs as KubeObject[]);
  }
  const release: LoadedRelease = { facts, files, objects };
  rememberCacheRoot(release, cacheRoot);
  return release;
}

async function verifiedBytes(
  facts: ReleaseFacts,
  file: PinnedFile,
  source: FileSource,
  cacheRoot: string,
): Promise<Buffer> {
  const cached = await readCached(cacheRoot, facts.tag, file);
  if (cached) return cached;
  const bytes = await source.read(facts, file);
  const actual = sha256Hex(bytes);
  if (actual !== file.sha256)
    throw new ChecksumMismatchError(file.path, file.sha256, actual, source.name, source.origin);
  await writeCached(cacheRoot, facts.tag, file, bytes);
  return bytes;
}

/**
 * Parsed documents of verified files, keyed by sha256. Bytes are still read and verified on every load; only the YAML
 * parse (about 0.6 s for a 400 KB CRD) is reused, and each caller gets its own deep copy.
 */
const parsedBySha256 = new Map<string, unknown[]>();

/** Derived-cache kind (folder) of parsed documents. */
export const PARSED_DOCUMENTS = 'parsed-documents';

async function parsedCopy(file: PinnedFile, verified: Buffer, cacheRoot: string): Promise<unknown[]> {
  let docs = parsedBySha256.get(file.sha256);
  if (!docs) {
    const key = parsedDocumentsKey(file.sha256);
    const derived = readDerived(cacheRoot, PARSED_DOCUMENTS, key);
    if (Array.isArray(derived)) {
      docs = derived;
    } else {
      docs = parseYamlDocuments(file.path, verified.toString('utf8'));
      writeDerived(cacheRoot, PARSED_DOCUMENTS, key, docs);
    }
    parsedBySha256.set(file.sha256, docs);
  }
  return structuredClone(docs);
}

const nodeRequire = createRequire(import.meta.url);

/**
 * Parses a multi-document YAML text; empty and comment-only documents are dropped. The parser is required here, on
 * the first cache miss: with a warm cache a command never loads it. @throws ReleaseParseError
 */
function parseYamlDocuments(file: string, text: string): unknown[] {
  const { parseAllDocuments } = nodeRequire('yaml') as typeof import('yaml');
  const out: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new ReleaseParseError(file, doc.errors.map((e) => e.message).join('; '));
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}
