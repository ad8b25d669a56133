/**
 * Storage migration (`agentplane migrate-storage`): every Agent Sandbox object, all four kinds, all namespaces, is
 * written once through the API server, which re-encodes it at the CRD's storage version; then, per kind, and only
 * once a re-list shows every object of that kind carrying this run's marker, `status.storedVersions` is pruned to the
 * storage version. The API server does not check a prune: pruning a version some object is still stored as makes
 * that object unreadable once the version leaves the CRD (`pkg/apiserver/conversion/converter.go@v0.37.0` of
 * k8s.io/apiextensions-apiserver), so nothing is pruned after a failed write or an unconfirmed re-list.
 *
 * The write is a JSON merge patch of one annotation ({@link MIGRATED_AT_ANNOTATION}, value: the run's marker, an ISO
 * timestamp) with `metadata.resourceVersion` as precondition; a new value makes it a real write (the API server skips
 * writes that change nothing). A conflict re-reads the object and tries again. Resumable: objects already carrying a
 * marker at or after the run's marker are skipped (`--resume MARKER`). Dry-run unless `apply`.
 *
 * Every API call goes through {@link StorageApi}, the narrowest place to fake.
 */
import * as k8s from '@kubernetes/client-node';
import type { ReleaseFacts, SandboxKind } from '../../releases/types.js';
import { AgentPlaneError, exitCategoryOfFailure, type ExitCategory } from '../../model/errors.js';
import { SANDBOX_KINDS } from '../../model/releases.js';
import type { AdapterError, Result } from '../types.js';
import type { KubeClient } from './client.js';
import type { Obj } from './cluster.js';

/** The annotation the rewrite sets: the run's marker. */
export const MIGRATED_AT_ANNOTATION = 'agentplane.dev/storage-migrated-at';

/** Where a kind lives. */
export interface StorageKindRef {
  readonly kind: SandboxKind;
  readonly crdName: string;
  readonly group: string;
  readonly plural: string;
}

/** A CRD as the migration reads it. */
export interface CrdStorage {
  /** The version `spec.versions[].storage` names (undefined: none served as storage). */
  readonly storage?: string;
  readonly storedVersions: readonly string[];
}

/** The API calls of a storage migration. Each returns the classified outcome, never throws. */
export interface StorageApi {
  /** Where the calls go, e.g. `context kind-agents`. */
  readonly source: string;
  readCrd(name: string): Promise<Result<CrdStorage>>;
  list(ref: StorageKindRef, version: string, cont?: string): Promise<Result<{ items: Obj[]; continue?: string }>>;
  get(ref: StorageKindRef, version: string, namespace: string | undefined, name: string): Promise<Result<Obj>>;
  /** Merge-patches the marker annotation, preconditioned on `resourceVersion`. */
  mark(
    ref: StorageKindRef,
    version: string,
    obj: { namespace?: string; name: string; resourceVersion: string },
    marker: string,
  ): Promise<Result<Obj>>;
  /** Sets `status.storedVersions` of the CRD (status subresource, merge patch). */
  pruneStoredVersions(crdName: string, versions: readonly string[]): Promise<Result<unknown>>;
}

/** What happened to one kind. */
export interface KindMigration {
  readonly kind: SandboxKind;
  readonly crd: string;
  /** `absent`: the CRD does not exist; `dry-run`: nothing written; `rewritten`: every object rewritten, nothing to prune; `pruned`: rewritten and pruned. */
  outcome: 'absent' | 'dry-run' | 'rewritten' | 'pruned';
  storageVersion?: string;
  storedVersionsBefore: readonly string[];
  storedVersionsAfter: readonly string[];
  /** Objects found by the first list. */
  listed: number;
  /** Objects written (dry-run: that would be written). */
  rewritten: number;
  /** Objects already carrying a marker at or after the run's. */
  skipped: number;
  /** Objects deleted while the run went on (nothing to migrate). */
  gone: number;
  /** Conflicts met and retried. */
  conflicts: number;
  /** Objects of the confirming re-list, and how many of them carry the run's marker (equal, or nothing is pruned). */
  relisted?: number;
  confirmed?: number;
  /** Dry-run: whether --apply would prune storedVersions (to the storage version). */
  wouldPrune?: boolean;
}

export interface StorageMigrationResult {
  readonly mode: 'dry-run' | 'apply';
  /** The run's marker (the annotation value); `--resume` it to skip what this run already rewrote. */
  readonly marker: string;
  readonly source: string;
  readonly kinds: KindMigration[];
  /** Objects written (dry-run: that would be), over all kinds; elapsed time; writes per second. */
  rewritten: number;
  elapsedMs: number;
  objectsPerSecond: number;
}

/** Why a migration stopped. Whatever it is, no storedVersions of an unfinished kind were touched. */
export type StorageMigrationReason =
  /** A read (CRD, list, re-read after a conflict) failed. */
  | 'StorageReadFailed'
  /** A write failed, or kept conflicting past the retries. */
  | 'StorageWriteFailed'
  /** The re-list found objects without the run's marker after the last pass. */
  | 'StorageCountUnconfirmed'
  /** The status patch of storedVersions failed (every object of the kind was rewritten). */
  | 'StoragePruneFailed';

/** A migration that stopped; `result` says what was done before (per kind). */
export class StorageMigrationError extends AgentPlaneError {
  readonly exitCategory: ExitCategory;
  readonly hint: string;
  /** The failed call's category (`unreachable`, `forbidden`, ...), as on every command's cluster errors. */
  readonly category?: string;
  constructor(
    readonly reason: StorageMigrationReason,
    message: string,
    readonly result: StorageMigrationResult,
    readonly failure?: AdapterError,
  ) {
    super(message);
    this.exitCategory = failure === undefined ? 'cluster' : exitCategoryOfFailure(failure.category, 'cluster');
    if (failure !== undefined) this.category = failure.category;
    this.hint =
      failure?.hint ??
      `nothing of an unfinished kind was pruned; run again with --apply --resume ${result.marker} to skip what is done`;
  }
}

export interface StorageMigrationOptions {
  /** Write (true) or only count what would be written (false). */
  readonly apply: boolean;
  /** Marker of an earlier run to resume (skip objects carrying it or a later one). @default - a new one, now */
  readonly marker?: string;
  /** Lines for stderr on long runs. */
  readonly progress?: (line: string) => void;
  /** Retries of one object's write after conflicts. @default 5 */
  readonly conflictRetries?: number;
  /** Writes in flight. @default 8 */
  readonly concurrency?: number;
  /** Passes over objects the re-list finds without the marker (created meanwhile). @default 3 */
  readonly passes?: number;
  /** Clock, for tests. */
  readonly now?: () => Date;
}

const ISO_MARKER = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Whether `s` is a marker this command writes (an ISO timestamp with milliseconds, UTC). */
export function isMarker(s: string): boolean {
  return ISO_MARKER.test(s);
}

/** The four kinds as named in `facts` (CRD names, groups and plurals are the same in every supported release). */
export function storageKinds(facts: ReleaseFacts): StorageKindRef[] {
  return SANDBOX_KINDS.map((kind) => {
    const { crdName, group, plural } = facts.crds[kind];
    return { kind, crdName, group, plural };
  });
}

function markerOf(o: Obj): string | undefined {
  const a = (o.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
  return a?.[MIGRATED_AT_ANNOTATION];
}

/** Carries `marker` or a later one (ISO timestamps order as strings). */
const carries = (o: Obj, marker: string): boolean => {
  const m = markerOf(o);
  return m !== undefined && isMarker(m) && m >= marker;
};

/**
 * Migrates the storage of every kind in `kinds`, in order; see the file comment.
 * @throws {StorageMigrationError} a read or write failed, or the re-list did not confirm; storedVersions of that kind untouched.
 */
export async function migrateStorage(
  api: StorageApi,
  kinds: readonly StorageKindRef[],
  opts: StorageMigrationOptions,
): Promise<StorageMigrationResult> {
  const now = opts.now ?? (() => new Date());
  const started = now().getTime();
  const marker = opts.marker ?? now().toISOString();
  const retries = opts.conflictRetries ?? 5;
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  const passes = Math.max(1, opts.passes ?? 3);
  const progress = opts.progress ?? (() => undefined);
  const result: StorageMigrationResult = {
    mode: opts.apply ? 'apply' : 'dry-run',
    marker,
    source: api.source,
    kinds: [],
    rewritten: 0,
    elapsedMs: 0,
    objectsPerSecond: 0,
  };
  const finish = (): void => {
    result.elapsedMs = now().getTime() - started;
    result.objectsPerSecond = result.elapsedMs > 0 ? Math.round((result.rewritten * 1000) / result.elapsedMs) : 0;
  };
  const fail = (reason: StorageMigrationReason, message: string, failure?: AdapterError): never => {
    finish();
    throw new StorageMigrationError(reason, message, result, failure);
  };
  const failed = <T>(r: Result<T>): AdapterError | undefined =>
    r.kind === 'failed' ? r.error : r.kind === 'ok' ? undefined : { category: 'internal', message: r.message };

  const listAll = async (ref: StorageKindRef, version: string): Promise<Obj[]> => {
    const items: Obj[] = [];
    let cont: string | undefined;
    do {
      const r = await api.list(ref, version, cont);
      if (r.kind !== 'ok')
        return fail('StorageReadFailed', `cannot list ${ref.plural}.${ref.group}/${version}`, failed(r));
      items.push(...r.value.items);
      cont = r.value.continue || undefined;
    } while (cont !== undefined);
    return items;
  };

  for (const ref of kinds) {
    const crd = await api.readCrd(ref.crdName);
    if (crd.kind !== 'ok') {
      const err = failed(crd);
      if (err?.category === 'not-found') {
        result.kinds.push({
          kind: ref.kind,
          crd: ref.crdName,
          outcome: 'absent',
          storedVersionsBefore: [],
          storedVersionsAfter: [],
          listed: 0,
          rewritten: 0,
          skipped: 0,
          gone: 0,
          conflicts: 0,
        });
        continue;
      }
      fail('StorageReadFailed', `cannot read CRD ${ref.crdName}`, err);
      continue;
    }
    const storage = crd.value.storage;
    if (storage === undefined) return fail('StorageReadFailed', `CRD ${ref.crdName} names no storage version`);
    const k: KindMigration = {
      kind: ref.kind,
      crd: ref.crdName,
      outcome: 'dry-run',
      storageVersion: storage,
      storedVersionsBefore: crd.value.storedVersions,
      storedVersionsAfter: crd.value.storedVersions,
      listed: 0,
      rewritten: 0,
      skipped: 0,
      gone: 0,
      conflicts: 0,
    };
    result.kinds.push(k);
    const needsPrune = !(crd.value.storedVersions.length === 1 && crd.value.storedVersions[0] === storage);
    let items = await listAll(ref, storage);
    k.listed = items.length;
    if (!opts.apply) {
      k.skipped = items.filter((o) => carries(o, marker)).length;
      k.rewritten = k.listed - k.skipped;
      result.rewritten += k.rewritten;
      k.wouldPrune = needsPrune;
      progress(`${ref.kind}: ${k.listed} object(s), ${k.rewritten} to rewrite (dry-run)`);
      continue;
    }

    let done = 0;
    let lastReport = now().getTime();
    const rewrite = async (obj: Obj): Promise<void> => {
      const meta = obj.metadata ?? {};
      const name = meta.name ?? '';
      let current = obj;
      for (let attempt = 0; ; attempt++) {
        const r = await api.mark(
          ref,
          storage,
          {
            ...(meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
            name,
            resourceVersion: current.metadata?.resourceVersion ?? '',
          },
          marker,
        );
        if (r.kind === 'ok') {
          k.rewritten += 1;
          result.rewritten += 1;
          return;
        }
        const err = failed(r)!;
        if (err.category === 'not-found') {
          k.gone += 1;
          return;
        }
        if (err.category !== 'conflict' || attempt >= retries)
          return fail(
            'StorageWriteFailed',
            `cannot rewrite ${ref.kind} ${meta.namespace ?? ''}/${name}${err.category === 'conflict' ? ` (${attempt + 1} conflicts)` : ''}: ${err.message}`,
            err,
          );
        k.conflicts += 1;
        const g = await api.get(ref, storage, meta.namespace, name);
        if (g.kind !== 'ok') {
          const ge = failed(g)!;
          if (ge.category === 'not-found') {
            k.gone += 1;
            return;
          }
          return fail('StorageReadFailed', `cannot re-read ${ref.kind} ${meta.namespace ?? ''}/${name}`, ge);
        }
        current = g.value;
        if (carries(current, marker)) {
          k.skipped += 1;
          return;
        }
      }
    };
    const runPass = async (todo: Obj[]): Promise<void> => {
      let next = 0;
      let stopped = false;
      const worker = async (): Promise<void> => {
        while (!stopped && next < todo.length) {
          const obj = todo[next++]!;
          try {
            await rewrite(obj);
          } catch (err) {
            // the first failure stops every worker: no write after it
            stopped = true;
            throw err;
          }
          done += 1;
          const t = now().getTime();
          if (t - lastReport >= 2000) {
            lastReport = t;
            progress(`${ref.kind}: ${done}/${todo.length} rewritten`);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, worker));
    };

    let todo = items.filter((o) => {
      if (!carries(o, marker)) return true;
      k.skipped += 1;
      return false;
    });
    for (let pass = 1; ; pass++) {
      done = 0;
      await runPass(todo);
      items = await listAll(ref, storage);
      k.relisted = items.length;
      k.confirmed = items.filter((o) => carries(o, marker)).length;
      if (k.confirmed === k.relisted) break;
      if (pass >= passes)
        return fail(
          'StorageCountUnconfirmed',
          `${ref.kind}: the re-list found ${k.relisted - k.confirmed} of ${k.relisted} object(s) without the marker after ${pass} pass(es)`,
        );
      todo = items.filter((o) => !carries(o, marker));
    }
    progress(`${ref.kind}: ${k.rewritten} rewritten, ${k.skipped} skipped, ${k.gone} gone; re-list ${k.relisted}`);
    k.outcome = 'rewritten';
    if (needsPrune) {
      const p = await api.pruneStoredVersions(ref.crdName, [storage]);
      if (p.kind !== 'ok')
        return fail('StoragePruneFailed', `cannot prune status.storedVersions of ${ref.crdName}`, failed(p));
      const after = await api.readCrd(ref.crdName);
      k.storedVersionsAfter = after.kind === 'ok' ? after.value.storedVersions : [storage];
      k.outcome = 'pruned';
      progress(`${ref.kind}: status.storedVersions pruned to [${storage}]`);
    }
  }
  finish();
  return result;
}

/** The {@link StorageApi} of a cluster, through `client` (deadline, rate limit and error classification of KubeClient). */
export function kubeStorageApi(client: KubeClient, pageSize = 500): StorageApi {
  const ext = client.api(k8s.ApiextensionsV1Api);
  const co = client.api(k8s.CustomObjectsApi);
  const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const resource = (ref: StorageKindRef): string => `${ref.plural}.${ref.group}`;
  return {
    source: `context ${client.context}`,
    async readCrd(name) {
      const r = await client.call(`get customresourcedefinitions.apiextensions.k8s.io ${name}`, () =>
        ext.readCustomResourceDefinition({ name }),
      );
      if (r.kind !== 'ok') return r;
      const storage = r.value.spec.versions.find((v) => v.storage)?.name;
      return {
        kind: 'ok',
        value: { ...(storage !== undefined ? { storage } : {}), storedVersions: r.value.status?.storedVersions ?? [] },
      };
    },
    list(ref, version, cont) {
      return client
        .call(
          `list ${resource(ref)}`,
          () =>
            co.listCustomObjectForAllNamespaces({
              group: ref.group,
              version,
              plural: ref.plural,
              limit: pageSize,
              ...(cont !== undefined ? { _continue: cont } : {}),
            }) as Promise<{ items: Obj[]; metadata?: { _continue?: string; continue?: string } }>,
        )
        .then((r) =>
          r.kind !== 'ok'
            ? r
            : {
                kind: 'ok' as const,
                value: {
                  items: r.value.items ?? [],
                  ...(r.value.metadata?.continue || r.value.metadata?._continue
                    ? { continue: (r.value.metadata.continue ?? r.value.metadata._continue)! }
                    : {}),
                },
              },
        );
    },
    get(ref, version, namespace, name) {
      return client.call(`get ${resource(ref)} ${name}`, () =>
        namespace === undefined
          ? (co.getClusterCustomObject({ group: ref.group, version, plural: ref.plural, name }) as Promise<Obj>)
          : (co.getNamespacedCustomObject({
              group: ref.group,
              version,
              plural: ref.plural,
              namespace,
              name,
            }) as Promise<Obj>),
      );
    },
    mark(ref, version, obj, marker) {
      const body = {
        metadata: { resourceVersion: obj.resourceVersion, annotations: { [MIGRATED_AT_ANNOTATION]: marker } },
      };
      return client.call({ verb: 'patch', resource: resource(ref), contentType: k8s.PatchStrategy.MergePatch }, () =>
        obj.namespace === undefined
          ? (co.patchClusterCustomObject(
              { group: ref.group, version, plural: ref.plural, name: obj.name, body },
              merge,
            ) as Promise<Obj>)
          : (co.patchNamespacedCustomObject(
              { group: ref.group, version, plural: ref.plural, namespace: obj.namespace, name: obj.name, body },
              merge,
            ) as Promise<Obj>),
      );
    },
    pruneStoredVersions(crdName, versions) {
      return client.call(
        {
          verb: 'patch',
          resource: 'customresourcedefinitions/status.apiextensions.k8s.io',
          contentType: k8s.PatchStrategy.MergePatch,
        },
        () =>
          ext.patchCustomResourceDefinitionStatus(
            { name: crdName, body: { status: { storedVersions: [...versions] } } },
            merge,
          ),
      );
    },
  };
}
