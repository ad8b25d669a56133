/**
 * A README inside src/ describes its folder: every file of the folder is named in it (a file as `path`, or a folder of
 * files as `dir/*`), and every file it names exists (beside the README or from the repository root), so the table cannot drift from the code.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../../src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

const readmes = filesUnder(SRC).filter((f) => path.basename(f) === 'README.md');

test.each(readmes.map((f) => [path.relative(SRC, f), f]))(
  '%s names every file of its folder, and only those',
  (_, readme) => {
    const dir = path.dirname(readme);
    const text = readFileSync(readme, 'utf8');
    const named = [...text.matchAll(/`([\w./*-]+\.(?:ts|proto)|[\w/-]+\/\*)`/g)].map((m) => m[1]!);
    const covered = (file: string): boolean =>
      named.some((n) => (n.endsWith('/*') ? file.startsWith(n.slice(0, -1)) : file === n));
    const files = filesUnder(dir)
      .map((f) => path.relative(dir, f))
      .filter((f) => f !== 'README.md');
    expect(files.filter((f) => !covered(f))).toEqual([]);
    const root = path.dirname(SRC);
    const dangling = named.filter(
      (n) => !n.endsWith('/*') && !existsSync(path.join(dir, n)) && !existsSync(path.join(root, n)),
    );
    expect(dangling).toEqual([]);
  },
);
