/**
 * Generic cluster reads, writes and watch waits on top of {@link KubeClient} (which classifies every failure and
 * applies deadlines), used by the verifier's probes and the compatibility worksheet. Every call returns a Result;
 * nothing here throws for an API answer. Waiting is done with watches, never polling: one list to get the current
 * state and resourceVersion, then one watch stream (re-opened only if the server closes it), so requests/s while
 * waiting stay far below 1.
 */
import * as k8s from '@kubernetes/client-node';
import type { AdapterError, Result } from '../types.js';
import type { KubeClient } from './client.js';

/** A custom resource address. */
export interface CustomRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace: string;
}

/** A plain JSON object as the API returns it. */
export type Obj = Record<string, unknown> & { metadata?: { name?: string; namespace?: string; uid?: string; generation?: number; resourceVersion?: string; labels?: Record<string, string>; ownerReferences?: Array<{ kind?: string; name?: string; uid?: string; controller?: boolean }> } };

/** Outcome of {@link Cluster.waitFor}: the object that matched, or the last one seen when the deadline passed. */
export type WaitOutcome = { readonly kind: 'matched'; readonly obj: Obj; readonly waitedMs: number } | { readonly kind: 'timeout'; readonly last?: Obj; readonly waitedMs: number } | { readonly kind: 'failed'; readonly error: AdapterError; readonly waitedMs: number };

/** Counters for the benchmark: API requests made, and how many of them fell inside waits. */
export interface RequestStats {
  readonly requests: number;
  readonly watchStarts: number;
  readonly waitingMs: number;
  readonly requestsWhileWaiting: number;
  /** Number of waits (each costs one GET and one watch stream, plus a re-open only if the server closes it). */
  readonly waits: number;
}

export class Cluster {
  private watchStarts = 0;
  private waitingMs = 0;
  private requestsWhileWaiting = 0;
  private waits = 0;

  constructor(readonly client: KubeClient) {}

  /** Requests so far (KubeClient calls + watch streams opened) and time spent waiting. */
  stats(): RequestStats {
    return { requests: this.client.requests + this.watchStarts, watchStarts: this.watchStarts, waitingMs: this.waitingMs, requestsWhileWaiting: this.requestsWhileWaiting, waits: this.waits };
  }

  /** `/version` gitVersion. */
  version(): Promise<Result<string>> {
    return this.map(this.client.call('get version', () => this.client.api(k8s.VersionApi).getCode()), (v) => v.gitVersion);
  }

  /**
   * A CustomResourceDefinition exactly as the API serves it (wire field names: `default`, `enum`, `x-kubernetes-*`;
   * client-node's typed read renames those), for versions, labels, caBundle and schema fingerprints; `ok(undefined)` when absent.
   */
  crd(name: string): Promise<Result<Obj | undefined>> {
    return this.optional(this.client.call('get customresourcedefinitions.apiextensions.k8s.io', () => this.client.api(k8s.CustomObjectsApi).getClusterCustomObject({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', name }) as Promise<Obj>));
  }

  deployment(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(this.client.call('get deployments.apps', () => this.client.api(k8s.AppsV1Api).readNamespacedDeployment({ namespace, name })));
  }

  daemonSets(namespace: string): Promise<Result<Obj[]>> {
    return this.items(this.client.call('list daemonsets.apps', () => this.client.api(k8s.AppsV1Api).listNamespacedDaemonSet({ namespace })));
  }

  service(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(this.client.call('get services', () => this.client.api(k8s.CoreV1Api).readNamespacedService({ namespace, name })));
  }

  serviceAccount(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(this.client.call('get serviceaccounts', () => this.client.api(k8s.CoreV1Api).readNamespacedServiceAccount({ namespace, name })));
  }

  nodes(): Promise<Result<Obj[]>> {
    return this.items(this.client.call('list nodes', () => this.client.api(k8s.CoreV1Api).listNode()));
  }

  pods(namespace: string, labelSelector?: string): Promise<Result<Obj[]>> {
    return this.items(this.client.call('list pods', () => this.client.api(k8s.CoreV1Api).listNamespacedPod({ namespace, ...(labelSelector ? { labelSelector } : {}) })));
  }

  pod(namespace: string, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(this.client.call('get pods', () => this.client.api(k8s.CoreV1Api).readNamespacedPod({ namespace, name })));
  }

  events(namespace: string, fieldSelector: string): Promise<Result<Obj[]>> {
    return this.items(this.client.call('list events', () => this.client.api(k8s.CoreV1Api).listNamespacedEvent({ namespace, fieldSelector })));
  }

  runtimeClass(name: string): Promise<Result<Obj | undefined>> {
    return this.optional(this.client.call('get runtimeclasses.node.k8s.io', () => this.client.api(k8s.NodeV1Api).readRuntimeClass({ name })));
  }

  networkPolicies(namespace: string): Promise<Result<Obj[]>> {
    return this.items(this.client.call('list networkpolicies.networking.k8s.io', () => this.client.api(k8s.NetworkingV1Api).listNamespacedNetworkPolicy({ namespace })));
  }

  /** API groups served (`/apis`), e.g. to see whether `podsnapshot.gke.io` exists. */
  apiGroups(): Promise<Result<string[]>> {
    return this.map(this.client.call('get apis', () => this.client.api(k8s.ApisApi).getAPIVersions()), (list) => (list.groups ?? []).map((g) => g.name));
  }

  /** Whether `user` (e.g. `system:serviceaccount:ns:name`) may do `verb` on the resource, per a SubjectAccessReview. */
  canI(user: string, attrs: { verb: string; group: string; resource: string; subresource?: string; namespace?: string; name?: string }): Promise<Result<{ allowed: boolean; reason: string }>> {
    const groups = user.startsWith('system:serviceaccount:') ? ['system:serviceaccounts', `system:serviceaccounts:${user.split(':')[2]}`, 'system:authenticated'] : ['system:authenticated'];
    const body: k8s.V1SubjectAccessReview = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups, resourceAttributes: { ...attrs } } };
    return this.map(
      this.client.call('create subjectaccessreviews.authorization.k8s.io', () => this.client.api(k8s.AuthorizationV1Api).createSubjectAccessReview({ body })),
      (r) => ({ allowed: r.status?.allowed === true, reason: r.status?.reason ?? '' }),
    );
  }

  getCustom(ref: CustomRef, name: string): Promise<Result<Obj | undefined>> {
    return this.optional(this.client.call(`get ${ref.plural}.${ref.group}`, () => this.client.api(k8s.CustomObjectsApi).getNamespacedCustomObject({ ...ref, name }) as Promise<Obj>));
  }

  listCustom(ref: CustomRef, labelSelector?: string): Promise<Result<Obj[]>> {
    return this.items(this.client.call(`list ${ref.plural}.${ref.group}`, () => this.client.api(k8s.CustomObjectsApi).listNamespacedCustomObject({ ...ref, ...(labelSelector ? { labelSelector } : {}) }) as Promise<{ items?: Obj[] }>));
  }

  createCustom(ref: CustomRef, body: Obj): Promise<Result<Obj>> {
    return this.client.call(`create ${ref.plural}.${ref.group}`, () => this.client.api(k8s.CustomObjectsApi).createNamespacedCustomObject({ ...ref, body }) as Promise<Obj>);
  }

  /** Deletes with foreground propagation; `ok('gone')` when it was already gone. */
  async deleteCustom(ref: CustomRef, name: string): Promise<Result<'deleted' | 'gone'>> {
    const r = await this.client.call(`delete ${ref.plural}.${ref.group}`, () =>
      this.client.api(k8s.CustomObjectsApi).deleteNamespacedCustomObject({ ...ref, name, propagationPolicy: 'Background' }),
    );
    if (r.kind === 'ok') return { kind: 'ok', value: 'deleted' };
    if (r.kind === 'failed' && r.error.category === 'not-found') return { kind: 'ok', value: 'gone' };
    return r;
  }

  /** Merge-patches a custom object (explicit media type, case 23). */
  patchCustom(ref: CustomRef, name: string, body: Obj): Promise<Result<Obj>> {
    return this.client.call(
      { verb: 'patch', resource: `${ref.plural}.${ref.group}`, contentType: k8s.PatchStrategy.MergePatch },
      () => this.client.api(k8s.CustomObjectsApi).patchNamespacedCustomObject({ ...ref, name, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)) as Promise<Obj>,
    );
  }

  /**
   * Waits until the named object satisfies `ready` (or `gone` is asked and it disappears), using one GET and one watch.
   * @param path collection path, e.g. `/apis/agents.x-k8s.io/v1beta1/namespaces/sbx/sandboxes`
   * @param get reads the object now (used once, for the starting state and resourceVersion)
   */
  async waitFor(path: string, name: string, get: () => Promise<Result<Obj | undefined>>, ready: (obj: Obj | undefined) => boolean, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<WaitOutcome> {
    const started = Date.now();
    const before = this.client.requests + this.watchStarts;
    const finish = <T extends WaitOutcome>(o: T): T => {
      this.waits += 1;
      this.waitingMs += Date.now() - started;
      this.requestsWhileWaiting += this.client.requests + this.watchStarts - before;
      return o;
    };
    const first = await get();
    if (first.kind !== 'ok') return finish({ kind: 'failed', error: first.kind === 'failed' ? first.error : { category: 'internal', message: 'unexpected result' }, waitedMs: Date.now() - started });
    let last = first.value;
    if (ready(last)) return finish({ kind: 'matched', obj: last!, waitedMs: Date.now() - started });
    let resourceVersion = last?.metadata?.resourceVersion;
    const watch = new k8s.Watch(this.client.kc);
    return new Promise<WaitOutcome>((resolve) => {
      let settled = false;
      let abort: AbortController | undefined;
      const done = (o: WaitOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        abort?.abort();
        resolve(finish(o));
      };
      const timer = setTimeout(() => done({ kind: 'timeout', ...(last ? { last } : {}), waitedMs: Date.now() - started }), Math.max(0, opts.timeoutMs - (Date.now() - started)));
      const onAbort = (): void => done({ kind: 'timeout', ...(last ? { last } : {}), waitedMs: Date.now() - started });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const open = (): void => {
        if (settled) return;
        this.watchStarts += 1;
        const params: Record<string, string | number | boolean> = { fieldSelector: `metadata.name=${name}`, allowWatchBookmarks: true, timeoutSeconds: Math.max(1, Math.ceil(opts.timeoutMs / 1000)) };
        if (resourceVersion) params.resourceVersion = resourceVersion;
        watch
          .watch(
            path,
            params,
            (phase, obj: Obj) => {
              if (obj?.metadata?.resourceVersion) resourceVersion = obj.metadata.resourceVersion;
              if (phase === 'BOOKMARK') return;
              last = phase === 'DELETED' ? undefined : obj;
              if (ready(last)) done(last ? { kind: 'matched', obj: last, waitedMs: Date.now() - started } : { kind: 'matched', obj: { metadata: { name } }, waitedMs: Date.now() - started });
            },
            (err: unknown) => {
              if (settled) return;
              const code = (err as { statusCode?: number; code?: number } | null)?.statusCode ?? (err as { code?: number } | null)?.code;
              if (code === 401 || code === 403) {
                done({ kind: 'failed', error: { category: code === 401 ? 'unauthenticated' : 'forbidden', code, message: `watch of ${path} refused with HTTP ${code}` }, waitedMs: Date.now() - started });
                return;
              }
              if (code === 410) resourceVersion = undefined;
              // The server closed the stream (its timeout or a 410): re-open once a second at most.
              setTimeout(open, err ? 1000 : 0);
            },
          )
          .then((ac) => {
            abort = ac;
            if (settled) ac.abort();
          })
          .catch(() => setTimeout(open, 1000));
      };
      open();
    });
  }

  private async optional(p: Promise<Result<unknown>>): Promise<Result<Obj | undefined>> {
    const r = await p;
    if (r.kind === 'ok') return { kind: 'ok', value: toPlain(r.value) };
    if (r.kind === 'failed' && r.error.category === 'not-found' && r.error.missing !== 'api') return { kind: 'ok', value: undefined };
    return r;
  }

  private async items(p: Promise<Result<unknown>>): Promise<Result<Obj[]>> {
    const r = await p;
    if (r.kind !== 'ok') return r;
    const items = (r.value as { items?: unknown[] }).items ?? [];
    return { kind: 'ok', value: items.map((i) => toPlain(i)) };
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
