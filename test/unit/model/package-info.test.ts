/**
 * The package's version, directory and run-time data files, found from the sources (jest, tsx) and from the bundle
 * that bin/ runs (two directories deeper), where the build copies the data files under lib/data/ (`npm run build`
 * first, as `.ci/run` does).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dataFile, packageRoot, packageVersion } from '../../../src/model/package-info.js';
import { bundleFileOf } from '../bundle.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const DATA = ['src/adapter/runtime/proto/process/v1/process.proto', 'test/compat/matrix.json'];

test('from the sources: the version, the repository root and the files in place', () => {
  expect(packageVersion()).toBe(version);
  expect(fileURLToPath(packageRoot())).toBe(`${ROOT}/`);
  expect(DATA.map((f) => fileURLToPath(dataFile(f)))).toEqual(DATA.map((f) => join(ROOT, f)));
});

test('from the bundle: the same version and root, and the copies under lib/data', () => {
  const bundled = pathToFileURL(bundleFileOf('src/model/package-info.ts')).href;
  const script = `const m = await import(${JSON.stringify(bundled)}); process.stdout.write(JSON.stringify([m.packageVersion(), m.packageRoot().href, ...${JSON.stringify(DATA)}.map((f) => m.dataFile(f).href)]));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  expect(r.stderr).toBe('');
  const [bundledVersion, ...urls] = JSON.parse(r.stdout) as string[];
  expect(bundledVersion).toBe(version);
  const [root, ...files] = urls.map((u) => fileURLToPath(u));
  expect(root).toBe(`${ROOT}/`);
  expect(files).toEqual(DATA.map((f) => join(ROOT, 'lib/data', f)));
  expect(files.filter((f) => !existsSync(f))).toEqual([]);
});
