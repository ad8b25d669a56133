/**
 * The tuple's client SDK entry names this package's version, read from its package.json (from the bundle too:
 * test/unit/model/package-info.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { clientSdkEntry } from '../../../src/verify/tuple-reader.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

test('from the sources', () => {
  expect(clientSdkEntry()).toEqual({ value: `${pkg.name} ${pkg.version}`, source: 'package.json' });
});
