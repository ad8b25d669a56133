/**
 * The generated reference stays true: docs/reference/reasons.md lists every reason code of the typed maps with a next
 * step, every reason literal in src belongs to one of those maps, and docs/reference/cli.md is the built CLI's own
 * --help (`npm run gen:reference` rewrites both; `npm test` builds lib/ before the unit tests).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { CLI_FILE, renderCliReference } from '../../../scripts/reference/cli.js';
import {
  CATALOG_FILE,
  FAMILIES,
  catalogGaps,
  readNextSteps,
  renderCatalog,
} from '../../../scripts/reference/reasons.js';

const SRC = path.resolve(import.meta.dirname, '../../../src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** CamelCase literals written as a `reason` or `nextReason` (`reason: 'X'`, `reason = 'X'`). */
const REASON_LITERAL = /\b(?:next)?[rR]eason\??\s*(?::\s*[\w<>[\]'| ]+?)?\s*[:=]\s*'([A-Z][A-Za-z0-9]+)'/g;

test('every code of the typed maps has a next step, and every next step a code', () => {
  expect(catalogGaps(readNextSteps())).toEqual({ missing: [], unknown: [] });
});

test('docs/reference/reasons.md is generated from the maps (npm run gen:reference)', () => {
  expect(readFileSync(CATALOG_FILE, 'utf8')).toBe(renderCatalog(readNextSteps()));
});

test('every reason literal in src is a catalogued code', () => {
  const known = new Set(FAMILIES.flatMap((f) => Object.keys(f.codes)));
  const stray = tsFiles(SRC).flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(REASON_LITERAL)]
      .map((m) => m[1]!)
      .filter((code) => !known.has(code))
      .map((code) => `${path.relative(SRC, f)}: ${code}`),
  );
  expect(stray).toEqual([]);
});

test('docs/reference/cli.md is the built CLI --help (npm run gen:reference)', () => {
  expect(readFileSync(CLI_FILE, 'utf8')).toBe(renderCliReference());
});
