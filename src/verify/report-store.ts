/**
 * The report store: the ConfigMap an in-cluster run of the verifier (the VerifierJob, src/constructs/verifier-job.ts)
 * writes its report to, and that `verify --from-cluster` or any other reader reads back. The report is under
 * `REPORT_KEY`; the run, release, time and exit code are annotations, so `kubectl get` shows them.
 */
import * as k8s from '@kubernetes/client-node';
import type { KubeClient } from '../adapter/kubernetes/client.js';
import { metaOf } from '../adapter/kubernetes/views.js';
import type { AdapterError } from '../adapter/types.js';
import { AgentPlaneError, type ExitCategory } from '../model/errors.js';
import { REPORT_KEY } from '../model/verifier-job.js';
import { type VerifyReport, VerifyReportSchema } from './report.js';

/** A ConfigMap named `<namespace>/<name>`. */
export interface ConfigMapRef {
  readonly namespace: string;
  readonly name: string;
}

/** Who ran a stored report and how it ended: the annotations of the report ConfigMap. */
export interface ReportRun {
  /** The run's name (the VerifierJob's pod, or the host). */
  readonly run: string;
  /** The exit code of the run. */
  readonly exitCode: number;
  /**
   * The Job the run belongs to.
   * @default no `agentplane.dev/job` annotation
   */
  readonly job?: string;
}

/** The report ConfigMap of a run: the report under `REPORT_KEY`, and the run, release, time and outcome as annotations. */
export function reportConfigMap(ref: ConfigMapRef, report: VerifyReport, run: ReportRun): k8s.V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'agentplane',
        'agentplane.dev/environment': report.environment.name,
        'agentplane.dev/outcome': report.outcome,
      },
      annotations: {
        'agentplane.dev/run': run.run,
        ...(run.job ? { 'agentplane.dev/job': run.job } : {}),
        'agentplane.dev/release': report.environment.release,
        'agentplane.dev/started-at': report.startedAt,
        'agentplane.dev/exit-code': String(run.exitCode),
      },
    },
    data: { [REPORT_KEY]: JSON.stringify(report, null, 2) + '\n' },
  };
}

/** Creates or replaces the report ConfigMap `cm` at `ref`. Returns the classified failure, or undefined when written. */
export async function writeReport(
  client: KubeClient,
  { name, namespace }: ConfigMapRef,
  cm: k8s.V1ConfigMap,
): Promise<AdapterError | undefined> {
  const api = client.api(k8s.CoreV1Api);
  const replaced = await client.call(`update configmaps in ${namespace}`, () =>
    api.replaceNamespacedConfigMap({ name, namespace, body: cm }),
  );
  if (replaced.kind === 'ok') return undefined;
  if (replaced.kind === 'failed' && replaced.error.category === 'not-found') {
    const created = await client.call(`create configmaps in ${namespace}`, () =>
      api.createNamespacedConfigMap({ namespace, body: cm }),
    );
    if (created.kind === 'ok') return undefined;
    return created.kind === 'failed' ? created.error : { category: 'internal', message: created.message };
  }
  return replaced.kind === 'failed' ? replaced.error : { category: 'internal', message: replaced.message };
}

/** The exit category of a failed report read by its adapter category: a missing report is no verification. */
function storedReportCategory(category: string): ExitCategory {
  if (category === 'forbidden' || category === 'unauthenticated' || category === 'invalid') return category;
  if (category === 'not-found') return 'not-verified';
  return 'cluster';
}

/**
 * The stored report could not be used: the ConfigMap could not be read (`category`: the adapter's, e.g. `not-found`,
 * `forbidden`, `unreachable`), or holds no report (`invalid`).
 */
export class StoredReportError extends AgentPlaneError {
  readonly reason = 'StoredReportUnusable';
  readonly exitCategory: ExitCategory;
  readonly hint: string;
  /** The report ConfigMap, `<namespace>/<name>`. */
  readonly configMap: string;
  /** The adapter's category of the failed read, `invalid` for a ConfigMap holding no report, `unknown` when unclassified. */
  readonly category: string;
  constructor(ref: ConfigMapRef, message: string, category: string) {
    super(message);
    this.configMap = `${ref.namespace}/${ref.name}`;
    this.category = category;
    this.exitCategory = storedReportCategory(category);
    this.hint =
      category === 'not-found'
        ? 'no in-cluster run has stored a report there yet (is the VerifierJob deployed?); pass --env DIR (the synthesized environment) or --report-configmap <namespace>/<name> of its VerifierJob'
        : "check --report-configmap and the identity's rights";
  }
}

/** A report read back from the store, with the run annotations. */
export interface StoredReport {
  readonly report: VerifyReport;
  /** The run that wrote it, when annotated. */
  readonly run?: string;
  /** The run's exit code, when annotated. */
  readonly exitCode?: number;
}

/**
 * Reads the report ConfigMap at `ref`. Returns the report, or a {@link StoredReportError} (not thrown) when the
 * ConfigMap cannot be read or holds no valid report.
 */
export async function readReport(client: KubeClient, ref: ConfigMapRef): Promise<StoredReport | StoredReportError> {
  const api = client.api(k8s.CoreV1Api);
  const got = await client.call(`get configmaps in ${ref.namespace}`, () =>
    api.readNamespacedConfigMap({ name: ref.name, namespace: ref.namespace }),
  );
  if (got.kind !== 'ok')
    return got.kind === 'failed'
      ? new StoredReportError(ref, got.error.message, got.error.category)
      : new StoredReportError(ref, got.message, 'unknown');
  const text = got.value.data?.[REPORT_KEY];
  if (text === undefined)
    return new StoredReportError(ref, `ConfigMap ${ref.namespace}/${ref.name} has no ${REPORT_KEY}`, 'invalid');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return new StoredReportError(ref, `ConfigMap ${ref.namespace}/${ref.name} ${REPORT_KEY} is not JSON`, 'invalid');
  }
  const parsed = VerifyReportSchema.safeParse(raw);
  if (!parsed.success)
    return new StoredReportError(
      ref,
      `ConfigMap ${ref.namespace}/${ref.name} ${REPORT_KEY} is not a ${String(VerifyReportSchema.shape.schema.value)} report`,
      'invalid',
    );
  const a = metaOf(got.value).annotations;
  const code = a['agentplane.dev/exit-code'];
  return {
    report: parsed.data as VerifyReport,
    ...(a['agentplane.dev/run'] ? { run: a['agentplane.dev/run'] } : {}),
    ...(code !== undefined && /^\d+$/.test(code) ? { exitCode: Number(code) } : {}),
  };
}
