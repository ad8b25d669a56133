import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  LockFileInvalidError,
  LockMismatchError,
  compareLock,
  describeLockDifference,
  lockFor,
  loadRelease,
  openApiSchema,
  readLock,
  reconcileLock,
  schemaFingerprint,
  writeLock,
  type LoadedRelease,
  type LockFile,
} from '../../../src/releases/index.js';
import { SHARED_MIRROR, tempDir } from './helpers.js';
import { thrownBy } from '../thrown.js';

let v050: LoadedRelease;
let v056: LoadedRelease;
const tmp = tempDir('lock');
beforeAll(async () => {
  v050 = await loadRelease('v0.5.0', { mirror: SHARED_MIRROR, cacheDir: join(tmp.dir, 'cache') });
  v056 = await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: join(tmp.dir, 'cache') });
});
afterAll(() => tmp.cleanup());

const images = (r: LoadedRelease) => ({ controller: r.facts.controllerImage });

describe('lock file', () => {
  test('lockFor records release, commit, every pinned file hash, a fingerprint per served CRD version, and images', () => {
    const lock = lockFor(v056, images(v056));
    expect(lock.release).toBe('v0.5.6');
    expect(lock.commit).toBe('211b7579cabed9460c1a692eb687084ff4c5879d');
    expect(Object.keys(lock.files)).toHaveLength(v056.facts.files.length);
    expect(lock.files['k8s/controller.yaml']).toBe(
      v056.facts.files.find((f) => f.path === 'k8s/controller.yaml')!.sha256,
    );
    expect(Object.keys(lock.crdFingerprints)).toEqual([
      'Sandbox/v1alpha1',
      'Sandbox/v1beta1',
      'SandboxClaim/v1alpha1',
      'SandboxClaim/v1beta1',
      'SandboxTemplate/v1alpha1',
      'SandboxTemplate/v1beta1',
      'SandboxWarmPool/v1alpha1',
      'SandboxWarmPool/v1beta1',
    ]);
    expect(lock.crdFingerprints['Sandbox/v1beta1']).toBe(schemaFingerprint(openApiSchema(v056, 'Sandbox', 'v1beta1')));
    expect(lock.images).toEqual({ controller: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6' });
  });

  test('write then read round-trips; the text is stable 2-space JSON with a trailing newline', () => {
    const path = join(tmp.dir, 'agentplane.lock.json');
    const lock = lockFor(v056, {
      router: 'example.com/router@sha256:' + 'a'.repeat(64),
      controller: v056.facts.controllerImage,
    });
    writeLock(path, lock);
    const text = readFileSync(path, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.split('\n')[1]).toBe('  "lockVersion": 1,');
    expect(text.indexOf('"controller"')).toBeLessThan(text.indexOf('"router"'));
    expect(readLock(path)).toEqual(lock);
    writeLock(path, readLock(path)!);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  test('readLock: absent file is undefined; bad JSON and bad shape are LockFileInvalidError naming the problem', () => {
    expect(readLock(join(tmp.dir, 'missing.json'))).toBeUndefined();
    const path = join(tmp.dir, 'bad.json');
    writeFileSync(path, '{ not json');
    const notJson = thrownBy(() => readLock(path), LockFileInvalidError, 'LockFileInvalid');
    expect([notJson.path, notJson.issues]).toEqual([path, [{ field: '(root)', code: 'NotJson' }]]);
    const lock = lockFor(v056, images(v056));
    writeFileSync(path, JSON.stringify({ ...lock, commit: 'abc', extra: true }));
    const bad = thrownBy(() => readLock(path), LockFileInvalidError, 'LockFileInvalid');
    expect(bad.issues.map((i) => i.field).sort()).toEqual(['commit', 'extra']);
    expect(bad.issues.find((i) => i.field === 'extra')!.code).toBe('UnrecognizedKey');
  });

  test('compareLock: empty when equal; names every difference otherwise', () => {
    const a = lockFor(v056, images(v056));
    expect(compareLock(a, lockFor(v056, images(v056)))).toEqual([]);
    const b: LockFile = { ...lockFor(v050, images(v050)) };
    const diffs = compareLock(a, b);
    expect(diffs[0]).toEqual({ field: 'release', locked: 'v0.5.6', declared: 'v0.5.0' });
    expect(diffs[1]).toEqual({
      field: 'commit',
      locked: '211b7579cabed9460c1a692eb687084ff4c5879d',
      declared: 'a1a58a019a5479ec6cd77f95234927da7a1f434d',
    });
    expect(diffs).toContainEqual({ field: 'files', key: 'helm/values.yaml', locked: a.files['helm/values.yaml'] });
    expect(diffs).toContainEqual({
      field: 'crdFingerprints',
      key: 'Sandbox/v1beta1',
      locked: a.crdFingerprints['Sandbox/v1beta1'],
      declared: b.crdFingerprints['Sandbox/v1beta1'],
    });
    expect(diffs).toContainEqual({
      field: 'images',
      key: 'controller',
      locked: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
      declared: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.0',
    });
    const err = new LockMismatchError('agentplane.lock.json', diffs);
    expect(err.reason).toBe('LockMismatch');
    expect(err.lockFile).toBe('agentplane.lock.json');
    expect(err.differences).toEqual(diffs);
    expect(err.hint).toBeDefined();
  });

  test("a lock written for another module's environments: reconcileLock names them (otherEnvironments), not a change of this one", () => {
    const path = join(tmp.dir, 'shared.lock.json');
    writeLock(path, lockFor(v056, { 'dev/controller': v056.facts.controllerImage, 'dev/router': 'r:1' }));
    const other = thrownBy(
      () => reconcileLock(path, lockFor(v056, { 'client/controller': v056.facts.controllerImage }), false),
      LockMismatchError,
      'LockMismatch',
    );
    expect(other.otherEnvironments).toEqual(['dev']);
    // the same environment losing one image is a change of this module, not another module's lock
    const changed = thrownBy(
      () => reconcileLock(path, lockFor(v056, { 'dev/controller': v056.facts.controllerImage }), false),
      LockMismatchError,
      'LockMismatch',
    );
    expect(changed.otherEnvironments).toEqual([]);
    expect(changed.differences).toEqual([{ field: 'images', key: 'dev/router', locked: 'r:1' }]);
  });

  test('describeLockDifference: an entry only in the lock, only in the environment, or in both with other values', () => {
    expect(describeLockDifference({ field: 'images', key: 'router', locked: 'r:1' })).toBe(
      'images[router]: in the lock (r:1) but not in the environment',
    );
    expect(describeLockDifference({ field: 'clients', key: 'c', declared: '1.0.8' })).toBe(
      'clients[c]: in the environment (1.0.8) but not in the lock',
    );
    expect(describeLockDifference({ field: 'release', locked: 'v0.5.6', declared: 'v0.5.0' })).toBe(
      'release: lock has v0.5.6, environment has v0.5.0',
    );
  });
});
