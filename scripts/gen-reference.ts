/**
 * Writes the generated reference pages: docs/reference/reasons.md (every reason code, its meaning and next step) and
 * docs/reference/cli.md (every command's --help; needs `npm run build`). `--check` writes nothing and exits 1 when a
 * page is stale or a code has no next step. Usage: `npm run gen:reference [-- --check]`
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CLI_FILE, renderCliReference } from './reference/cli.js';
import { CATALOG_FILE, catalogGaps, readNextSteps, renderCatalog } from './reference/reasons.js';

const check = process.argv.includes('--check');
const steps = readNextSteps();
const gaps = catalogGaps(steps);
for (const g of gaps.missing) console.error(`no next step for ${g} (docs/reference/next-steps.yaml)`);
for (const g of gaps.unknown) console.error(`next step for ${g}, which no code map has`);
let stale = gaps.missing.length + gaps.unknown.length > 0;
for (const [file, text] of [
  [CATALOG_FILE, renderCatalog(steps)],
  [CLI_FILE, renderCliReference()],
] as const) {
  const current = ((): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  })();
  if (current === text) continue;
  if (check) {
    console.error(`${file} is stale: run npm run gen:reference`);
    stale = true;
  } else writeFileSync(file, text);
}
process.exitCode = check && stale ? 1 : 0;
