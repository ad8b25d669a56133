/**
 * Synthesis of one AgentEnvironment into ordered, annotated, validated objects and the files of `dist/<environment>/`:
 * `NN-<phase>.yaml` per non-empty apply phase (NN = phase number = Argo CD sync wave) and `environment.json`.
 *
 * Steps: seal the environment; run every construct's validations; render each ApiObject (errors get its path); drop
 * `metadata.namespace` from cluster-scoped objects; refuse duplicates; validate Agent Sandbox objects against the pinned
 * CRD schema (CustomObjectValidator); annotate sync waves; store a large descriptor ConfigMap in parts; refuse objects over the API server's limit; check client-side-apply size; order by phase, then kind rank,
 * namespace, name. Output bytes depend only on the constructs (no time, no randomness, sorted keys).
 */
import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import {
  AgentEnvironment, ANNOTATION_LAST_APPLIED, descriptorJson, ANNOTATION_SYNC_OPTIONS, ANNOTATION_SYNC_WAVE, PHASES, phaseIndex, phaseOf,
  type EnvironmentDescriptor, type Phase,
} from '../constructs/index.js';
import { CustomObjectValidator, lastAppliedSizeBytes, releaseCacheRoot, type KubeObject, type LoadedRelease } from '../releases/index.js';
import { DuplicateObjectError, EnvironmentInvalidError, ObjectTooLargeError, SchemaViolationError } from './errors.js';
import { descriptorConfigMaps, isDescriptorConfigMap } from './descriptor-parts.js';
import { apiGroup, isClusterScoped } from './scope.js';
import { yamlStream } from './yaml.js';

/** Client-side apply stores the whole object in an annotation; all annotations together may hold at most this many bytes. */
export const ANNOTATION_LIMIT_BYTES = 262144;

/**
 * The API server refuses a ConfigMap or Secret whose data pass 1 MiB, and any object near etcd's 1.5 MiB request
 * limit; synth holds every object to 1 MiB of JSON (the descriptor ConfigMap is stored in parts before that).
 */
export const OBJECT_LIMIT_BYTES = 1048576;

/** Options of {@link synthesizeEnvironment}. */
export interface SynthOptions {
  /** Fail (ObjectTooLargeError) instead of warning when an object would exceed the annotation limit under client-side apply. Default `false`. */
  readonly strict?: boolean;
}

/** One synthesized object with its place in the output. */
export interface SynthesizedObject {
  readonly phase: Phase;
  readonly constructPath: string;
  readonly object: KubeObject;
}

/** One output file, `path` relative to the output directory (`<environment>/<file>`). */
export interface SynthesizedFile {
  readonly path: string;
  readonly content: string;
}

/** The result for one environment. */
export interface EnvironmentSynthesis {
  readonly name: string;
  readonly release: LoadedRelease;
  readonly descriptor: EnvironmentDescriptor;
  /** In apply order. */
  readonly objects: readonly SynthesizedObject[];
  readonly files: readonly SynthesizedFile[];
  /** Things the person applying the files of `<name>/` must know (server-side apply, size warnings). */
  readonly notes: readonly string[];
  /**
   * The notes for output written as one YAML stream (`agentplane synth --stdout`): no `<name>/` files exist there, and
   * a stream holding CRDs and objects of their kinds applies in one go only to a cluster that already has the CRDs,
   * so the first note says so (and to use the phase files on a fresh cluster).
   */
  readonly streamNotes: readonly string[];
  /** Images by role, for the lock file. */
  readonly images: Readonly<Record<string, string>>;
}

const KIND_RANK = [
  'CustomResourceDefinition', 'Namespace', 'ServiceAccount', 'ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding', 'ConfigMap', 'Secret',
  'Service', 'Deployment', 'PodDisruptionBudget', 'RuntimeClass', 'SandboxTemplate', 'SandboxWarmPool', 'NetworkPolicy', 'SandboxClaim', 'Sandbox',
];

function rank(kind: string): number {
  const i = KIND_RANK.indexOf(kind);
  return i < 0 ? KIND_RANK.length : i;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareObjects(a: SynthesizedObject, b: SynthesizedObject): number {
  return (
    phaseIndex(a.phase) - phaseIndex(b.phase) ||
    rank(a.object.kind) - rank(b.object.kind) ||
    cmp(a.object.kind, b.object.kind) ||
    cmp(a.object.metadata?.namespace ?? '', b.object.metadata?.namespace ?? '') ||
    cmp(a.object.metadata?.name ?? '', b.object.metadata?.name ?? '')
  );
}

/** The message without its hint line, and without the wrapper cdk8s puts around errors thrown while rendering an object. */
function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^Failed serializing construct at path '[^']*' with name '[^']*': (\w*Error: )?/, '').split('\n  hint:')[0]!;
}

function identity(obj: KubeObject): string {
  return `${apiGroup(obj.apiVersion)}/${obj.kind}/${obj.metadata?.namespace ?? '(cluster)'}/${obj.metadata?.name ?? '?'}`;
}

/**
 * Synthesizes one environment (sealing it first).
 * @throws EnvironmentInvalidError (construct validations, render errors), DuplicateObjectError, SchemaViolationError,
 *   ObjectTooLargeError (an object over {@link OBJECT_LIMIT_BYTES}; with `strict`, also one over the annotation limit).
 */
export function synthesizeEnvironment(env: AgentEnvironment, opts: SynthOptions = {}): EnvironmentSynthesis {
  const problems: string[] = [];
  try {
    env.seal();
  } catch (err) {
    problems.push(messageOf(err));
  }
  const constructs: IConstruct[] = env.node.findAll();
  for (const c of constructs) for (const e of c.node.validate()) problems.push(`${c.node.path}: ${e}`);
  if (problems.length > 0) throw new EnvironmentInvalidError(env.name, problems);

  const rendered: SynthesizedObject[] = [];
  for (const c of constructs) {
    if (!(c instanceof ApiObject)) continue;
    try {
      const object = c.toJson() as KubeObject;
      if (isDescriptorConfigMap(object)) {
        // Stored in parts when too large for one object (./descriptor-parts.ts); the parts belong to the same construct.
        descriptorConfigMaps(object).forEach((part, i) => rendered.push({ phase: phaseOf(c), constructPath: i === 0 ? c.node.path : `${c.node.path}/part-${i}`, object: part }));
      } else {
        rendered.push({ phase: phaseOf(c), constructPath: c.node.path, object });
      }
    } catch (err) {
      const msg = messageOf(err);
      problems.push(msg.startsWith(env.node.path) ? msg : `${c.node.path}: ${msg}`);
    }
  }
  let descriptor: EnvironmentDescriptor | undefined;
  try {
    descriptor = env.descriptor();
  } catch (err) {
    const msg = messageOf(err);
    if (!problems.includes(msg)) problems.push(msg);
  }
  if (problems.length > 0 || descriptor === undefined) throw new EnvironmentInvalidError(env.name, [...new Set(problems)]);

  const release = env.release;
  const seen = new Map<string, string>();
  const duplicates: string[] = [];
  const validator = CustomObjectValidator.forRelease(release);
  const violations: string[] = [];
  const sizeNotes: string[] = [];
  const tooLarge: string[] = [];
  for (const item of rendered) {
    const obj = item.object;
    const metadata = (obj.metadata ??= {});
    if (isClusterScoped(obj, release)) delete metadata.namespace;
    const id = identity(obj);
    const first = seen.get(id);
    if (first !== undefined) duplicates.push(`${id} at ${first} and ${item.constructPath}`);
    else seen.set(id, item.constructPath);
    const group = apiGroup(obj.apiVersion);
    if (Object.values(release.facts.crds).some((crd) => crd.group === group)) {
      for (const v of validator.validate(obj)) violations.push(`${item.constructPath}: ${obj.kind} ${obj.metadata?.name}: ${v.path}: ${v.message}`);
    }
    const annotations = ((metadata as Record<string, unknown>)['annotations'] ??= {}) as Record<string, string>;
    delete annotations[ANNOTATION_LAST_APPLIED];
    annotations[ANNOTATION_SYNC_WAVE] = String(phaseIndex(item.phase));
    const size = lastAppliedSizeBytes(obj);
    if (size > OBJECT_LIMIT_BYTES) {
      tooLarge.push(`${item.constructPath}: ${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name} is ${size} bytes as JSON`);
    } else if (size > ANNOTATION_LIMIT_BYTES) {
      const text = `${obj.kind} ${obj.metadata?.name} is ${size} bytes as JSON, over the ${ANNOTATION_LIMIT_BYTES}-byte annotation limit of client-side apply`;
      if (opts.strict === true) throw new ObjectTooLargeError(`environment ${env.name}: ${text}`, 'shrink the object, or synthesize without --strict and apply with kubectl apply --server-side');
      annotations[ANNOTATION_SYNC_OPTIONS] = 'ServerSideApply=true';
      sizeNotes.push(`${text}: marked ServerSideApply=true; apply with kubectl apply --server-side`);
    }
  }
  if (duplicates.length > 0) throw new DuplicateObjectError(env.name, duplicates);
  if (tooLarge.length > 0) {
    throw new ObjectTooLargeError(
      `environment ${env.name}: ${tooLarge.length} object(s) over the API server's ${OBJECT_LIMIT_BYTES}-byte object limit, which no apply method lifts:\n${tooLarge.map((t) => `    - ${t}`).join('\n')}`,
      'make the named objects smaller (fewer or shorter entries), or split what they declare across several objects or environments',
    );
  }
  if (violations.length > 0) throw new SchemaViolationError(env.name, release.facts.tag, violations);

  const ssa = rendered.filter((i) => i.object.kind === 'CustomResourceDefinition' && descriptor.install?.serverSideApply.includes(String(i.object.metadata?.name)));
  const ssaNote = (how: string): string[] =>
    ssa.length === 0
      ? []
      : [
          `${ssa.map((i) => i.object.metadata?.name).join(', ')}: pinned manifests larger than 256 KiB, annotated ${ANNOTATION_SYNC_OPTIONS}: ServerSideApply=true; ` +
            `${how} (client-side apply keeps a copy of each object in an annotation limited to 256 KiB)`,
        ];

  // One stream holds CRDs and objects of their kinds: on a fresh cluster those objects are refused (no such kind)
  // until the CRDs are established, so the stream applies in one go only where the CRDs already are.
  const crdGroups = new Set(rendered.filter((i) => i.object.kind === 'CustomResourceDefinition').map((i) => (i.object.spec as { group?: string } | undefined)?.group));
  const streamOrderNote = rendered.some((i) => i.object.kind !== 'CustomResourceDefinition' && crdGroups.has(apiGroup(i.object.apiVersion)))
    ? ['the stream holds CRDs and objects of their kinds: apply it in one go (kubectl apply --server-side -f -) only to a cluster that already has these CRDs established; ' +
        'on a fresh cluster write the phase files instead (agentplane synth without --stdout) and apply them in file order']
    : [];

  const objects = [...rendered].sort(compareObjects);
  const files: SynthesizedFile[] = [];
  const cacheRoot = releaseCacheRoot(release);
  for (const phase of PHASES) {
    const docs = objects.filter((o) => o.phase === phase).map((o) => o.object);
    if (docs.length === 0) continue;
    files.push({ path: `${env.name}/${String(phaseIndex(phase)).padStart(2, '0')}-${phase}.yaml`, content: yamlStream(docs, { cacheRoot }) });
  }
  files.push({ path: `${env.name}/environment.json`, content: descriptorJson(descriptor) }); // same bytes as the ConfigMap's environment.json
  return {
    name: env.name,
    release,
    descriptor,
    objects,
    files,
    notes: [...ssaNote(`apply the files of ${env.name}/ with kubectl apply --server-side`), ...sizeNotes],
    streamNotes: [...streamOrderNote, ...ssaNote('apply them with kubectl apply --server-side'), ...sizeNotes],
    images: descriptor.images,
  };
}
