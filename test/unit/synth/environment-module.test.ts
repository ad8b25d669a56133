import { jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EnvironmentModuleError, loadEnvironmentModule } from '../../../src/synth/index.js';
import { MIRROR } from '../constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const MARK = "Symbol.for('agentplane.EnvironmentsDefinition')";

function moduleFile(body: string, ext = 'mjs'): string {
  const file = join(mkdtempSync(join(tmpdir(), 'agentplane-mod-')), `environment.${ext}`);
  writeFileSync(file, body);
  return file;
}

async function failure(file: string): Promise<EnvironmentModuleError> {
  const err = await loadEnvironmentModule(file, { mirror: MIRROR }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(EnvironmentModuleError);
  expect((err as EnvironmentModuleError).reason).toBe('EnvironmentModuleUnusable');
  return err as EnvironmentModuleError;
}

describe('environment modules', () => {
  test('the dev-gvisor example module yields its environment, with the release loaded through ctx', async () => {
    const envs = await loadEnvironmentModule(resolve('examples/dev-gvisor/environment.ts'), {
      mirror: MIRROR,
      cacheDir: mkdtempSync(join(tmpdir(), 'agentplane-mod-cache-')),
    });
    expect(envs.map((e) => [e.name, e.release.facts.tag, e.templates.map((t) => t.name)])).toEqual([
      ['dev-gvisor', 'v0.5.6', ['shell']],
    ]);
  });

  test('a missing file, a wrong default export, no environment, and a failing build are each named', async () => {
    const missing = await failure('/nonexistent/environment.ts');
    expect([missing.file, missing.problem]).toEqual(['/nonexistent/environment.ts', 'missing']);
    expect((await failure(moduleFile('export default 42;\n'))).problem).toBe('not-a-definition');
    expect((await failure(moduleFile(`export default { [${MARK}]: true, build: () => {} };\n`))).problem).toBe(
      'no-environment',
    );
    expect(
      (await failure(moduleFile(`export default { [${MARK}]: true, build: () => { throw new Error('boom'); } };\n`)))
        .problem,
    ).toBe('build-failed');
    expect((await failure(moduleFile('export default ;\n'))).problem).toBe('unimportable');
  });

  test('a CommonJS module (TypeScript compiled as CommonJS puts `export default` on exports.default) is read the same', async () => {
    const cjs = (value: string): string =>
      moduleFile(
        `Object.defineProperty(exports, '__esModule', { value: true });\nexports.default = ${value};\n`,
        'cjs',
      );
    expect((await failure(cjs(`{ [${MARK}]: true, build: () => {} }`))).problem).toBe('no-environment');
    expect((await failure(cjs('42'))).problem).toBe('not-a-definition');
    expect((await failure(moduleFile('module.exports = 42;\n', 'cjs'))).problem).toBe('not-a-definition');
  });
});
