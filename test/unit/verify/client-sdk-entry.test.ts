/**
 * The tuple's client SDK entry names this package's version from the sources (tsx, jest) and from the compiled
 * lib/esm that bin/ runs (one directory deeper; `npm run build` first, as `.ci/run` does).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { clientSdkEntry } from '../../../src/verify/tuple-reader.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

test('from the sources', () => {
  expect(clientSdkEntry()).toEqual({ value: `${pkg.name} ${pkg.version}`, source: 'package.json' });
});

test('from the compiled lib/esm', () => {
  const compiled = join(ROOT, 'lib/esm/src/verify/tuple-reader.js');
  if (!existsSync(compiled)) throw new Error('lib/esm is missing: run `npm run build` first');
  const script = `const { clientSdkEntry } = await import(${JSON.stringify(pathToFileURL(compiled).href)}); process.stdout.write(JSON.stringify(clientSdkEntry()));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual({ value: `${pkg.name} ${pkg.version}`, source: 'package.json' });
});
