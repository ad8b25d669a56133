/**
 * The cluster side of `agentplane diff --live`: a {@link LiveReader} on the adapter's KubeClient. Its own module so
 * that `diff` without `--live` never loads client-node (about half a second of start-up). A refusal about one object
 * is a {@link LiveObjectError} (that object is left out and named); anything else stops the diff.
 */
import { KubeClient, type KubeConnectOptions } from '../adapter/kubernetes/client.js';
import { KubeObjects, refOf } from '../adapter/kubernetes/objects.js';
import { LiveObjectError, type LiveReader } from '../diff/index.js';
import type { KubeObject } from '../releases/index.js';
import { AgentPlaneError, exitCategoryOfFailure, type ExitCategory } from '../model/errors.js';

interface CallError {
  category: string;
  message: string;
  code?: number;
  hint?: string;
  missing?: 'api' | 'object';
}

/** `<what> <Kind> <ns>/<name>: <cause>`, without the object's content; a Secret's server message is left out too (it may echo values). */
function describe(what: string, obj: KubeObject, error: CallError): string {
  const ref = refOf(obj);
  const id = `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
  return `${what} ${id}: ${obj.kind === 'Secret' ? `${error.category}${error.code ? ` (HTTP ${error.code})` : ''}` : error.message}`;
}

const DRY_RUN_HINT = 'check the object can be applied with kubectl apply --server-side --dry-run=server';

/** A cluster error that stops the comparison (unreachable, credentials refused, ...). */
export class LiveReadError extends AgentPlaneError {
  readonly reason = 'LiveReadFailed';
  readonly exitCategory: ExitCategory;
  readonly hint: string;
  readonly category: string;
  constructor(what: string, obj: KubeObject, error: CallError) {
    super(describe(what, obj, error));
    this.hint = error.hint ?? DRY_RUN_HINT;
    this.category = error.category;
    this.exitCategory = exitCategoryOfFailure(error.category, 'cluster');
  }
}

/** Refusals about one object (validation/admission 422, 403 on it, its kind not served yet): that object is left out, the rest compared. */
const PER_OBJECT = new Set(['invalid', 'forbidden', 'conflict', 'too-large', 'not-found']);

function callError(what: string, obj: KubeObject, error: CallError): Error {
  return PER_OBJECT.has(error.category)
    ? new LiveObjectError(describe(what, obj, error), error.hint ?? DRY_RUN_HINT, error.category)
    : new LiveReadError(what, obj, error);
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
      const r = await objects.get(refOf(obj));
      if (r.kind === 'ok') return r.value;
      if (r.kind === 'failed' && r.error.category === 'not-found' && r.error.missing !== 'api') return undefined;
      throw callError('cannot read', obj, r.kind === 'failed' ? r.error : { category: r.kind, message: r.message });
    },
    async dryRunApply(obj) {
      const r = await objects.apply(obj, { dryRun: true, fieldManager: 'agentplane' });
      if (r.kind === 'ok') return r.value;
      throw callError(
        'server-side dry run of',
        obj,
        r.kind === 'failed' ? r.error : { category: r.kind, message: r.message },
      );
    },
  };
}
