/**
 * Comparing against a cluster the way `kubectl diff` does: BASE is each desired object as it is live, HEAD is what
 * the API server would store if it were applied (server-side apply with `dryRun=All`), so server defaults, admission
 * mutations and core-type defaults show on both sides and cancel out. Nothing is read from the client-side
 * `last-applied-configuration` annotation (case crd-annotation-too-long). The reader is passed in; the CLI builds it on
 * the adapter's KubeClient.
 */
import type { KubeObject } from '../releases/index.js';
import { AgentPlaneError } from '../model/errors.js';
import type { ManifestSet } from './compare.js';

/**
 * An object the cluster will not read or dry-run apply, while the others can be compared (a 422 from validation or
 * admission, a 403 on that object, a kind whose CRD is not served yet). Readers throw it to have the object left out
 * and reported; any other error stops the comparison (an unreachable cluster, refused credentials).
 */
export class LiveObjectError extends AgentPlaneError {
  readonly reason = 'LiveObjectRefused';
  // Readers throw it to have one object left out; one that escapes the comparison is a bug.
  readonly exitCategory = 'internal';
  constructor(
    message: string,
    readonly hint: string,
    /** The adapter's failure category (`forbidden`, `invalid`, ...), when the reader knows it. */
    readonly category?: string,
  ) {
    super(message);
  }
}

/** An object left out of a live comparison, with why and what to do. */
export interface UnreadableObject {
  readonly object: string;
  readonly message: string;
  readonly hint: string;
  /** The failure category of the refusal (`forbidden`, `invalid`, ...), when known: it decides the exit code. */
  readonly category?: string;
}

/** Reads live state for one object. Implementations throw a typed error when the cluster refuses ({@link LiveObjectError} for one object). */
export interface LiveReader {
  /** A label for reports, e.g. `live (context kind-agents)`. */
  readonly label: string;
  /** The live object, or undefined when it does not exist. */
  get(obj: KubeObject): Promise<KubeObject | undefined>;
  /** The object the API server would store if `obj` were applied server-side (dry run: nothing is changed). */
  dryRunApply(obj: KubeObject): Promise<KubeObject>;
}

/**
 * The live and dry-run sets for the desired objects, read with at most `concurrency` requests in flight (default 4).
 * An object whose read or dry run throws {@link LiveObjectError} is left out of both sides and listed in `unreadable`.
 * @throws whatever else the reader throws (the comparison cannot go on).
 */
export async function readLiveSets(
  desired: ManifestSet,
  reader: LiveReader,
  concurrency = 4,
): Promise<{ base: ManifestSet; head: ManifestSet; unreadable: readonly UnreadableObject[] }> {
  const live: Array<KubeObject | undefined> = new Array(desired.objects.length);
  const applied: Array<KubeObject | undefined> = new Array(desired.objects.length);
  const unreadable: UnreadableObject[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < desired.objects.length; i = next++) {
      const obj = desired.objects[i]!;
      try {
        [live[i], applied[i]] = await Promise.all([reader.get(obj), reader.dryRunApply(obj)]);
      } catch (err) {
        if (!(err instanceof LiveObjectError)) throw err;
        live[i] = undefined;
        applied[i] = undefined;
        unreadable.push({
          object: `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${String(obj.metadata?.name)}`,
          message: err.message,
          hint: err.hint,
          ...(err.category !== undefined ? { category: err.category } : {}),
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, desired.objects.length) }, worker));
  const defined = (o: KubeObject | undefined): o is KubeObject => o !== undefined;
  return {
    base: { label: reader.label, objects: live.filter(defined) },
    head: { label: `${desired.label} (server-side dry run)`, objects: applied.filter(defined) },
    unreadable: unreadable.sort((a, b) => (a.object < b.object ? -1 : 1)),
  };
}
