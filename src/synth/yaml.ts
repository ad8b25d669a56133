/**
 * YAML text for manifests: yaml 2 with `{ version: '1.1', lineWidth: 0 }` like cdk8s (YAML 1.1 quoting keeps `on`/`yes`
 * strings quoted), map keys sorted, list order kept (env order carries meaning), every document preceded by `---`
 * (case synth-determinism); no anchors or aliases, even for objects that share a reference.
 *
 * Given a cache root, each document's text is kept as a derived cache entry (releases' derived.ts: header with key and
 * payload sha256; a damaged entry is emitted again) keyed by the sha256 of the document's exact JSON, the yaml version
 * and the options, so the bytes are those yamlDocument would produce: a later synth of the same objects emits none
 * (yaml 2 takes ~10 ms per small document in a fresh process, 0.1–0.3 s per pinned CRD). Large documents (the pinned
 * CRDs) are also kept in memory for the process.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { isPlainObject } from '../model/objects.js';
import { readDerived, writeDerived } from '../releases/index.js';

const OPTIONS = { version: '1.1', lineWidth: 0, sortMapEntries: true, aliasDuplicateObjects: false } as const;
const nodeRequire = createRequire(import.meta.url);

/** One document. yaml is loaded on first use: a synth whose documents all come from the cache never loads it. */
export function yamlDocument(obj: unknown): string {
  const { stringify } = nodeRequire('yaml') as typeof import('yaml');
  return stringify(obj, OPTIONS);
}

/** Options of {@link yamlStream}. */
export interface YamlStreamOptions {
  /**
   * Where emitted large documents are kept between processes (a release cache root).
   * @default - none: memory only
   */
  readonly cacheRoot?: string;
}

/** A multi-document stream: each document starts with a `---` line. Empty input gives an empty string. */
export function yamlStream(objs: readonly unknown[], opts: YamlStreamOptions = {}): string {
  return objs.map((o) => `---\n${keptDocumentText(o, opts.cacheRoot) ?? yamlDocument(o)}`).join('');
}

/** Documents whose JSON is at least this long are also kept in memory for the process. */
const LARGE_JSON_CHARS = 64 * 1024;
const YAML_DOCUMENTS = 'yaml-documents';
const YAML_VERSION = (nodeRequire('yaml/package.json') as { version: string }).version;
const emitted = new Map<string, string>();

/**
 * The text of a JSON-exact document (from memory, the derived cache or emitted now) when there is a cache root or the
 * document is large; undefined for other documents.
 */
function keptDocumentText(obj: unknown, cacheRoot: string | undefined): string | undefined {
  const json = exactJson(obj);
  if (json === undefined || (cacheRoot === undefined && json.length < LARGE_JSON_CHARS)) return undefined;
  const key = `yaml-document/1 yaml@${YAML_VERSION} options:${JSON.stringify(OPTIONS)} json-sha256:${createHash('sha256').update(json).digest('hex')}`;
  let text = emitted.get(key);
  if (text === undefined && cacheRoot !== undefined) {
    const cached = readDerived(cacheRoot, YAML_DOCUMENTS, key);
    if (typeof cached === 'string') text = cached;
  }
  if (text === undefined) {
    text = yamlDocument(obj);
    if (cacheRoot !== undefined) writeDerived(cacheRoot, YAML_DOCUMENTS, key, text);
  }
  if (json.length >= LARGE_JSON_CHARS) emitted.set(key, text);
  return text;
}

/**
 * JSON of `obj` when JSON describes it exactly (plain objects and arrays of strings, finite numbers other than -0,
 * booleans and null; no undefined, in objects or arrays; nothing with toJSON); else undefined, and the document is always emitted afresh.
 */
function exactJson(obj: unknown): string | undefined {
  let exact = true;
  const json = JSON.stringify(obj, function (this: Record<string, unknown>, key: string, value: unknown) {
    if (this[key] !== value)
      exact = false; // toJSON changed it (a Date, ...)
    else if (
      value === undefined ||
      typeof value === 'function' ||
      typeof value === 'symbol' ||
      typeof value === 'bigint'
    )
      exact = false;
    else if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) exact = false;
    else if (isPlainObject(value)) {
      // a plain object's prototype is null or an Object.prototype (of any realm: structuredClone and jest's vm differ)
      const proto = Object.getPrototypeOf(value) as object | null;
      if (proto !== null && Object.getPrototypeOf(proto) !== null) exact = false;
    }
    return value;
  });
  return exact ? json : undefined;
}
