/**
 * Compiled CRD validators kept across processes: ajv's standalone code generation (`ajv/dist/standalone`) turns a
 * compiled validator into JavaScript source, stored as a derived cache entry (derived.ts) and evaluated by later
 * processes instead of compiling the schema again (compiling the v0.5.6 SandboxTemplate schema takes 0.3–1 s, loading
 * its ~0.8 MB of generated code ~40 ms).
 *
 * The entry key names everything the code depends on: the ajv and ajv-formats versions, a fingerprint of the
 * preparation (the caller's ajv options and schema rewriting, as source text) and the fingerprint of the pinned schema.
 * The generated code refers to formats as `require("agentplane:formats")[name]` and to ajv's runtime helpers as
 * `require("ajv/dist/runtime/...")`; both are resolved here, the formats to the same definitions the caller's ajv uses.
 * ajv itself is created only to compile: a process whose validators all come from the cache never loads it (~50 ms).
 *
 * Beside the code, V8's code cache of it (bytecode of the functions that ran, `vm.Script#createCachedData`) is a derived
 * entry keyed by the code's sha256 and the Node, V8 and architecture: V8 compiles the large validator functions lazily
 * on their first run (~0.1 s for the SandboxTemplate validator), which the code cache skips. It is written when the
 * process exits, so that it holds the functions validation used; V8 checks and may reject it (then it is rewritten).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import type { Ajv, AnySchema, Format, ValidateFunction } from 'ajv';
import type { _ as codegenTag } from 'ajv/dist/compile/codegen/index.js';
import { sha256Hex } from './cache.js';
import { readDerived, writeDerived } from './derived.js';

const nodeRequire = createRequire(import.meta.url);
const versionOf = (pkg: string): string => (nodeRequire(`${pkg}/package.json`) as { version: string }).version;

/** The module name generated code uses for formats; pass `code: { source: true, formats: STANDALONE_FORMATS }` to ajv. */
export const STANDALONE_FORMATS = (nodeRequire('ajv/dist/compile/codegen') as { _: typeof codegenTag })
  ._`require("agentplane:formats")`;

/** What validators are made with: the formats they check, and ajv set up with them (called only to compile). */
export interface ValidatorSetup {
  readonly formats: Readonly<Record<string, Format>>;
  /** An ajv created with `code: { source: true, formats: STANDALONE_FORMATS }` and exactly `formats`. */
  ajv(): Ajv;
}

/** Derived-cache kind (folder) of generated validator code. */
export const VALIDATOR_CODE = 'ajv-standalone';

/** Derived-cache key of the validator of a schema with fingerprint `schemaFingerprint`, prepared as `preparation` describes. */
export function validatorCodeKey(preparation: string, schemaFingerprint: string): string {
  return `ajv-standalone/1 ajv@${versionOf('ajv')} ajv-formats@${versionOf('ajv-formats')} preparation:${sha256Hex(preparation)} schema:${schemaFingerprint}`;
}

/**
 * The validator for `key`: evaluated from the cached generated code when an intact entry exists under `cacheRoot`, else
 * `setup.ajv().compile(prepare())`, whose generated code is then stored. With no cacheRoot it only compiles.
 */
export function cachedValidator(
  setup: ValidatorSetup,
  key: string,
  prepare: () => AnySchema,
  cacheRoot: string | undefined,
): ValidateFunction {
  if (cacheRoot !== undefined) {
    const code = readDerived(cacheRoot, VALIDATOR_CODE, key);
    if (typeof code === 'string') {
      const fn = evaluate(setup.formats, code, cacheRoot);
      if (fn) return fn;
    }
  }
  const ajv = setup.ajv();
  const fn = ajv.compile(prepare());
  if (cacheRoot !== undefined) {
    const standaloneCode = nodeRequire('ajv/dist/standalone') as (ajv: Ajv, fn: ValidateFunction) => string;
    writeDerived(cacheRoot, VALIDATOR_CODE, key, standaloneCode(ajv, fn));
  }
  return fn;
}

/** Derived-cache kind (folder) of V8 code caches of generated validator code. */
const VALIDATOR_CODE_CACHE = 'v8-code-cache';

/** Code caches to write at exit, by entry key: the script, after validation has run its functions. */
const pendingCodeCaches = new Map<string, { root: string; script: Script }>();

function writeCodeCaches(): void {
  for (const [key, { root, script }] of pendingCodeCaches) {
    if (!existsSync(root)) continue; // the cache was removed meanwhile (a temporary one): do not create it again
    try {
      writeDerived(root, VALIDATOR_CODE_CACHE, key, script.createCachedData().toString('base64'));
    } catch {
      // no code cache: the next process compiles the functions again
    }
  }
  pendingCodeCaches.clear();
}

/**
 * Runs generated CommonJS code (compiled with its V8 code cache when the cache root holds one); undefined when it does
 * not yield a function (then the caller compiles).
 */
function evaluate(
  formats: Readonly<Record<string, Format>>,
  code: string,
  cacheRoot: string,
): ValidateFunction | undefined {
  const resolve = (id: string): unknown => {
    if (id === 'agentplane:formats') return formats;
    if (id.startsWith('ajv/dist/runtime/')) return nodeRequire(id);
    throw new Error(`generated validator code asked for module ${JSON.stringify(id)}`);
  };
  const module = { exports: {} as unknown };
  const key = `v8-code-cache/1 node@${process.version} v8@${process.versions.v8} ${process.arch} code-sha256:${sha256Hex(code)}`;
  const cachedData = readDerived(cacheRoot, VALIDATOR_CODE_CACHE, key);
  let script: Script;
  try {
    script = new Script(`(function (require, module, exports) {${code}\n})`, {
      filename: 'agentplane-validator.js',
      ...(typeof cachedData === 'string' ? { cachedData: Buffer.from(cachedData, 'base64') } : {}),
    });
    (script.runInThisContext() as (...args: unknown[]) => void)(resolve, module, module.exports);
  } catch {
    return undefined;
  }
  if (typeof module.exports !== 'function') return undefined;
  if (typeof cachedData !== 'string' || script.cachedDataRejected === true) {
    if (pendingCodeCaches.size === 0) process.once('exit', writeCodeCaches);
    pendingCodeCaches.set(key, { root: cacheRoot, script });
  }
  return module.exports as ValidateFunction;
}
