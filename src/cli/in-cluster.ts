/**
 * The in-cluster side of `agentplane verify` (the VerifierJob, src/constructs/verifier-job.ts): a kubeconfig from the
 * pod's ServiceAccount token, the descriptor from its mounted ConfigMap(s), and which report ConfigMap to use (the
 * report store itself is the library's, src/verify/report-store.ts).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  DESCRIPTOR_CONFIGMAP,
  DESCRIPTOR_KEY,
  DescriptorPartsError,
  descriptorTextFromConfigMaps,
  EnvironmentDescriptorSchema,
  type EnvironmentDescriptor,
} from '../constructs/descriptor.js';
import { reportConfigMapOfObjects } from '../model/verifier-job.js';
import { EnvironmentDescriptorError, type ConfigMapRef } from '../verify/index.js';
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

/** Who ran a report: the pod (`AGENTPLANE_RUN`, the Job's pod name), else the host. */
export function runName(): string {
  return process.env.AGENTPLANE_RUN ?? os.hostname();
}
