/**
 * Objects the workload probes create: every one carries the run's labels, is tracked here, and is deleted by
 * {@link Workload.cleanup} on success, failure and interrupt. Cleanup also sweeps by label (catching an object
 * whose create answer was lost) and reports whatever it could not delete or that is still there after the wait. An
 * object whose create was refused is dropped from tracking: it does not exist, so it is never reported as left behind.
 */
import { randomBytes } from 'node:crypto';
import type { Result } from '../adapter/types.js';
import { mapLimit } from '../model/arrays.js';
import type { Cluster, CustomRef } from '../adapter/kubernetes/cluster.js';
import { failure } from '../adapter/kubernetes/cluster.js';
import { ClusterReads } from '../adapter/kubernetes/reads.js';
import { KubeCapabilityAdapter } from '../adapter/adapter.js';

/** Label on everything a verify run creates; value = the run id. */
export const RUN_LABEL = 'agentplane.dev/verify-run';
/** `app.kubernetes.io/managed-by` value of verify-made objects. */
export const MANAGED_BY = 'agentplane-verify';

/**
 * Whether a create call that answered `r` may have made the object: yes for `ok`, and for a failure whose answer was
 * lost or came from a server that may have stored it first (`timeout`, `unreachable`, `internal` 5xx, `runtime`); no for
 * a refusal (403, 401, 404, 409, 422, 413: the API server stores nothing it refuses) or a check that ran before any call
 * (`rejected`, `unsupported`). Pure.
 */
export function createMayHaveSucceeded(r: Result<unknown>): boolean {
  if (r.kind === 'ok') return true;
  if (r.kind !== 'failed') return false;
  return (
    r.error.category === 'timeout' ||
    r.error.category === 'unreachable' ||
    r.error.category === 'internal' ||
    r.error.category === 'runtime'
  );
}

/** Cleanup calls (lists, deletes, waits for disappearance) in flight at once, under the client's shared rate limit. */
const CLEANUP_PARALLELISM = 16;

interface Tracked {
  readonly ref: CustomRef;
  readonly kind: string;
  readonly name: string;
}

export class Workload {
  /** Short random id of this run (6 hex), part of every object name and the {@link RUN_LABEL} value. */
  readonly runId: string;
  private readonly tracked: Tracked[] = [];
  private readonly kinds = new Map<
    string,
    { ref: Omit<CustomRef, 'namespace'>; kind: string; namespaces: Set<string> }
  >();
  private readonly reads: ClusterReads;
  private madeAdapter?: KubeCapabilityAdapter;

  constructor(
    private readonly cluster: Cluster,
    runId?: string,
  ) {
    this.runId = runId ?? randomBytes(3).toString('hex');
    this.reads = new ClusterReads(cluster);
  }

  /**
   * The run's capability adapter (the client path probe claims are made through), labelling what it creates with
   * {@link labels}. One per run, so the live release it detects before a first claim (discovery and two CRD reads) is
   * read once, not once per template.
   */
  adapter(): KubeCapabilityAdapter {
    this.madeAdapter ??= new KubeCapabilityAdapter({ client: this.cluster.client, labels: this.labels() });
    return this.madeAdapter;
  }

  /** Labels every created object must carry. */
  labels(): Record<string, string> {
    return { [RUN_LABEL]: this.runId, 'app.kubernetes.io/managed-by': MANAGED_BY };
  }

  /** A DNS-1123 name for a probe object: `verify-<run>-<suffix>`, at most 63 characters. */
  name(suffix: string): string {
    const clean = suffix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '');
    return `verify-${this.runId}-${clean}`.slice(0, 63).replace(/-+$/, '');
  }

  /** Records an object to delete at cleanup (call before creating it, so an interrupted create is still swept; then pass the create's answer to {@link created}). */
  track(ref: CustomRef, kind: string, name: string): void {
    this.tracked.push({ ref, kind, name });
    const key = `${ref.group}/${ref.version}/${ref.plural}`;
    const entry = this.kinds.get(key) ?? {
      ref: { group: ref.group, version: ref.version, plural: ref.plural },
      kind,
      namespaces: new Set<string>(),
    };
    entry.namespaces.add(ref.namespace);
    this.kinds.set(key, entry);
  }

  /**
   * Settles a {@link track}ed object by the answer to its create: one that cannot exist (see
   * `createMayHaveSucceeded`) is no longer tracked, so cleanup neither deletes it nor reports it as left behind.
   */
  created(ref: CustomRef, name: string, r: Result<unknown>): void {
    if (createMayHaveSucceeded(r)) return;
    const i = this.tracked.findIndex(
      (t) =>
        t.name === name &&
        t.ref.namespace === ref.namespace &&
        t.ref.plural === ref.plural &&
        t.ref.group === ref.group,
    );
    if (i >= 0) this.tracked.splice(i, 1);
  }

  /**
   * Deletes every tracked object and every object carrying this run's label in the namespaces used, then waits
   * (watch, bounded by `waitMs`) for them to disappear. Returns leftovers as `Kind ns/name: why`; empty = clean.
   */
  async cleanup(waitMs = 30_000): Promise<string[]> {
    const targets = new Map<string, Tracked>();
    for (const t of this.tracked) targets.set(`${t.ref.plural}.${t.ref.group}/${t.ref.namespace}/${t.name}`, t);
    const scopes = [...this.kinds.values()].flatMap(({ ref, kind, namespaces }) =>
      [...namespaces].map((namespace) => ({ ref: { ...ref, namespace }, kind })),
    );
    const lists = await mapLimit(scopes, CLEANUP_PARALLELISM, (s) =>
      this.reads.labelled(s.ref, `${RUN_LABEL}=${this.runId}`),
    );
    scopes.forEach(({ ref, kind }, i) => {
      const listed = lists[i]!;
      if (listed.kind !== 'ok') return;
      for (const { name } of listed.value)
        targets.set(`${ref.plural}.${ref.group}/${ref.namespace}/${name}`, { ref, kind, name });
    });
    // Deletes, then the waits for the deleted objects to disappear, run side by side under one deadline.
    const all = [...targets.values()];
    const answers = await mapLimit(all, CLEANUP_PARALLELISM, (t) => this.cluster.deleteCustom(t.ref, t.name));
    const leftovers: string[] = [];
    const deleted: Tracked[] = [];
    all.forEach((t, i) => {
      const r = answers[i]!;
      if (r.kind === 'ok') {
        if (r.value === 'deleted') deleted.push(t);
      } else {
        leftovers.push(`${t.kind} ${t.ref.namespace}/${t.name}: delete failed: ${failure(r)}`);
      }
    });
    const deadline = Date.now() + waitMs;
    const gone = await mapLimit(deleted, CLEANUP_PARALLELISM, (t) =>
      this.reads.waitGone(t.ref, t.name, { timeoutMs: Math.max(1000, deadline - Date.now()) }),
    );
    deleted.forEach((t, i) => {
      const g = gone[i]!;
      if (g.kind === 'timeout')
        leftovers.push(
          `${t.kind} ${t.ref.namespace}/${t.name}: still present ${Math.round(waitMs / 1000)}s after delete (finalizer or controller not running?)`,
        );
      else if (g.kind === 'failed')
        leftovers.push(`${t.kind} ${t.ref.namespace}/${t.name}: could not confirm deletion: ${g.error.message}`);
    });
    this.tracked.length = 0;
    return leftovers;
  }
}
