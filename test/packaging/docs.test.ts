/**
 * The API reference (`npm run docs`, typedoc): it documents the package's entry points, exactly those of
 * package.json `exports`, and builds with no warning (typedoc.json treats warnings as errors: a public signature using
 * a type the entry points do not export, or a link to something undocumented, fails). In the packaging project
 * because typedoc type-checks the whole library (minutes on a loaded machine).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { jest } from '@jest/globals';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (f: string): unknown => JSON.parse(readFileSync(join(ROOT, f), 'utf8'));
const pkg = read('package.json') as { exports: Record<string, string | { types?: string; import?: unknown }> };
const typedoc = read('typedoc.json') as { entryPoints: string[]; treatWarningsAsErrors?: boolean };

jest.setTimeout(10 * 60_000);

test('typedoc documents exactly the entry points of package.json exports', () => {
  // `./lib/types/src/index.d.ts` is compiled from `src/index.ts`; `./lib/types/adapter.d.mts` re-exports
  // `src/adapter/adapter.ts`'s (scripts/build.mjs writes these one-line files).
  const fromExports = Object.values(pkg.exports)
    .map((e) => (typeof e === 'string' ? undefined : (e.types ?? (e.import as { types?: string })?.types)))
    .filter((t): t is string => t !== undefined)
    .map((t) => {
      const reexported = /^\.\/lib\/types\/[^/]+\.d\.mts$/.test(t) ? readFileSync(join(ROOT, t), 'utf8') : undefined;
      const source = reexported === undefined ? t : `./lib/types/${/from '\.\/(.+)\.js'/.exec(reexported)![1]}.d.ts`;
      return source.replace(/^\.\/lib\/types\//, '').replace(/\.d\.ts$/, '.ts');
    });
  expect([...typedoc.entryPoints].sort()).toEqual([...new Set(fromExports)].sort());
  expect(typedoc.entryPoints).toEqual(
    expect.arrayContaining(['src/index.ts', 'src/adapter/adapter.ts', 'src/verify/index.ts', 'src/diff/index.ts']),
  );
  expect(typedoc.treatWarningsAsErrors).toBe(true);
});

test('npm run docs builds with no warning', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typedoc/bin/typedoc'), '--emit', 'none'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  expect(`${r.stdout}${r.stderr}`).not.toMatch(/\[warning\]|\[error\]/);
  expect(r.status).toBe(0);
});
