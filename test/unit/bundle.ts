/**
 * The bundle `npm run build` writes (lib/bundle) read back by source module: esbuild writes `// <path>` before each
 * module it bundles (`// src/cli/main.ts`, `// node_modules/commander/index.js`), so a test can tell which of our
 * modules a bundle file holds, and import the one holding a module to call its exports.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const BUNDLE_DIR = resolve(import.meta.dirname, '../../lib/bundle');

const MODULE_MARK = /^\/\/ ((?:src|imports)\/\S+|\S*node_modules\/\S+)$/gm;

/** The source modules bundled into one file of lib/bundle. */
export function modulesIn(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(MODULE_MARK)].map((m) => m[1]!);
}

/** The file of lib/bundle holding the source module `source` (e.g. `src/verify/tuple-reader.ts`). */
export function bundleFileOf(source: string): string {
  if (!existsSync(BUNDLE_DIR)) throw new Error('lib/bundle is missing: run `npm run build` first');
  const files = [
    ...readdirSync(BUNDLE_DIR).filter((f) => f.endsWith('.js')),
    ...readdirSync(join(BUNDLE_DIR, 'chunks')).map((f) => join('chunks', f)),
  ].map((f) => join(BUNDLE_DIR, f));
  const holding = files.filter((f) => modulesIn(f).includes(source));
  if (holding.length !== 1) throw new Error(`${source} is in ${holding.length} files of lib/bundle, not one`);
  return holding[0]!;
}
