import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv, type Format } from 'ajv';
import { derivedPath, readDerived, writeDerived } from '../../../src/releases/derived.js';
import { loadRelease, PARSED_DOCUMENTS } from '../../../src/releases/load.js';
import { parsedDocumentsKey } from '../../../src/releases/parsed-documents-key.js';
import { releaseFacts } from '../../../src/releases/supported.js';
import {
  cachedValidator,
  STANDALONE_FORMATS,
  VALIDATOR_CODE,
  validatorCodeKey,
  type ValidatorSetup,
} from '../../../src/releases/validator-cache.js';
import { MissingFileError } from '../../../src/releases/errors.js';
import { SHARED_MIRROR, tempDir } from './helpers.js';
import { rejectedBy } from '../thrown.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SANDBOX_CRD = 'k8s/crds/agents.x-k8s.io_sandboxes.yaml';
const CONTROLLER = 'k8s/controller.yaml';

/** Flips one byte in the middle of a file. */
function flipByte(path: string): void {
  const bytes = readFileSync(path);
  const i = Math.floor(bytes.length / 2);
  bytes[i] = bytes[i]! ^ 0x01;
  writeFileSync(path, bytes);
}

describe('derived cache entries', () => {
  test('round-trip; a flipped byte, a truncated file or another key reads as absent and the entry is removed', () => {
    const cache = tempDir('derived');
    try {
      const value = [{ kind: 'CustomResourceDefinition', spec: { versions: [{ name: 'v1beta1', served: true }] } }];
      expect(writeDerived(cache.dir, 'test', 'key-a', value)).toBe(true);
      expect(readDerived(cache.dir, 'test', 'key-a')).toEqual(value);

      flipByte(derivedPath(cache.dir, 'test', 'key-a'));
      expect(readDerived(cache.dir, 'test', 'key-a')).toBeUndefined();
      expect(existsSync(derivedPath(cache.dir, 'test', 'key-a'))).toBe(false);

      writeDerived(cache.dir, 'test', 'key-a', value);
      const path = derivedPath(cache.dir, 'test', 'key-a');
      writeFileSync(path, readFileSync(path).subarray(0, 40));
      expect(readDerived(cache.dir, 'test', 'key-a')).toBeUndefined();

      // an intact entry written for key-b, found where key-a's entry belongs, is not used for key-a
      writeDerived(cache.dir, 'test', 'key-b', [{ other: true }]);
      copyFileSync(derivedPath(cache.dir, 'test', 'key-b'), derivedPath(cache.dir, 'test', 'key-a'));
      expect(readDerived(cache.dir, 'test', 'key-a')).toBeUndefined();
      expect(readDerived(cache.dir, 'test', 'key-b')).toEqual([{ other: true }]);
    } finally {
      cache.cleanup();
    }
  });

  test('values JSON cannot carry exactly are not stored', () => {
    const cache = tempDir('derived');
    try {
      expect(writeDerived(cache.dir, 'test', 'nan', [{ n: Number.NaN }])).toBe(false);
      expect(writeDerived(cache.dir, 'test', 'date', [{ at: new Date(0) }])).toBe(false);
      expect(writeDerived(cache.dir, 'test', 'hole', [undefined])).toBe(false);
      expect(existsSync(join(cache.dir, '.derived', 'test'))).toBe(false);
    } finally {
      cache.cleanup();
    }
  });
});

describe('parsed release files in the derived cache', () => {
  /**
   * loadRelease keeps parses in memory too, so the derived entries are read by a fresh process: it prints the parsed
   * objects of two files as JSON.
   */
  function loadInFreshProcess(cacheDir: string): Record<string, unknown> {
    const script = `
      const { loadRelease } = await import(${JSON.stringify(join(ROOT, 'src/releases/load.ts'))});
      const r = await loadRelease('v0.5.6', { mirror: ${JSON.stringify(SHARED_MIRROR)}, cacheDir: ${JSON.stringify(cacheDir)} });
      process.stdout.write(JSON.stringify({ crd: r.objects.get(${JSON.stringify(SANDBOX_CRD)}), controller: r.objects.get(${JSON.stringify(CONTROLLER)}) }));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  }

  test('entries keyed by the verified sha256 are written; damaged or misplaced entries are rebuilt from the verified file', async () => {
    const cache = tempDir('cache');
    try {
      const release = await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
      const expected = { crd: release.objects.get(SANDBOX_CRD), controller: release.objects.get(CONTROLLER) };
      const sha = (path: string): string => releaseFacts('v0.5.6').files.find((f) => f.path === path)!.sha256;
      const crdEntry = derivedPath(cache.dir, PARSED_DOCUMENTS, parsedDocumentsKey(sha(SANDBOX_CRD)));
      const controllerEntry = derivedPath(cache.dir, PARSED_DOCUMENTS, parsedDocumentsKey(sha(CONTROLLER)));
      expect(existsSync(crdEntry)).toBe(true);
      expect(existsSync(controllerEntry)).toBe(true);
      const intactCrdEntry = readFileSync(crdEntry);

      flipByte(crdEntry); // a damaged entry
      copyFileSync(
        join(
          cache.dir,
          '.derived',
          PARSED_DOCUMENTS,
          readdirSync(join(cache.dir, '.derived', PARSED_DOCUMENTS)).find(
            (n) =>
              join(cache.dir, '.derived', PARSED_DOCUMENTS, n) !== controllerEntry &&
              join(cache.dir, '.derived', PARSED_DOCUMENTS, n) !== crdEntry,
          )!,
        ),
        controllerEntry,
      ); // another file's intact entry
      expect(loadInFreshProcess(cache.dir)).toEqual(JSON.parse(JSON.stringify(expected)));
      expect(readFileSync(crdEntry)).toEqual(intactCrdEntry); // rebuilt

      // intact entries are used: the same objects come back
      expect(loadInFreshProcess(cache.dir)).toEqual(JSON.parse(JSON.stringify(expected)));
    } finally {
      cache.cleanup();
    }
  });

  test('a flipped byte in the cached release file still stops the load with the file named, whatever the derived entries hold', async () => {
    const cache = tempDir('cache');
    const mirror = tempDir('mirror');
    try {
      await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
      flipByte(join(cache.dir, 'v0.5.6', SANDBOX_CRD)); // the cached copy is dropped and the (empty) mirror asked
      const err = await rejectedBy(
        loadRelease('v0.5.6', { mirror: mirror.dir, cacheDir: cache.dir }),
        MissingFileError,
        'MissingFile',
      );
      expect(err.file).toBe(SANDBOX_CRD);
    } finally {
      cache.cleanup();
      mirror.cleanup();
    }
  });
});

describe('compiled validators in the derived cache', () => {
  function freshAjv(): ValidatorSetup {
    const formats = Object.fromEntries(
      (['int32', 'int64'] as const).map((f) => [
        f,
        { type: 'number', validate: (n: number) => Number.isInteger(n) && (f === 'int64' || Math.abs(n) < 2 ** 31) },
      ]),
    ) as Record<string, Format>;
    return {
      formats,
      ajv: () => {
        const ajv = new Ajv({ allErrors: true, code: { source: true, formats: STANDALONE_FORMATS } });
        for (const [name, format] of Object.entries(formats)) ajv.addFormat(name, format);
        return ajv;
      },
    };
  }
  const schema = {
    type: 'object',
    properties: { replicas: { type: 'integer', format: 'int32' }, name: { type: 'string', maxLength: 3 } },
    required: ['name'],
    additionalProperties: false,
  };

  test('the generated code is stored, loaded by a fresh ajv with the same verdicts, and a damaged entry is recompiled', () => {
    const cache = tempDir('validators');
    try {
      const key = validatorCodeKey('test preparation', 'test-fingerprint');
      let compiled = 0;
      const prepare = (): object => {
        compiled++;
        return schema;
      };
      const first = cachedValidator(freshAjv(), key, prepare, cache.dir);
      expect(compiled).toBe(1);
      expect(existsSync(derivedPath(cache.dir, VALIDATOR_CODE, key))).toBe(true);

      const second = cachedValidator(freshAjv(), key, prepare, cache.dir);
      expect(compiled).toBe(1); // loaded, not compiled
      for (const value of [
        { name: 'abc', replicas: 3 },
        { name: 'abcd', replicas: 2 ** 31, extra: 1 },
        { replicas: 1.5 },
      ]) {
        expect(second(value)).toBe(first(value));
        expect(second.errors ?? null).toEqual(first.errors ?? null);
      }
      expect(second({ name: 'abcd', replicas: 2 ** 31 })).toBe(false);
      expect(second.errors!.map((e) => e.keyword).sort()).toEqual(['format', 'maxLength']);

      flipByte(derivedPath(cache.dir, VALIDATOR_CODE, key));
      const third = cachedValidator(freshAjv(), key, prepare, cache.dir);
      expect(compiled).toBe(2); // the damaged code was not run
      expect(third({ name: 'ab' })).toBe(true);
      expect(
        cachedValidator(freshAjv(), validatorCodeKey('another preparation', 'test-fingerprint'), prepare, cache.dir),
      ).toBeDefined();
      expect(compiled).toBe(3); // another key: not served from this entry
    } finally {
      cache.cleanup();
    }
  });
});
