/**
 * The in-cluster side of `agentplane verify` (the VerifierJob, src/constructs/verifier-job.ts): a kubeconfig from the
 * pod's ServiceAccount token, the descriptor from its mounted ConfigMap(s), and the report ConfigMap it writes and
 * `verify --from-cluster` reads.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from '../adapter/kubernetes/client.js';
import type { AdapterError } from '../adapter/types.js';
import { metaOf } from '../adapter/kubernetes/views.js';
import {
  DESCRIPTOR_CONFIGMAP,
  DESCRIPTOR_KEY,
  DescriptorPartsError,
  descriptorTextFromConfigMaps,
  EnvironmentDescriptorSchema,
  type EnvironmentDescriptor,
} from '../constructs/descriptor.js';
import { REPORT_KEY, reportConfigMapOfObjects } from '../model/verifier-job.js';
import { EnvironmentDescriptorError, type VerifyReport, VerifyReportSchema } from '../verify/index.js';
import { AgentPlaneError, type ExitCategory } from '../model/errors.js';
import { UsageError } from './errors.js';

/** Where a pod's ServiceAccount credentials are mounted; `AGENTPLANE_SERVICEACCOUNT_DIR` overrides it (tests run the entry point as a process). */
export function serviceAccountDir(): string {
  return process.env.AGENTPLANE_SERVICEACCOUNT_DIR ?? '/var/run/secrets/kubernetes.io/serviceaccount';
}

/**
 * Writes a kubeconfig (mode 0600, in a fresh temp directory) for the API server at `KUBERNETES_SERVICE_HOST:PORT`
 * with the ServiceAccount token and CA from `dir`; returns its path and a clean-up.
 * @throws UsageError when this is not a pod (no service address or no token).
 */
export function inClusterKubeconfig(dir = serviceAccountDir()): { file: string; remove: () => void } {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT ?? '443';
  const tokenFile = path.join(dir, 'token');
  if (!host || !existsSync(tokenFile)) {
    throw new UsageError(
      `--in-cluster needs KUBERNETES_SERVICE_HOST and a ServiceAccount token at ${tokenFile}`,
      'run it in a pod with automountServiceAccountToken (the VerifierJob sets it), or use --kubeconfig',
    );
  }
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const ca = path.join(dir, 'ca.crt');
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'in-cluster',
    clusters: [{ name: 'in-cluster', cluster: { server, ...(existsSync(ca) ? { 'certificate-authority': ca } : {}) } }],
    users: [{ name: 'service-account', user: { token: readFileSync(tokenFile, 'utf8').trim() } }],
    contexts: [{ name: 'in-cluster', context: { cluster: 'in-cluster', user: 'service-account' } }],
  };
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'agentplane-'));
  const file = path.join(tmp, 'kubeconfig');
  writeFileSync(file, JSON.stringify(kc), { mode: 0o600 });
  return { file, remove: () => rmSync(tmp, { recursive: true, force: true }) };
}

/**
 * The descriptor from a directory holding the descriptor ConfigMap's keys as files (a ConfigMap volume), whole or in
 * parts (`parts/<ConfigMap name>` holding each part, as the VerifierJob mounts them).
 * @throws EnvironmentDescriptorError when it is missing, cannot be put together, or is not a valid descriptor.
 */
export function readDescriptorDir(dir: string): EnvironmentDescriptor {
  if (!existsSync(dir))
    throw new EnvironmentDescriptorError(
      `no descriptor directory ${dir}`,
      'mount the descriptor ConfigMap there (the VerifierJob does)',
      { problem: 'missing', file: dir },
    );
  const data: Record<string, string> = {};
  for (const f of readdirSync(dir))
    if (!f.startsWith('..') && f !== 'parts' && f.startsWith(DESCRIPTOR_KEY))
      data[f] = readFileSync(path.join(dir, f), 'utf8');
  const partFile = (name: string): string => path.join(dir, 'parts', name);
  let text: string;
  try {
    text = descriptorTextFromConfigMaps({ name: DESCRIPTOR_CONFIGMAP, data }, DESCRIPTOR_KEY, (name) =>
      existsSync(partFile(name)) ? { 'environment.json.part': readFileSync(partFile(name), 'utf8') } : undefined,
    );
  } catch (err) {
    if (err instanceof DescriptorPartsError)
      throw new EnvironmentDescriptorError(`${dir}: ${err.message}`, err.hint, {
        problem: 'parts',
        file: dir,
        cause: err,
      });
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new EnvironmentDescriptorError(
      `${dir}: the descriptor is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
      're-apply the synthesized environment',
      { problem: 'not-json', file: dir },
    );
  }
  const parsed = EnvironmentDescriptorSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new EnvironmentDescriptorError(
      `${dir} is not a valid environment descriptor: ${issues}`,
      're-synthesize with this AgentPlane version',
      {
        problem: 'schema',
        file: dir,
        fields: parsed.error.issues.slice(0, 5).map((i) => i.path.map(String).join('.') || '(root)'),
      },
    );
  }
  return parsed.data;
}

/** A ConfigMap named `<namespace>/<name>`. */
export interface ConfigMapRef {
  readonly namespace: string;
  readonly name: string;
}

/** `--report-configmap <namespace>/<name>`. */
export function configMapRef(value: string): ConfigMapRef {
  const [namespace, name, extra] = value.split('/');
  const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  if (!namespace || !name || extra !== undefined || !label.test(namespace) || !label.test(name)) {
    throw new UsageError(
      `"${value}" is not <namespace>/<name> of a ConfigMap`,
      'pass e.g. --report-configmap agent-sandboxes/agentplane-verify-report',
    );
  }
  return { namespace, name };
}

/**
 * The report ConfigMap the VerifierJob of a synthesized environment (`dir`, as `synth --out` writes it) writes: its
 * `--report-configmap` argument; undefined when the directory holds no VerifierJob.
 */
export function reportRefOfEnvironment(dir: string): ConfigMapRef | undefined {
  if (!dir || !existsSync(dir)) return undefined;
  const objects = readdirSync(dir)
    .filter((x) => x.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseAllDocuments(readFileSync(path.join(dir, f), 'utf8')).map((d) => d.toJS() as unknown));
  const ref = reportConfigMapOfObjects(objects);
  return ref === undefined ? undefined : configMapRef(ref);
}

/** Who ran a report: the pod (`AGENTPLANE_RUN`, the Job's pod name) and Job, else the host. */
export function runName(): string {
  return process.env.AGENTPLANE_RUN ?? os.hostname();
}

/** The ConfigMap the Job writes: the report under {@link REPORT_KEY}, and the run, release, time and outcome as annotations for `kubectl get`. */
export function reportConfigMap(
  ref: ConfigMapRef,
  report: VerifyReport,
  run: string,
  exitCode: number,
): k8s.V1ConfigMap {
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
        'agentplane.dev/run': run,
        ...(process.env.AGENTPLANE_JOB ? { 'agentplane.dev/job': process.env.AGENTPLANE_JOB } : {}),
        'agentplane.dev/release': report.environment.release,
        'agentplane.dev/started-at': report.startedAt,
        'agentplane.dev/exit-code': String(exitCode),
      },
    },
    data: { [REPORT_KEY]: JSON.stringify(report, null, 2) + '\n' },
  };
}

/** Creates or replaces the report ConfigMap. Returns an error message, or undefined when written. */
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
 * `verify --from-cluster` could not use the stored report: the ConfigMap could not be read (`category`: the adapter's,
 * e.g. `not-found`, `forbidden`), or holds no report (`invalid`).
 */
export class StoredReportError extends AgentPlaneError {
  readonly reason = 'StoredReportUnusable';
  readonly exitCategory: ExitCategory;
  readonly hint: string;
  /** The report ConfigMap, `<namespace>/<name>`. */
  readonly configMap: string;
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

/** What `--from-cluster` read: the report and the run annotations. */
export interface StoredReport {
  readonly report: VerifyReport;
  readonly run?: string;
  readonly exitCode?: number;
}

/** Reads the report ConfigMap. Returns the report, or an error (category + message) when it cannot be read. */
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
