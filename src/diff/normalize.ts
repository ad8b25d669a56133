/**
 * Normalization of one object before comparison: what the API server or a controller writes, and what a default
 * fills in, must not show as a change.
 *
 * Steps, in order: drop `status`; drop server-owned metadata ({@link SERVER_OWNED_METADATA}, server-written
 * annotations and labels); drop controller-owned fields ({@link CONTROLLER_OWNED}, `agents.x-k8s.io/` labels and
 * annotations); drop the Argo CD hook finalizer ({@link ARGOCD_HOOK_FINALIZER}) and what Kubernetes writes on a Job
 * ({@link JOB_CONTROLLER_LABELS}, the generated selector, Job defaults: {@link JOB_DEFAULTS}); fold a Secret's
 * `stringData` into base64 `data` (what the API server stores); apply defaults from the pinned CRD schema of the object's apiVersion
 * and drop optional objects that hold only defaults ({@link fillSchemaDefaults}, {@link dropDefaultOnly}).
 * Map key order is irrelevant by construction (the structural diff compares keys, renderers sort them); list order
 * is kept.
 */
import { cloneJson, isPlainObject } from '../model/objects.js';
import { SANDBOX_KINDS } from '../model/releases.js';
import type { KubeObject } from '../releases/index.js';
import { dropDefaultOnly, fillSchemaDefaults, type SchemaNode } from './schema-defaults.js';

/** Finds the structural schema of `apiVersion`+`kind` (the version's `openAPIV3Schema`), or undefined for kinds without one. */
export type SchemaLookup = (apiVersion: string, kind: string) => SchemaNode | undefined;

export interface NormalizeOptions {
  /**
   * Schemas for defaulting.
   * @default - none (no defaults applied)
   */
  readonly schemaFor?: SchemaLookup;
  /**
   * Whether someone other than the manifests writes the CRDs' conversion `caBundle`: the agent-sandbox controller
   * (v0.5.x default, `--manage-webhook-certs=true`, `cmd/agent-sandbox-controller/tls.go@v0.5.6`) or a CA injector. When false the `caBundle` is compared like any other field.
   * @default true
   */
  readonly caBundleExternallyManaged?: boolean;
}

/** `metadata` fields the API server writes. */
export const SERVER_OWNED_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
] as const;

/** Annotations written by clients or the server on their own: never part of the desired state. */
const SERVER_ANNOTATIONS = [
  'kubectl.kubernetes.io/last-applied-configuration',
  'deployment.kubernetes.io/revision',
] as const;

/**
 * The finalizer Argo CD puts on every hook object until the hook's phase is recorded (argoproj/gitops-engine#646, commit
 * 65db274, and #770): live state, never declared.
 */
export const ARGOCD_HOOK_FINALIZER = 'argocd.argoproj.io/hook-finalizer';

/**
 * Labels the API server writes on a Job's pod template, and on the Job itself when it declares no labels, for its
 * generated selector (`pkg/registry/batch/job/strategy.go@v1.31.0` generateSelector; the Job's labels copied from its
 * template in `pkg/apis/batch/v1/defaults.go@v1.31.0`); the unprefixed pair is kept beside the `batch.kubernetes.io/`
 * one for older clients.
 */
export const JOB_CONTROLLER_LABELS = [
  'controller-uid',
  'batch.kubernetes.io/controller-uid',
  'job-name',
  'batch.kubernetes.io/job-name',
] as const;

/**
 * `spec` fields of a batch/v1 Job the API server defaults (`pkg/apis/batch/v1/defaults.go@v1.31.0`), with the default:
 * dropped on both sides when they hold it. `podReplacementPolicy` defaults to `Failed` instead when a
 * `podFailurePolicy` is set.
 */
export const JOB_DEFAULTS: Readonly<Record<string, unknown>> = {
  completions: 1,
  parallelism: 1,
  backoffLimit: 6,
  completionMode: 'NonIndexed',
  suspend: false,
  manualSelector: false,
  podReplacementPolicy: 'TerminatingOrFailed',
};

/** A field that a controller writes on an object we declare; `path` is a list of keys from the object root. */
export interface ControllerOwnedField {
  readonly kind: string;
  readonly path: readonly string[];
  /** Upstream source (path@tag) that says who writes it. */
  readonly source: string;
  /** Only when the caBundle is externally managed. */
  readonly caBundle?: true;
  /** Only when the value is an empty object (the controller writes `{}`; a declared value is compared). */
  readonly whenEmpty?: true;
}

/** Fields controllers own on objects AgentPlane declares (besides `CONTROLLER_KEY_PREFIX` labels and annotations). */
export const CONTROLLER_OWNED: readonly ControllerOwnedField[] = [
  {
    kind: 'CustomResourceDefinition',
    path: ['spec', 'conversion', 'webhook', 'clientConfig', 'caBundle'],
    source: 'cmd/agent-sandbox-controller/tls.go@v0.5.6',
    caBundle: true,
  },
  // Seen in the contract fixtures of v0.4.6 and v0.5.6: managedFields name agent-sandbox-controller as its manager.
  {
    kind: 'SandboxClaim',
    path: ['spec', 'additionalPodMetadata'],
    source: 'extensions/controllers/sandboxclaim_controller.go@v0.5.6',
    whenEmpty: true,
  },
];

/**
 * Label and annotation keys under `agents.x-k8s.io/` on the four Agent Sandbox kinds are written by the controller
 * (template ref hash, pod name, claim bookkeeping such as `claim-first-ready-at`,
 * `api/v1beta1/sandbox_types.go@v0.5.6`, `extensions/controllers/sandboxclaim_controller.go@v0.5.6`); users may not set
 * that domain on claims.
 */
export const CONTROLLER_KEY_PREFIX = 'agents.x-k8s.io/';
const AGENT_SANDBOX_KINDS: ReadonlySet<string> = new Set(SANDBOX_KINDS);

function deletePath(root: Record<string, unknown>, path: readonly string[], whenEmpty = false): void {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (!isPlainObject(node)) return;
    node = node[key];
  }
  const last = path[path.length - 1]!;
  if (!isPlainObject(node)) return;
  const value = node[last];
  if (whenEmpty && !(isPlainObject(value) && Object.keys(value).length === 0)) return;
  delete node[last];
}

/** A copy of a label or annotation map without the keys `drop` rejects; undefined when nothing is left (a non-map is returned as is). */
function keptKeys(map: unknown, drop: (key: string, value: unknown) => boolean): unknown {
  if (!isPlainObject(map)) return map;
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const key in map) {
    if (drop(key, map[key])) continue;
    out[key] = cloneJson(map[key]);
    kept++;
  }
  return kept === 0 ? undefined : out;
}

/** The metadata without what the server and controllers write (copied key by key, never deleting, so the copy stays a fast object). */
function normalizedMetadata(meta: Record<string, unknown>, kind: string): Record<string, unknown> {
  const controllerKeys = AGENT_SANDBOX_KINDS.has(kind);
  const out: Record<string, unknown> = {};
  for (const key in meta) {
    if ((SERVER_OWNED_METADATA as readonly string[]).includes(key)) continue;
    let value: unknown;
    if (key === 'labels') {
      value = keptKeys(
        meta.labels,
        (k, v) =>
          (controllerKeys && k.startsWith(CONTROLLER_KEY_PREFIX)) ||
          (kind === 'Namespace' && k === 'kubernetes.io/metadata.name' && v === meta.name),
      );
    } else if (key === 'annotations') {
      value = keptKeys(
        meta.annotations,
        (k) =>
          (controllerKeys && k.startsWith(CONTROLLER_KEY_PREFIX)) ||
          (SERVER_ANNOTATIONS as readonly string[]).includes(k),
      );
    } else if (key === 'finalizers' && Array.isArray(meta.finalizers)) {
      const kept = meta.finalizers.filter((f) => f !== ARGOCD_HOOK_FINALIZER);
      value = kept.length === 0 ? undefined : kept;
    } else {
      value = cloneJson(meta[key]);
    }
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Returns the normalized copy of `obj` (the input is not modified).
 * @param obj any Kubernetes object as parsed from YAML or read from the API (a JSON value: no class instances).
 */
export function normalizeObject(obj: KubeObject, opts: NormalizeOptions = {}): KubeObject {
  const out: Record<string, unknown> = {};
  for (const key in obj) {
    if (key === 'status') continue;
    out[key] =
      key === 'metadata' && isPlainObject(obj.metadata)
        ? normalizedMetadata(obj.metadata, obj.kind)
        : cloneJson(obj[key]);
  }
  const normalized = out as KubeObject;
  const caBundleExternal = opts.caBundleExternallyManaged ?? true;
  for (const owned of CONTROLLER_OWNED) {
    if (owned.kind !== normalized.kind || (owned.caBundle && !caBundleExternal)) continue;
    deletePath(out, owned.path, owned.whenEmpty === true);
  }
  if (normalized.kind === 'Secret' && normalized.apiVersion === 'v1') foldStringData(normalized);
  if (normalized.kind === 'Job' && normalized.apiVersion === 'batch/v1') dropJobControllerFields(out);
  const schema = opts.schemaFor?.(normalized.apiVersion, normalized.kind);
  if (schema === undefined) return normalized;
  return dropDefaultOnly(fillSchemaDefaults(normalized, schema), schema) as KubeObject;
}

/** The API server stores `stringData` base64-encoded under `data` (stringData wins on conflicts). */
function foldStringData(secret: KubeObject): void {
  const stringData = secret.stringData;
  if (!isPlainObject(stringData)) return;
  const data: Record<string, unknown> = isPlainObject(secret.data) ? { ...secret.data } : {};
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  secret.data = data;
  delete secret.stringData;
}

/** Without the labels in `drop`; the map removed when nothing is left. */
function dropLabels(meta: unknown, drop: readonly string[]): void {
  if (!isPlainObject(meta) || !isPlainObject(meta.labels)) return;
  const kept = keptKeys(meta.labels, (k) => drop.includes(k));
  if (kept === undefined) delete meta.labels;
  else meta.labels = kept;
}

/**
 * Removes, in place, what the API server writes on a Job: {@link JOB_CONTROLLER_LABELS} on the Job and its template,
 * the generated `spec.selector` (unless `manualSelector: true` declares it) and the {@link JOB_DEFAULTS} values.
 */
function dropJobControllerFields(job: Record<string, unknown>): void {
  dropLabels(job.metadata, JOB_CONTROLLER_LABELS);
  const spec = job.spec;
  if (!isPlainObject(spec)) return;
  if (isPlainObject(spec.template)) dropLabels(spec.template.metadata, JOB_CONTROLLER_LABELS);
  if (spec.manualSelector !== true) delete spec.selector;
  const defaults = {
    ...JOB_DEFAULTS,
    ...(spec.podFailurePolicy !== undefined ? { podReplacementPolicy: 'Failed' } : {}),
  };
  for (const [field, value] of Object.entries(defaults)) if (spec[field] === value) delete spec[field];
}
