/**
 * Records the calls of the adapter's {@link Cluster} that failed, for a caller that reports what a reader made of
 * them (the tuple reader turns a failed read into an `unknown` entry): the compatibility worksheet lists the failed
 * reads beside its rows, so an unknown part is never mistaken for an answer.
 */
import type { Cluster } from '../adapter/kubernetes/cluster.js';
import type { AdapterError } from '../adapter/types.js';
import { isPlainObject } from '../model/objects.js';

/** One call the cluster did not answer: the Cluster method with its arguments (e.g. `crd sandboxes.agents.x-k8s.io`) and the classified error. */
export interface FailedRead {
  readonly call: string;
  readonly error: AdapterError;
}

/**
 * `cluster` seen through a proxy that records every call answering a `failed` Result in `failed`, kept sorted by call
 * (reads run concurrently, so completion order would change from run to run). Results are passed through unchanged;
 * calls a method makes on its own instance are not recorded twice.
 */
export function recordFailedReads(cluster: Cluster): { readonly cluster: Cluster; readonly failed: FailedRead[] } {
  const failed: FailedRead[] = [];
  const proxy = new Proxy(cluster, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]): unknown => {
        const out: unknown = value.apply(target, args);
        if (!(out instanceof Promise)) return out;
        return out.then((r: unknown) => {
          if (isPlainObject(r) && r['kind'] === 'failed' && r['error'] !== undefined) {
            failed.push({
              call: [prop, ...args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))].join(' '),
              error: r['error'] as AdapterError,
            });
            failed.sort((a, b) => (a.call < b.call ? -1 : a.call > b.call ? 1 : 0));
          }
          return r;
        });
      };
    },
  });
  return { cluster: proxy, failed };
}
