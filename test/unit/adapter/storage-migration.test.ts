/**
 * migrate-storage against a fake of its API calls (StorageApi): dry-run writes nothing, --apply rewrites every object
 * and prunes storedVersions only after a confirming re-list, conflicts are retried, a resumed run skips what it
 * wrote, and every fault (unreachable, failed write, unconfirmed re-list, failed prune) stops with a typed reason and
 * leaves storedVersions of the unfinished kind untouched.
 */
import {
  MIGRATED_AT_ANNOTATION,
  StorageMigrationError,
  migrateStorage,
  storageKinds,
  type StorageApi,
  type StorageKindRef,
} from '../../../src/adapter/kubernetes/storage-migration.js';
import type { Obj } from '../../../src/adapter/kubernetes/cluster.js';
import type { AdapterError, Result } from '../../../src/adapter/types.js';
import { migrateExitCode, MIGRATE_EXIT_CODES } from '../../../src/cli/commands/migrate-storage-exit-codes.js';
import { releaseFacts } from '../../../src/releases/supported.js';

const KINDS = storageKinds(releaseFacts('v0.5.6'));
const T0 = Date.parse('2026-12-05T05:00:00.000Z');

type Fault = (call: string, ref?: StorageKindRef, name?: string) => AdapterError | undefined;

/** An in-memory API server: objects per kind with resourceVersions, CRDs with storedVersions; `fault` fails calls. */
class FakeApi implements StorageApi {
  readonly source = 'context fake';
  readonly objects = new Map<SandboxKindName, Map<string, Obj>>();
  readonly stored = new Map<string, string[]>();
  readonly calls: string[] = [];
  rv = 1;
  fault: Fault = () => undefined;
  /** Called after every list: e.g. to create an object meanwhile. */
  afterList: (ref: StorageKindRef) => void = () => undefined;

  constructor(perKind: number, storedVersions = ['v1alpha1', 'v1beta1']) {
    for (const ref of KINDS) {
      this.stored.set(ref.crdName, [...storedVersions]);
      const m = new Map<string, Obj>();
      for (let i = 0; i < perKind; i++) this.add(ref, `o${i}`, m);
      this.objects.set(ref.kind, m);
    }
  }
  add(ref: StorageKindRef, name: string, m = this.objects.get(ref.kind)!): void {
    m.set(`ns/${name}`, { metadata: { namespace: 'ns', name, resourceVersion: String(this.rv++) } });
  }
  private fail<T>(call: string, ref?: StorageKindRef, name?: string): Result<T> | undefined {
    this.calls.push(`${call} ${ref?.kind ?? ''} ${name ?? ''}`.trim());
    const e = this.fault(call, ref, name);
    return e === undefined ? undefined : { kind: 'failed', error: e };
  }
  readCrd(name: string): Promise<Result<{ storage?: string; storedVersions: readonly string[] }>> {
    const f = this.fail<never>('readCrd', undefined, name);
    if (f) return Promise.resolve(f);
    const stored = this.stored.get(name);
    if (stored === undefined)
      return Promise.resolve({ kind: 'failed', error: { category: 'not-found', message: name } });
    return Promise.resolve({ kind: 'ok', value: { storage: 'v1beta1', storedVersions: [...stored] } });
  }
  list(ref: StorageKindRef): Promise<Result<{ items: Obj[] }>> {
    const f = this.fail<never>('list', ref);
    if (f) return Promise.resolve(f);
    const items = [...this.objects.get(ref.kind)!.values()].map((o) => structuredClone(o));
    this.afterList(ref);
    return Promise.resolve({ kind: 'ok', value: { items } });
  }
  get(ref: StorageKindRef, _v: string, namespace: string | undefined, name: string): Promise<Result<Obj>> {
    const f = this.fail<never>('get', ref, name);
    if (f) return Promise.resolve(f);
    const o = this.objects.get(ref.kind)!.get(`${namespace}/${name}`);
    return Promise.resolve(
      o === undefined
        ? { kind: 'failed', error: { category: 'not-found', message: name } }
        : { kind: 'ok', value: structuredClone(o) },
    );
  }
  mark(
    ref: StorageKindRef,
    _v: string,
    obj: { namespace?: string; name: string; resourceVersion: string },
    marker: string,
  ): Promise<Result<Obj>> {
    const f = this.fail<never>('mark', ref, obj.name);
    if (f) return Promise.resolve(f);
    const o = this.objects.get(ref.kind)!.get(`${obj.namespace}/${obj.name}`);
    if (o === undefined)
      return Promise.resolve({ kind: 'failed', error: { category: 'not-found', message: obj.name } });
    if (o.metadata!.resourceVersion !== obj.resourceVersion)
      return Promise.resolve({ kind: 'failed', error: { category: 'conflict', message: 'modified' } });
    const meta = o.metadata as { annotations?: Record<string, string>; resourceVersion?: string };
    meta.annotations = { ...meta.annotations, [MIGRATED_AT_ANNOTATION]: marker };
    meta.resourceVersion = String(this.rv++);
    return Promise.resolve({ kind: 'ok', value: structuredClone(o) });
  }
  pruneStoredVersions(crdName: string, versions: readonly string[]): Promise<Result<unknown>> {
    const f = this.fail<never>('prune', undefined, crdName);
    if (f) return Promise.resolve(f);
    this.stored.set(crdName, [...versions]);
    return Promise.resolve({ kind: 'ok', value: {} });
  }
  marked(kind: SandboxKindName, marker: string): number {
    return [...this.objects.get(kind)!.values()].filter(
      (o) => (o.metadata as { annotations?: Record<string, string> }).annotations?.[MIGRATED_AT_ANNOTATION] === marker,
    ).length;
  }
}
type SandboxKindName = StorageKindRef['kind'];

let clock = T0;
const now = (): Date => new Date((clock += 1));
beforeEach(() => {
  clock = T0;
});
const run = (api: FakeApi, apply: boolean, marker?: string) =>
  migrateStorage(api, KINDS, { apply, now, concurrency: 4, ...(marker ? { marker } : {}) });
/** The error a run stops with (a test fails when the run finishes). */
async function stopped(p: Promise<unknown>): Promise<StorageMigrationError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StorageMigrationError);
    return err as StorageMigrationError;
  }
  throw new Error('expected a StorageMigrationError; the run finished');
}
const writes = (api: FakeApi): number => api.calls.filter((c) => c.startsWith('mark') || c.startsWith('prune')).length;
const unreachable: AdapterError = { category: 'unreachable', message: 'connect ECONNREFUSED', errno: 'ECONNREFUSED' };

test('dry-run lists and counts, writes nothing and says which storedVersions --apply would prune', async () => {
  const api = new FakeApi(3);
  const r = await run(api, false);
  expect(writes(api)).toBe(0);
  expect(r.mode).toBe('dry-run');
  expect(r.kinds.map((k) => [k.kind, k.outcome, k.listed, k.rewritten, k.wouldPrune])).toEqual(
    KINDS.map((k) => [k.kind, 'dry-run', 3, 3, true]),
  );
  expect([...api.stored.values()]).toEqual(KINDS.map(() => ['v1alpha1', 'v1beta1']));
});

test('--apply rewrites every object, confirms by re-list and prunes each kind to the storage version', async () => {
  const api = new FakeApi(5);
  const r = await run(api, true);
  expect(r.rewritten).toBe(20);
  for (const ref of KINDS) expect(api.marked(ref.kind, r.marker)).toBe(5);
  expect(r.kinds.map((k) => [k.outcome, k.relisted, k.confirmed, k.storedVersionsAfter])).toEqual(
    KINDS.map(() => ['pruned', 5, 5, ['v1beta1']]),
  );
  expect([...api.stored.values()]).toEqual(KINDS.map(() => ['v1beta1']));
  // each prune comes after the last write of its kind and the re-list
  const firstPrune = api.calls.indexOf(`prune  ${KINDS[0]!.crdName}`);
  expect(api.calls.slice(firstPrune - 1, firstPrune)).toEqual([`list ${KINDS[0]!.kind}`]);
});

test('storedVersions already [v1beta1]: objects are rewritten, no prune call', async () => {
  const api = new FakeApi(2, ['v1beta1']);
  const r = await run(api, true);
  expect(r.kinds.map((k) => k.outcome)).toEqual(KINDS.map(() => 'rewritten'));
  expect(api.calls.filter((c) => c.startsWith('prune'))).toEqual([]);
});

test('a conflict re-reads the object and writes again', async () => {
  const api = new FakeApi(2);
  let bumped = false;
  api.fault = (call, ref, name) => {
    // someone else updates o1 of Sandbox right before our first write to it
    if (call === 'mark' && ref?.kind === 'Sandbox' && name === 'o1' && !bumped) {
      bumped = true;
      api.objects.get('Sandbox')!.get('ns/o1')!.metadata!.resourceVersion = String(api.rv++);
    }
    return undefined;
  };
  const r = await run(api, true);
  expect(r.kinds[0]).toMatchObject({ kind: 'Sandbox', conflicts: 1, rewritten: 2, outcome: 'pruned' });
});

test('conflicts past the retries stop with StorageWriteFailed (exit 13); that kind is not pruned', async () => {
  const api = new FakeApi(2);
  api.fault = (call, ref) =>
    call === 'mark' && ref?.kind === 'SandboxClaim' ? { category: 'conflict', message: 'modified' } : undefined;
  const e = await stopped(run(api, true));
  expect([e.reason, e.failure?.category]).toEqual(['StorageWriteFailed', 'conflict']);
  expect(migrateExitCode(e.reason, e.failure?.category)).toBe(MIGRATE_EXIT_CODES.writeFailed);
  expect(api.stored.get(KINDS[0]!.crdName)).toEqual(['v1beta1']); // Sandbox finished before
  expect(api.stored.get(KINDS[1]!.crdName)).toEqual(['v1alpha1', 'v1beta1']);
  expect(api.stored.get(KINDS[2]!.crdName)).toEqual(['v1alpha1', 'v1beta1']);
  expect(e.result.kinds.map((k) => k.outcome)).toEqual(['pruned', 'dry-run']);
});

test('a failed write stops every writer: no write after it, nothing pruned', async () => {
  const api = new FakeApi(50);
  api.fault = (call, ref, name) =>
    call === 'mark' && ref?.kind === 'Sandbox' && name === 'o10'
      ? { category: 'invalid', code: 422, message: 'admission webhook denied' }
      : undefined;
  const e = await stopped(run(api, true));
  expect(e.reason).toBe('StorageWriteFailed');
  expect(migrateExitCode(e.reason, e.failure?.category)).toBe(13);
  const failedAt = api.calls.indexOf('mark Sandbox o10');
  // at most the writes already in flight (concurrency 4) follow the failure
  expect(api.calls.slice(failedAt + 1).filter((c) => c.startsWith('mark')).length).toBeLessThanOrEqual(3);
  expect(api.calls.filter((c) => c.startsWith('prune'))).toEqual([]);
});

test('an unreachable cluster: StorageReadFailed, exit category cluster (7), nothing written or pruned', async () => {
  for (const at of ['readCrd', 'list']) {
    const api = new FakeApi(2);
    api.fault = (call) => (call === at ? unreachable : undefined);
    const e = await stopped(run(api, true));
    expect([e.reason, e.exitCategory, migrateExitCode(e.reason, e.failure?.category)]).toEqual([
      'StorageReadFailed',
      'cluster',
      undefined,
    ]);
    expect(writes(api)).toBe(0);
  }
  // unreachable in the middle of the writes: the CLI-wide 7, not 13
  const api = new FakeApi(2);
  api.fault = (call, ref) => (call === 'mark' && ref?.kind === 'SandboxTemplate' ? unreachable : undefined);
  const e = await stopped(run(api, true));
  expect([e.reason, e.exitCategory, migrateExitCode(e.reason, e.failure?.category)]).toEqual([
    'StorageWriteFailed',
    'cluster',
    undefined,
  ]);
  expect(api.stored.get(KINDS[2]!.crdName)).toEqual(['v1alpha1', 'v1beta1']);
});

test('an object created during the run is rewritten in a second pass; one that never carries the marker: StorageCountUnconfirmed (exit 14), not pruned', async () => {
  const api = new FakeApi(2);
  let lists = 0;
  api.afterList = (ref) => {
    if (ref.kind === 'Sandbox' && lists++ === 0) api.add(ref, 'late');
  };
  const r = await run(api, true);
  expect(r.kinds[0]).toMatchObject({ rewritten: 3, relisted: 3, confirmed: 3, outcome: 'pruned' });

  const stuck = new FakeApi(2);
  // a write the server acknowledges but that never shows up (e.g. a mutating webhook strips the annotation)
  stuck.mark = (_ref, _v, obj) => Promise.resolve({ kind: 'ok', value: { metadata: { name: obj.name } } });
  const e = await stopped(run(stuck, true));
  expect(e.reason).toBe('StorageCountUnconfirmed');
  expect(migrateExitCode(e.reason)).toBe(MIGRATE_EXIT_CODES.unconfirmed);
  expect([...stuck.stored.values()]).toEqual(KINDS.map(() => ['v1alpha1', 'v1beta1']));
});

test('a failed prune: StoragePruneFailed (exit 13); the objects stay rewritten', async () => {
  const api = new FakeApi(1);
  api.fault = (call) => (call === 'prune' ? { category: 'forbidden', code: 403, message: 'forbidden' } : undefined);
  const e = await stopped(run(api, true));
  expect([e.reason, e.exitCategory, migrateExitCode(e.reason, 'invalid')]).toEqual([
    'StoragePruneFailed',
    'forbidden',
    13,
  ]);
  expect(migrateExitCode(e.reason, e.failure?.category)).toBeUndefined(); // 403: the CLI-wide 9
});

test("resumable: a second run with the first run's marker skips every object already rewritten", async () => {
  const api = new FakeApi(4);
  api.fault = (call, ref) =>
    call === 'mark' && ref?.kind === 'SandboxTemplate' ? { category: 'invalid', message: 'denied' } : undefined;
  const first = await stopped(run(api, true));
  api.fault = () => undefined;
  api.calls.length = 0;
  const again = await run(api, true, first.result.marker);
  expect(again.kinds.map((k) => [k.kind, k.skipped, k.rewritten])).toEqual([
    ['Sandbox', 4, 0],
    ['SandboxClaim', 4, 0],
    ['SandboxTemplate', 0, 4],
    ['SandboxWarmPool', 0, 4],
  ]);
  expect([...api.stored.values()]).toEqual(KINDS.map(() => ['v1beta1']));
});

test('a CRD that does not exist is reported absent; objects deleted meanwhile count as gone', async () => {
  const api = new FakeApi(2);
  api.stored.delete(KINDS[3]!.crdName);
  api.afterList = (ref) => {
    if (ref.kind === 'Sandbox') api.objects.get('Sandbox')!.delete('ns/o0');
  };
  const r = await run(api, true);
  expect(r.kinds.map((k) => [k.kind, k.outcome, k.gone])).toEqual([
    ['Sandbox', 'pruned', 1],
    ['SandboxClaim', 'pruned', 0],
    ['SandboxTemplate', 'pruned', 0],
    ['SandboxWarmPool', 'absent', 0],
  ]);
});
