/**
 * Comparing against a cluster the way `kubectl diff` does: BASE is each desired object as it is live, HEAD is what
 * the API server would store if it were applied (server-side apply with `dryRun=All`), so server defaults, admission
 * mutations and core-type defaults show on both sides and cancel out. Nothing is read from the client-side
 * `last-applied-configuration` annotation (case 28). The reader is passed in; the CLI builds it on the adapter's
 * KubeClient.
 */
import type { KubeObject } from '../releases/index.js';
import type { ManifestSet } from './compare.js';

/** Reads live state for one object. Implementations throw a typed error when the cluster refuses. */
export interface LiveReader {
  /** A label for reports, e.g. `live (context kind-agents)`. */
  readonly label: string;
  /** The live object, or undefined when it does not exist. */
  get(obj: KubeObject): Promise<KubeObject | undefined>;
  /** The object the API server would store if `obj` were applied server-side (dry run: nothing is changed). */
  dryRunApply(obj: KubeObject): Promise<KubeObject>;
}

/** The live and dry-run sets for the desired objects, read with at most `concurrency` requests in flight (default 4). */
export async function readLiveSets(desired: ManifestSet, reader: LiveReader, concurrency = 4): Promise<{ base: ManifestSet; head: ManifestSet }> {
  const live: Array<KubeObject | undefined> = new Array(desired.objects.length);
  const applied: KubeObject[] = new Array(desired.objects.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < desired.objects.length; i = next++) {
      const obj = desired.objects[i]!;
      [live[i], applied[i]] = await Promise.all([reader.get(obj), reader.dryRunApply(obj)]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, desired.objects.length) }, worker));
  return {
    base: { label: reader.label, objects: live.filter((o): o is KubeObject => o !== undefined) },
    head: { label: `${desired.label} (server-side dry run)`, objects: applied },
  };
}
