/**
 * Generic cluster reads, writes and watch waits on top of {@link KubeClient} (which classifies every failure and
 * applies deadlines), used by the verifier's probes and the compatibility worksheet. Every call returns a Result;
 * nothing here throws for an API answer. Waiting is done with watches, never polling: one read for the current state
 * and resourceVersion, then a watch stream, re-read and resumed after an end, a 410 or a fault (case client-node-watch-reconnect), with backoff
 * so requests/s while waiting stay at or below about one.
 */
import * as k8s from '@kubernetes/client-node';
import type { AdapterError, Result } from '../types.js';
import type { KubeClient } from './client.js';
import { openWatch } from './watch-stream.js';

/** A custom resource address. */
export interface CustomRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace: string;
}

/** A plain JSON object as the API returns it. */
export type Obj = Record<string, unknown> & {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ kind?: string; name?: string; uid?: string; controller?: boolean }>;
  };
};

/** What a wait went through: stream re-opens, `410 Gone` answers and failed reads or streams. */
export interface WaitFaults {
  readonly reconnects: number;
  readonly gone: number;
  readonly errors: number;
}

/**
 * Outcome of {@link Cluster.waitFor}: the object that matched (absent when absence matched), or the last one seen when
 * the deadline passed.
 */
export type WaitOutcome = WaitFaults &
  (
    | { readonly kind: 'matched'; readonly obj?: Obj; readonly waitedMs: number }
    | { readonly kind: 'timeout'; readonly last?: Obj; readonly waitedMs: number }
    | { readonly kind: 'failed'; readonly error: AdapterError; readonly waitedMs: number }
  );

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** A progress line every {@link PROGRESS_EVERY_MS} while waiting (elapsed, deadline, reconnects). */
  readonly progress?: (text: string, kind: 'waiting') => void;
}

/** How one watch stream ended. */
type StreamEnd =
  | { readonly kind: 'matched' | 'gone' | 'error' | 'stopped' }
  | { readonly kind: 'ended'; readonly healthy: boolean }
  | { readonly kind: 'refused'; readonly error: AdapterError };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Failures a wait rides out (retrying with backoff until its deadline); anything else ends it. */
const RETRIABLE = new Set<string>(['unreachable', 'timeout', 'internal', 'throttled', 'runtime']);
/** First re-open delay after a failure, and the cap of the exponential backoff, ms. */
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 16_000;
/** A stream that lasted this long before the server ended it was healthy: resume without backoff. */
const HEALTHY_STREAM_MS = 5_000;
export const PROGRESS_EVERY_MS = 5_000;

/**
 * Delay before re-open number `attempt` (1, 2, …) after failures: base·2^(attempt-1), capped, with "equal jitter" (a
 * uniform draw in the upper half), so the mean gap is at least 0.75 s and a storm of clients does not re-open in step.
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return ceiling / 2 + random() * (ceiling / 2);
}

/** Resolves true after `ms`, false at once when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Counters for the benchmark and the soundness rules: API requests made, and the waits' own requests. */
export interface RequestStats {
  readonly requests: number;
  readonly watchStarts: number;
  /** Time spent in waits, summed over waits (concurrent waits each count). */
  readonly waitingMs: number;
  /**
   * Requests the waits themselves made (their reads and watch streams), not other work running meanwhile: with probes
   * in parallel, a window count would charge a wait with every concurrent probe's requests.
   */
  readonly requestsWhileWaiting: number;
  /** Number of waits (each costs one GET and one watch stream, plus a re-open only if the server closes it). */
  readonly waits: number;
}

export class Cluster {
  private watchStarts = 0;
  private waitingMs = 0;
  private requestsWhileWaiting = 0;
  private waits = 0;

  /** @param random jitter source (tests pin it). */
  constructor(
    readonly client: KubeClient,
    private readonly random: () => number = Math.random,
  ) {}

  /** Requests so far (KubeClient calls + watch streams opened) and time spent waiting. */
  stats(): RequestStats {
    return {
      requests: this.client.requests + this.watchStarts,
      watchStarts: this.watchStarts,
      waitingMs: this.waitingMs,
      requestsWhileWaiting: this.requestsWhileWaiting,
      waits: this.waits,
    };
  }

  /** `/version` gitVersion. */
  version(): Promise<Result<string>> {
    return this.map(
      this.client.call('get version', () => this.client.api(k8s.VersionApi).getCode()),
      (v) => v.gitVersion,
    );
  }

  /**
   * A CustomResourceDefinition exactly as the API serves it (wire field names: `default`, `enum`, `x-kubernetes-*`;
   * client-node's typed read renames those), for versions, labels, caBundle and schema fingerprints; `ok(undefined)` when absent.
   */
  crd(name: string): Promise<Result<Obj | undefined>> {
    return this.optional(
      this.client.call(
        'get customresourcedefinitions.apiextensions.k8s.io',
        () =>
          this.client.api(k8s.CustomObjectsApi).getClusterCustomObject({
            group: 'apiextensions.k8s.io',
            version: 'v1',
            plural: 'customresourcedefinitions',
            name,
          }) as Promise<Obj>,
      ),
      false,
    );
  }

  deployment(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(
      this.client.call('get deployments.apps', () =>
        this.client.api(k8s.AppsV1Api).readNamespacedDeployment({ namespace, name }),
      ),
    );
  }

  daemonSets(namespace: string): Promise<Result<Obj[]>> {
    return this.items(
      this.client.call('list daemonsets.apps', () =>
        this.client.api(k8s.AppsV1Api).listNamespacedDaemonSet({ namespace }),
      ),
    );
  }

  service(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(
      this.client.call('get services', () => this.client.api(k8s.CoreV1Api).readNamespacedService({ namespace, name })),
    );
  }

  serviceAccount(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(
      this.client.call('get serviceaccounts', () =>
        this.client.api(k8s.CoreV1Api).readNamespacedServiceAccount({ namespace, name }),
      ),
    );
  }

  nodes(): Promise<Result<Obj[]>> {
    return this.items(this.client.call('list nodes', () => this.client.api(k8s.CoreV1Api).listNode()));
  }

  pods(namespace: string, labelSelector?: string): Promise<Result<Obj[]>> {
    return this.items(
      this.client.call('list pods', () =>
        this.client.api(k8s.CoreV1Api).listNamespacedPod({ namespace, ...(labelSelector ? { labelSelector } : {}) }),
      ),
    );
  }

  pod(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(
      this.client.call('get pods', () => this.client.api(k8s.CoreV1Api).readNamespacedPod({ namespace, name })),
    );
  }

  events(namespace: string, fieldSelector: string): Promise<Result<Obj[]>> {
    return this.items(
      this.client.call('list events', () =>
        this.client.api(k8s.CoreV1Api).listNamespacedEvent({ namespace, fieldSelector }),
      ),
    );
  }

  runtimeClass(name: string): Promise<Result<Obj | undefined>> {
    return this.optional(
      this.client.call('get runtimeclasses.node.k8s.io', () =>
        this.client.api(k8s.NodeV1Api).readRuntimeClass({ name }),
      ),
    );
  }

  networkPolicies(namespace: string): Promise<Result<Obj[]>> {
    return this.items(
      this.client.call('list networkpolicies.networking.k8s.io', () =>
        this.client.api(k8s.NetworkingV1Api).listNamespacedNetworkPolicy({ namespace }),
      ),
    );
  }

  /** API groups served (`/apis`), e.g. to see whether `podsnapshot.gke.io` exists. */
  apiGroups(): Promise<Result<string[]>> {
    return this.map(
      this.client.call('get apis', () => this.client.api(k8s.ApisApi).getAPIVersions()),
      (list) => (list.groups ?? []).map((g) => g.name),
    );
  }

  /**
   * Whether `user` (e.g. `system:serviceaccount:ns:name`) may do `verb` on the resource, per a SubjectAccessReview;
   * `reason` is the authorizer's `status.reason` as sent (upstream words, not one of AgentPlane's codes).
   */
  canI(
    user: string,
    attrs: { verb: string; group: string; resource: string; subresource?: string; namespace?: string; name?: string },
  ): Promise<Result<{ allowed: boolean; reason: string }>> {
    const groups = user.startsWith('system:serviceaccount:')
      ? ['system:serviceaccounts', `system:serviceaccounts:${user.split(':')[2]}`, 'system:authenticated']
      : ['system:authenticated'];
    const body: k8s.V1SubjectAccessReview = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, groups, resourceAttributes: { ...attrs } },
    };
    return this.map(
      this.client.call('create subjectaccessreviews.authorization.k8s.io', () =>
        this.client.api(k8s.AuthorizationV1Api).createSubjectAccessReview({ body }),
      ),
      (r) => ({ allowed: r.status?.allowed === true, reason: r.status?.reason ?? '' }),
    );
  }

  getCustom(ref: CustomRef, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(
      this.client.call(
        `get ${ref.plural}.${ref.group}`,
        () => this.client.api(k8s.CustomObjectsApi).getNamespacedCustomObject({ ...ref, name }) as Promise<Obj>,
      ),
      false,
    );
  }

  listCustom(ref: CustomRef, labelSelector?: string): Promise<Result<Obj[]>> {
    return this.items(
      this.client.call(
        `list ${ref.plural}.${ref.group}`,
        () =>
          this.client
            .api(k8s.CustomObjectsApi)
            .listNamespacedCustomObject({ ...ref, ...(labelSelector ? { labelSelector } : {}) }) as Promise<{
            items?: Obj[];
          }>,
      ),
      false,
    );
  }

  createCustom(ref: CustomRef, body: Obj): Promise<Result<Obj>> {
    return this.client.call(
      `create ${ref.plural}.${ref.group}`,
      () => this.client.api(k8s.CustomObjectsApi).createNamespacedCustomObject({ ...ref, body }) as Promise<Obj>,
    );
  }

  /** Deletes with foreground propagation; `ok('gone')` when it was already gone. */
  async deleteCustom(ref: CustomRef, name: string): Promise<Result<'deleted' | 'gone'>> {
    const r = await this.client.call(`delete ${ref.plural}.${ref.group}`, () =>
      this.client
        .api(k8s.CustomObjectsApi)
        .deleteNamespacedCustomObject({ ...ref, name, propagationPolicy: 'Background' }),
    );
    if (r.kind === 'ok') return { kind: 'ok', value: 'deleted' };
    if (r.kind === 'failed' && r.error.category === 'not-found') return { kind: 'ok', value: 'gone' };
    return r;
  }

  /** Merge-patches a custom object (explicit media type, case client-node-patch-content-type). */
  patchCustom(ref: CustomRef, name: string, body: Obj): Promise<Result<Obj>> {
    return this.client.call(
      { verb: 'patch', resource: `${ref.plural}.${ref.group}`, contentType: k8s.PatchStrategy.MergePatch },
      () =>
        this.client
          .api(k8s.CustomObjectsApi)
          .patchNamespacedCustomObject(
            { ...ref, name, body },
            k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
          ) as Promise<Obj>,
    );
  }

  /**
   * Waits until the named object satisfies `ready` (or `gone` is asked and it disappears): read it, watch from its
   * resourceVersion, and on end-of-stream, a `410 Gone` (HTTP or in-stream) or a transport error read it again and
   * resume. After a 410 the resumes open without a resourceVersion (the server sends the current state, then changes):
   * an object's resourceVersion is its last write, which an unchanged object keeps after etcd compacted past it, so
   * resuming from it would be answered 410 again and again. Re-opens after a failure back off exponentially with
   * jitter up to a cap ({@link backoffMs}), so requests stay near or below one per second while the server is
   * unreachable or erroring; the deadline holds throughout. A match seen on the stream is confirmed by a fresh read
   * before it is returned.
   * @param path collection path, e.g. `/apis/agents.x-k8s.io/v1beta1/namespaces/sbx/sandboxes`
   * @param get reads the object now (start, every resume, and the confirming read)
   */
  async waitFor(
    path: string,
    name: string,
    get: () => Promise<Result<Obj | undefined>>,
    ready: (obj: Obj | undefined) => boolean,
    opts: WaitOptions,
  ): Promise<WaitOutcome> {
    const started = Date.now();
    const deadline = started + opts.timeoutMs;
    let own = 0;
    const faults = { reconnects: 0, gone: 0, errors: 0 };
    let last: Obj | undefined;
    let lastProgress = started;
    const finish = (o: DistributiveOmit<WaitOutcome, 'waitedMs' | 'reconnects' | 'gone' | 'errors'>): WaitOutcome => {
      this.waits += 1;
      this.waitingMs += Date.now() - started;
      this.requestsWhileWaiting += own;
      return { ...o, waitedMs: Date.now() - started, ...faults } as WaitOutcome;
    };
    const stopped = (): boolean => opts.signal?.aborted === true || Date.now() >= deadline;
    const timeout = (): WaitOutcome => finish({ kind: 'timeout', ...(last ? { last } : {}) });
    let attempt = 0;
    let confirming = false;
    let expired = false;
    for (let round = 0; ; round += 1) {
      if (round > 0 && !confirming) {
        faults.reconnects += 1;
        if (
          attempt > 0 &&
          !(await sleep(Math.min(backoffMs(attempt, this.random), Math.max(0, deadline - Date.now())), opts.signal))
        )
          return timeout();
      }
      if (stopped()) return timeout();
      const now = Date.now();
      if (opts.progress && now - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = now;
        opts.progress(
          `waiting for ${name}: ${Math.round((now - started) / 1000)}s of ${Math.round(opts.timeoutMs / 1000)}s${faults.reconnects ? `, ${faults.reconnects} reconnect(s)` : ''}`,
          'waiting',
        );
      }
      own += 1;
      const read = await get();
      if (read.kind !== 'ok') {
        const error = read.kind === 'failed' ? read.error : { category: 'internal' as const, message: read.message };
        if (!RETRIABLE.has(error.category)) return finish({ kind: 'failed', error });
        faults.errors += 1;
        attempt += 1;
        if (stopped()) return finish({ kind: 'failed', error });
        continue;
      }
      last = read.value;
      confirming = false;
      if (ready(last)) return finish({ kind: 'matched', ...(last ? { obj: last } : {}) });
      const from = expired ? undefined : last?.metadata?.resourceVersion;
      own += 1;
      const stream = await this.watchOnce(path, name, from, ready, deadline, opts);
      if (stream.kind === 'refused') return finish({ kind: 'failed', error: stream.error });
      if (stream.kind === 'stopped') return timeout();
      if (stream.kind === 'gone') {
        faults.gone += 1;
        expired = true;
      }
      if (stream.kind === 'error') faults.errors += 1;
      // A stream that ran a while and ended normally (the server's timeout) resumes at once; anything else backs off.
      attempt = stream.kind === 'ended' && stream.healthy ? 0 : attempt + 1;
      // A match on the stream is not returned as such: the next read confirms it (or resumes the wait).
      if (stream.kind === 'matched') {
        attempt = 0;
        confirming = true;
      }
    }
  }

  /** One watch stream from `resourceVersion` until a match, its end, a 410, an error, the deadline or the abort. */
  private async watchOnce(
    path: string,
    name: string,
    resourceVersion: string | undefined,
    ready: (obj: Obj | undefined) => boolean,
    deadline: number,
    opts: WaitOptions,
  ): Promise<StreamEnd> {
    await this.client.throttle();
    this.watchStarts += 1;
    const opened = Date.now();
    return new Promise<StreamEnd>((resolve) => {
      let settled = false;
      const abort = new AbortController();
      const end = (s: StreamEnd): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        abort.abort();
        resolve(s);
      };
      const timer = setTimeout(() => end({ kind: 'stopped' }), Math.max(0, deadline - Date.now()));
      const onAbort = (): void => end({ kind: 'stopped' });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const params: Record<string, string | number | boolean> = {
        fieldSelector: `metadata.name=${name}`,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.max(1, Math.ceil((deadline - Date.now()) / 1000)),
      };
      if (resourceVersion) params.resourceVersion = resourceVersion;
      openWatch(
        this.client.kc,
        path,
        params,
        abort.signal,
        (phase, obj) => {
          if (phase === 'ERROR') {
            // An in-stream Status: 410 means the resourceVersion was compacted away; either way the stream is over.
            end((obj as { code?: number } | null)?.code === 410 ? { kind: 'gone' } : { kind: 'error' });
            return;
          }
          if (phase === 'BOOKMARK') return;
          if (ready(phase === 'DELETED' ? undefined : (obj as Obj))) end({ kind: 'matched' });
        },
        (err) => {
          const code = err && 'statusCode' in err ? err.statusCode : undefined;
          if (code === 401 || code === 403)
            end({
              kind: 'refused',
              error: {
                category: code === 401 ? 'unauthenticated' : 'forbidden',
                code,
                message: `watch of ${path} refused with HTTP ${code}`,
              },
            });
          else if (code === 410) end({ kind: 'gone' });
          else if (err) end({ kind: 'error' });
          else end({ kind: 'ended', healthy: Date.now() - opened >= HEALTHY_STREAM_MS });
        },
      ).catch(() => end({ kind: 'error' }));
    });
  }

  /** `typed`: the value is a client-node model instance (typed API), turned into plain JSON; custom-object APIs return JSON. */
  private async optional(p: Promise<Result<unknown>>, typed = true): Promise<Result<Obj | undefined>> {
    const r = await p;
    if (r.kind === 'ok') return { kind: 'ok', value: typed ? toPlain(r.value) : (r.value as Obj) };
    if (r.kind === 'failed' && r.error.category === 'not-found' && r.error.missing !== 'api')
      return { kind: 'ok', value: undefined };
    return r;
  }

  private async items(p: Promise<Result<unknown>>, typed = true): Promise<Result<Obj[]>> {
    const r = await p;
    if (r.kind !== 'ok') return r;
    const items = (r.value as { items?: unknown[] }).items ?? [];
    return { kind: 'ok', value: typed ? items.map((i) => toPlain(i)) : (items as Obj[]) };
  }

  private async map<A, B>(p: Promise<Result<A>>, fn: (a: A) => B): Promise<Result<B>> {
    const r = await p;
    return r.kind === 'ok' ? { kind: 'ok', value: fn(r.value) } : r;
  }
}

/** client-node model instances (Dates, class objects) as plain JSON with the API's field names. */
function toPlain(value: unknown): Obj {
  return JSON.parse(JSON.stringify(value)) as Obj;
}

/** A short text for a failed Result, e.g. `forbidden: user "x" may not list pods`. */
export function failure(r: Exclude<Result<unknown>, { kind: 'ok' }>): string {
  switch (r.kind) {
    case 'failed':
      return r.error.message;
    case 'rejected':
      return r.message;
    case 'unsupported':
      return r.message;
  }
}
