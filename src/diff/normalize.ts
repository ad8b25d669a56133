/**
 * Normalization of one object before comparison: what the API server or a controller writes, and what a default
 * fills in, must not show as a change.
 *
 * Steps, in order: drop `status`; drop server-owned metadata ({@link SERVER_OWNED_METADATA}, server-written
 * annotations and labels); drop controller-owned fields ({@link CONTROLLER_OWNED}, `agents.x-k8s.io/` labels and
 * annotations); fold a Secret's `stringData` into base64 `data` (what the API server stores); apply defaults from the pinned CRD schema of the object's apiVersion
 * and drop optional objects that hold only defaults ({@link applySchemaDefaults}, {@link pruneDefaultOnly}).
 * Map key order is irrelevant by construction (the structural diff compares keys, renderers sort them); list order
 * is kept.
 */
import type { KubeObject } from '../releases/index.js';
import { applySchemaDefaults, pruneDefaultOnly, type SchemaNode } from './schema-defaults.js';

/** Finds the structural schema of `apiVersion`+`kind` (the version's `openAPIV3Schema`), or undefined for kinds without one. */
export type SchemaLookup = (apiVersion: string, kind: string) => SchemaNode | undefined;

export interface NormalizeOptions {
  /** Schemas for defaulting. Default: none (no defaults applied). */
  readonly schemaFor?: SchemaLookup;
  /**
   * Whether someone other than the manifests writes the CRDs' conversion `caBundle`: the agent-sandbox controller
   * (v0.5.x default, `--manage-webhook-certs=true`, `cmd/agent-sandbox-controller/tls.go@v0.5.6`) or a CA injector.
   * Default true. When false the `caBundle` is compared like any other field.
   */
  readonly caBundleExternallyManaged?: boolean;
}

/** `metadata` fields the API server writes. */
export const SERVER_OWNED_METADATA = [
  'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink',
] as const;

/** Annotations written by clients or the server on their own: never part of the desired state. */
const SERVER_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration', 'deployment.kubernetes.io/revision'] as const;

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

/** Fields controllers own on objects AgentPlane declares (besides {@link CONTROLLER_KEY_PREFIX} labels and annotations). */
export const CONTROLLER_OWNED: readonly ControllerOwnedField[] = [
  { kind: 'CustomResourceDefinition', path: ['spec', 'conversion', 'webhook', 'clientConfig', 'caBundle'], source: 'cmd/agent-sandbox-controller/tls.go@v0.5.6', caBundle: true },
  // Seen in the contract fixtures of v0.4.6 and v0.5.6: managedFields name agent-sandbox-controller as its manager.
  { kind: 'SandboxClaim', path: ['spec', 'additionalPodMetadata'], source: 'extensions/controllers/sandboxclaim_controller.go@v0.5.6', whenEmpty: true },
];

/**
 * Label and annotation keys under `agents.x-k8s.io/` on the four Agent Sandbox kinds are written by the controller
 * (template ref hash, pod name, claim bookkeeping such as `claim-first-ready-at`, FACTS.md §1.9,
 * `extensions/controllers/sandboxclaim_controller.go@v0.5.6`); users may not set that domain on claims.
 */
export const CONTROLLER_KEY_PREFIX = 'agents.x-k8s.io/';
const AGENT_SANDBOX_KINDS = new Set(['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

function dropEmptyMap(meta: Record<string, unknown>, key: string): void {
  const v = meta[key];
  if (isPlainObject(v) && Object.keys(v).length === 0) delete meta[key];
}

/**
 * Returns the normalized copy of `obj` (the input is not modified).
 * @param obj any Kubernetes object as parsed from YAML or read from the API.
 */
export function normalizeObject(obj: KubeObject, opts: NormalizeOptions = {}): KubeObject {
  const out = structuredClone(obj) as KubeObject;
  delete out.status;
  const meta = isPlainObject(out.metadata) ? out.metadata : undefined;
  if (meta !== undefined) {
    for (const field of SERVER_OWNED_METADATA) delete meta[field];
    const annotations = meta.annotations;
    if (isPlainObject(annotations)) for (const a of SERVER_ANNOTATIONS) delete annotations[a];
    const labels = meta.labels;
    if (out.kind === 'Namespace' && isPlainObject(labels) && labels['kubernetes.io/metadata.name'] === meta.name) delete labels['kubernetes.io/metadata.name'];
    if (AGENT_SANDBOX_KINDS.has(out.kind)) {
      for (const map of [labels, annotations]) {
        if (isPlainObject(map)) for (const k of Object.keys(map)) if (k.startsWith(CONTROLLER_KEY_PREFIX)) delete map[k];
      }
    }
  }
  const caBundleExternal = opts.caBundleExternallyManaged ?? true;
  for (const owned of CONTROLLER_OWNED) {
    if (owned.kind !== out.kind || (owned.caBundle && !caBundleExternal)) continue;
    deletePath(out, owned.path, owned.whenEmpty === true);
  }
  if (meta !== undefined) {
    dropEmptyMap(meta, 'labels');
    dropEmptyMap(meta, 'annotations');
  }
  if (out.kind === 'Secret' && out.apiVersion === 'v1') foldStringData(out);
  const schema = opts.schemaFor?.(out.apiVersion, out.kind);
  if (schema === undefined) return out;
  return pruneDefaultOnly(applySchemaDefaults(out, schema), schema) as KubeObject;
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
