/**
 * Synthesis of one AgentEnvironment into the files of `dist/<environment>/`: `NN-<phase>.yaml` per non-empty apply
 * phase (NN = phase number = Argo CD sync wave) and `environment.json`. The objects are the environment's own
 * rendering (src/constructs/render.ts: the same objects `app.synth()` writes); this adds only what cdk8s cannot: the
 * checks as typed errors, the phase files, notes for the person applying them, and the strict size check.
 * Output bytes depend only on the constructs (no time, no randomness, sorted keys).
 */
import {
  AgentEnvironment,
  ANNOTATION_LIMIT_BYTES,
  ANNOTATION_SYNC_OPTIONS,
  OBJECT_LIMIT_BYTES,
  childProblems,
  descriptorJson,
  objectIdentity,
  PHASES,
  phaseIndex,
  type EnvironmentDescriptor,
  type Phase,
  type RouterLimitWarning,
} from '../constructs/index.js';
import { releaseCacheRoot, type KubeObject, type LoadedRelease } from '../releases/index.js';
import { describeDnsTargets } from '../constructs/network-policy.js';
import { capacityOf, type RuntimeClassCapacity } from './capacity.js';
import {
  DuplicateObjectError,
  EnvironmentInvalidError,
  ObjectTooLargeError,
  OutputRuleError,
  SchemaViolationError,
} from './errors.js';
import { apiGroup } from './scope.js';
import { yamlStream } from './yaml.js';

export { ANNOTATION_LIMIT_BYTES, OBJECT_LIMIT_BYTES };

/** Options of {@link synthesizeEnvironment}. */
export interface SynthOptions {
  /**
   * Fail (ObjectTooLargeError) instead of warning when an object would exceed the annotation limit under client-side apply.
   * @default false
   */
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
  /** Typed warnings (also in `notes`): e.g. `RouterLimitBelowExecLimit`, a router that cuts runtime commands short. */
  readonly warnings: readonly RouterLimitWarning[];
  /** Images by role, for the lock file. */
  readonly images: Readonly<Record<string, string>>;
  /** What the pools and templates need per RuntimeClass (requests and limits + overhead, × pods; nodes when declared). */
  readonly capacity: readonly RuntimeClassCapacity[];
}

/**
 * Synthesizes one environment (sealing it first).
 * @throws EnvironmentInvalidError (construct validations, render errors), OutputRuleError (a written object breaks a
 *   rule after escape hatches), DuplicateObjectError, SchemaViolationError,
 *   ObjectTooLargeError (an object over {@link OBJECT_LIMIT_BYTES}; with `strict`, also one over the annotation limit).
 */
export function synthesizeEnvironment(env: AgentEnvironment, opts: SynthOptions = {}): EnvironmentSynthesis {
  env.seal();
  const check = env.check();
  const problems = [...childProblems(env), ...check.problems].filter(
    (p, i, all) => all.findIndex((q) => q.message === p.message) === i,
  );
  if (problems.length > 0) throw new EnvironmentInvalidError(env.name, problems);
  if (check.ruleViolations.length > 0) throw new OutputRuleError(env.name, check.ruleViolations);
  const capacity = capacityOf(env);
  const release = env.release;
  if (check.duplicates.length > 0) throw new DuplicateObjectError(env.name, [...check.duplicates]);
  if (check.violations.length > 0) throw new SchemaViolationError(env.name, release.facts.tag, [...check.violations]);
  const descriptor = env.descriptor();
  const rendered: readonly SynthesizedObject[] = check.rendering.objects.map(({ phase, constructPath, object }) => ({
    phase,
    constructPath,
    object,
  }));

  const sizeNotes: string[] = [];
  if (check.tooLarge.length > 0) throw new ObjectTooLargeError(env.name, 'object', OBJECT_LIMIT_BYTES, check.tooLarge);
  for (const item of check.rendering.objects) {
    if (item.oversizeBytes === undefined || item.oversizeBytes > OBJECT_LIMIT_BYTES) continue;
    const text = `${item.object.kind} ${item.object.metadata?.name} is ${item.oversizeBytes} bytes as JSON, over the ${ANNOTATION_LIMIT_BYTES}-byte annotation limit of client-side apply`;
    if (opts.strict === true)
      throw new ObjectTooLargeError(env.name, 'client-side-apply', ANNOTATION_LIMIT_BYTES, [
        { path: item.constructPath, object: objectIdentity(item), bytes: item.oversizeBytes },
      ]);
    sizeNotes.push(`${text}: marked ServerSideApply=true; apply with kubectl apply --server-side`);
  }

  const ssa = rendered.filter(
    (i) =>
      i.object.kind === 'CustomResourceDefinition' &&
      descriptor.install?.serverSideApply.includes(String(i.object.metadata?.name)),
  );
  const ssaNote = (how: string): string[] =>
    ssa.length === 0
      ? []
      : [
          `${ssa.map((i) => i.object.metadata?.name).join(', ')}: pinned manifests larger than 256 KiB, annotated ${ANNOTATION_SYNC_OPTIONS}: ServerSideApply=true; ` +
            `${how} (client-side apply keeps a copy of each object in an annotation limited to 256 KiB)`,
        ];

  // One stream holds CRDs and objects of their kinds: on a fresh cluster those objects are refused (no such kind)
  // until the CRDs are established, so the stream applies in one go only where the CRDs already are.
  const crdGroups = new Set(
    rendered
      .filter((i) => i.object.kind === 'CustomResourceDefinition')
      .map((i) => (i.object.spec as { group?: string } | undefined)?.group),
  );
  const streamOrderNote = rendered.some(
    (i) => i.object.kind !== 'CustomResourceDefinition' && crdGroups.has(apiGroup(i.object.apiVersion)),
  )
    ? [
        'the stream holds CRDs and objects of their kinds: apply it in one go (kubectl apply --server-side -f -) only to a cluster that already has these CRDs established; ' +
          'on a fresh cluster write the phase files instead (agentplane synth without --stdout) and apply them in file order',
      ]
    : [];

  // The DNS targets each NetworkPolicy admits, printed: the defaults guess a cluster DNS topology (case netpol-dns-nodelocal).
  const dnsNotes = descriptor.networkPolicies.map(
    (np) => `NetworkPolicy ${np.namespace}/${np.name} admits DNS to ${describeDnsTargets(np.dns ?? false)}`,
  );

  const objects = rendered;
  const files: SynthesizedFile[] = [];
  const cacheRoot = releaseCacheRoot(release);
  for (const phase of PHASES) {
    const docs = objects.filter((o) => o.phase === phase).map((o) => o.object);
    if (docs.length === 0) continue;
    files.push({
      path: `${env.name}/${String(phaseIndex(phase)).padStart(2, '0')}-${phase}.yaml`,
      content: yamlStream(docs, cacheRoot !== undefined ? { cacheRoot } : {}),
    });
  }
  files.push({ path: `${env.name}/environment.json`, content: descriptorJson(descriptor) }); // same bytes as the ConfigMap's environment.json
  return {
    name: env.name,
    release,
    descriptor,
    objects,
    files,
    notes: [
      ...ssaNote(`apply the files of ${env.name}/ with kubectl apply --server-side`),
      ...sizeNotes,
      ...dnsNotes,
      ...check.warnings.map((w) => w.message),
    ],
    streamNotes: [
      ...streamOrderNote,
      ...ssaNote('apply them with kubectl apply --server-side'),
      ...sizeNotes,
      ...dnsNotes,
      ...check.warnings.map((w) => w.message),
    ],
    warnings: check.warnings,
    images: descriptor.images,
    capacity,
  };
}
