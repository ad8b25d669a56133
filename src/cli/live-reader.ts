/**
 * The cluster side of `agentplane diff --live`: a {@link LiveReader} on the adapter's KubeClient. Its own module so
 * that `diff` without `--live` never loads client-node (about half a second of start-up).
 */
import { KubeClient, type KubeConnectOptions } from '../adapter/kubernetes/client.js';
import { KubeObjects } from '../adapter/kubernetes/objects.js';
import type { LiveReader } from '../diff/index.js';
import type { KubeObject } from '../releases/index.js';

/** A cluster error for an object, without its content; a Secret's server message is left out too (it may echo values). */
export class LiveReadError extends Error {
  readonly code = 'live-read';
  readonly hint: string;
  constructor(what: string, obj: KubeObject, error: { category: string; message: string; code?: number; hint?: string }) {
    const id = `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${String(obj.metadata?.name)}`;
    super(`${what} ${id}: ${obj.kind === 'Secret' ? `${error.category}${error.code ? ` (HTTP ${error.code})` : ''}` : error.message}`);
    this.name = 'LiveReadError';
    this.hint = error.hint ?? 'check the object can be applied with kubectl apply --server-side --dry-run=server';
  }
}

/**
 * The cluster implementation of {@link LiveReader}: GET + server-side apply with dryRun=All (field manager `agentplane`),
 * through the adapter's shape-preserving {@link KubeObjects} (client-node's typed bodies drop CRD `default`/`enum` keys).
 * @throws KubeconfigError (from KubeClient.connect) when the kubeconfig or context cannot be used.
 */
export function kubeLiveReader(opts: KubeConnectOptions): LiveReader {
  const client = KubeClient.connect(opts);
  const objects = new KubeObjects(client);
  return {
    label: `live (context ${client.context})`,
    async get(obj) {
      const ns = obj.metadata?.namespace;
      const r = await objects.get({ apiVersion: obj.apiVersion, kind: obj.kind, name: String(obj.metadata?.name), ...(ns ? { namespace: ns } : {}) });
      if (r.kind === 'ok') return r.value;
      if (r.kind === 'failed' && r.error.category === 'not-found' && r.error.missing !== 'api') return undefined;
      throw new LiveReadError('cannot read', obj, r.kind === 'failed' ? r.error : { category: r.kind, message: r.reason });
    },
    async dryRunApply(obj) {
      const r = await objects.apply(obj, { dryRun: true, fieldManager: 'agentplane' });
      if (r.kind === 'ok') return r.value;
      throw new LiveReadError('server-side dry run of', obj, r.kind === 'failed' ? r.error : { category: r.kind, message: r.reason });
    },
  };
}
