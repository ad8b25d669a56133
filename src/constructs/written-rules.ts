/**
 * The rules every written object keeps, checked on the rendered objects (JSON patches and other escape hatches
 * applied), so a patch cannot write what the construct props would refuse: every image of every pod pinned, and every
 * sandbox pod (SandboxTemplate, Sandbox) without host namespaces, host paths, privilege or added capabilities, with
 * cpu/memory limits, valid quantities and no known-defective image. A deliberate exception is an {@link Acknowledgement}, recorded in the
 * descriptor and the lock.
 */
import type { IConstruct } from 'constructs';
import type { ApiObject } from './cdk8s.js';
import { takeRenderError } from './lazy.js';
import { isPlainObject } from '../model/objects.js';
import type { OutputRule } from '../model/output-rules.js';
import { knownDefectOf } from '../releases/index.js';
import { podSpecImages, unpinnedReason } from './images.js';
import type { Json } from './kube-object.js';
import { objectIdentity, type ObjectIdentity } from './output-checks.js';
import { securityProblems } from './pod-security.js';
import type { RenderedObject } from './render.js';
import { quantityProblems } from './resources.js';

/** A written object that breaks a rule. */
export interface OutputRuleViolation {
  readonly rule: OutputRule;
  /** Construct path of the ApiObject that writes it (where its JSON patches are). */
  readonly path: string;
  readonly object: ObjectIdentity;
  /** The field, e.g. `spec.podTemplate.spec.containers[main].image`. */
  readonly field: string;
  /** The value written there, when there is one. */
  readonly value?: unknown;
  readonly message: string;
}

/** A deliberate exception to a rule: which rule, at which construct path, and why. */
export interface Acknowledgement {
  readonly rule: OutputRule;
  /** The construct path of the ApiObject (or of a construct above it) whose written object may break the rule. */
  readonly path: string;
  /** Why, for the people who review the descriptor and the lock. */
  readonly reason: string;
}

/** An acknowledgement as given to `AgentEnvironment.acknowledge`: the path may be given as the construct. */
export interface AcknowledgementInput {
  readonly rule: OutputRule;
  readonly path: string | IConstruct;
  readonly reason: string;
}

/** Where the pod spec of a kind is (`spec.template.spec` for workloads), and whether its pods are sandboxes. */
const POD_SPEC_AT: Readonly<Record<string, { readonly at: readonly string[]; readonly sandbox: boolean }>> = {
  Pod: { at: ['spec'], sandbox: false },
  Deployment: { at: ['spec', 'template', 'spec'], sandbox: false },
  StatefulSet: { at: ['spec', 'template', 'spec'], sandbox: false },
  DaemonSet: { at: ['spec', 'template', 'spec'], sandbox: false },
  ReplicaSet: { at: ['spec', 'template', 'spec'], sandbox: false },
  Job: { at: ['spec', 'template', 'spec'], sandbox: false },
  CronJob: { at: ['spec', 'jobTemplate', 'spec', 'template', 'spec'], sandbox: false },
  SandboxTemplate: { at: ['spec', 'podTemplate', 'spec'], sandbox: true },
  Sandbox: { at: ['spec', 'podTemplate', 'spec'], sandbox: true },
};

/** The pod spec a written object carries, with its field path, or `undefined`. */
export function writtenPodSpec(object: Json): { field: string; spec: Json; sandbox: boolean } | undefined {
  const where = POD_SPEC_AT[String(object['kind'])];
  if (where === undefined) return undefined;
  let cur: unknown = object;
  for (const key of where.at) cur = isPlainObject(cur) ? cur[key] : undefined;
  return isPlainObject(cur) ? { field: where.at.join('.'), spec: cur, sandbox: where.sandbox } : undefined;
}

/** The object `o` writes (its JSON patches applied); an error of one of its lazy values is rethrown as thrown. */
export function writtenJson(o: ApiObject): Json {
  try {
    return o.toJson() as Json;
  } catch (err) {
    throw takeRenderError() ?? err;
  }
}

/** `podSpec.containers.main.resources.limits` (a prop path) as a field under `at`. */
function fieldOf(at: string, prop: string): string {
  return `${at}${prop.slice('podSpec'.length)}`;
}

/**
 * The rules the written objects break. `requireDigests` also refuses images without a digest; `acceptedDefects` gives
 * the known-defect ids the construct at a path accepts (a template's `acceptKnownDefects`).
 */
export function outputRuleViolations(
  objects: readonly RenderedObject[],
  requireDigests: boolean,
  acceptedDefects: (path: string) => readonly string[] = () => [],
): OutputRuleViolation[] {
  const out: OutputRuleViolation[] = [];
  for (const item of objects) {
    const pod = writtenPodSpec(item.object as unknown as Json);
    if (pod === undefined) continue;
    const object = objectIdentity(item);
    const where = `${object.kind} ${object.namespace === undefined ? '' : `${object.namespace}/`}${object.name}`;
    for (const img of podSpecImages(pod.spec)) {
      const unpinned = unpinnedReason(img.image, requireDigests);
      if (unpinned !== undefined)
        out.push({
          rule: 'UnpinnedImage',
          path: item.constructPath,
          object,
          field: `${pod.field}.${img.where}.image`,
          value: img.image,
          message: `${where} ${img.where}: image ${JSON.stringify(img.image)} is not pinned: ${unpinned.detail}`,
        });
    }
    if (!pod.sandbox) continue;
    for (const img of podSpecImages(pod.spec)) {
      const defect = knownDefectOf(img.image);
      if (defect !== undefined && !acceptedDefects(item.constructPath).includes(defect.id))
        out.push({
          rule: 'KnownDefectiveImage',
          path: item.constructPath,
          object,
          field: `${pod.field}.${img.where}.image`,
          value: img.image,
          message: `${where} ${img.where}: image ${JSON.stringify(img.image)} is known-defective (${defect.id}): ${defect.defect}`,
        });
    }
    for (const p of [...securityProblems(pod.spec), ...quantityProblems(pod.spec)])
      out.push({
        rule: p.reason as OutputRule,
        path: item.constructPath,
        object,
        field: fieldOf(pod.field, p.prop),
        ...(p.value !== undefined ? { value: p.value } : {}),
        message: `${where}: ${p.message}`,
      });
  }
  return out;
}

/** Whether `ack` covers `v`: the same rule, at the violation's path or a construct above it. */
export function acknowledges(ack: Acknowledgement, v: OutputRuleViolation): boolean {
  return ack.rule === v.rule && (v.path === ack.path || v.path.startsWith(`${ack.path}/`));
}

/** `<path>: <what> (<rule>)`. */
export function describeOutputRuleViolation(v: OutputRuleViolation): string {
  return `${v.path}: ${v.message} (${v.rule}; written after escape hatches such as addJsonPatch)`;
}
