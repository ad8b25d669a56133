/**
 * Apply phases: the order in which an environment's objects must reach the cluster. Synthesis writes one numbered
 * file per phase (`00-crds.yaml`, ...) and the phase number as the Argo CD sync wave (case
 * claim-before-template-ordering).
 */
import type { ApiObject } from './cdk8s.js';

/** Phases in apply order; the index is the file prefix and sync wave. */
export const PHASES = [
  'crds',
  'namespaces',
  'rbac',
  'controller',
  'runtime-classes',
  // Policies before templates and pools: a pool starts pods as soon as it exists, and an Unmanaged template gets no
  // controller policy, so its pods must never run before their NetworkPolicy is in place.
  'policies',
  'templates',
  'warm-pools',
  'router',
  'claims',
  'environment',
  // The in-cluster verifier (VerifierJob) last: it checks everything before it, and Flux health-checks it here.
  'verify',
] as const;

export type Phase = (typeof PHASES)[number];

const BY_KIND: Readonly<Record<string, Phase>> = {
  CustomResourceDefinition: 'crds',
  Namespace: 'namespaces',
  ServiceAccount: 'rbac',
  ClusterRole: 'rbac',
  ClusterRoleBinding: 'rbac',
  Role: 'rbac',
  RoleBinding: 'rbac',
  RuntimeClass: 'runtime-classes',
  SandboxTemplate: 'templates',
  SandboxWarmPool: 'warm-pools',
  NetworkPolicy: 'policies',
  SandboxClaim: 'claims',
  Sandbox: 'claims',
};

const explicit = new WeakMap<ApiObject, Phase>();

/** Puts `obj` in `phase` regardless of its kind (e.g. the router's Deployment in `router`). */
export function setPhase(obj: ApiObject, phase: Phase): void {
  explicit.set(obj, phase);
}

/** The phase of an object: the one set with {@link setPhase}, else by kind, else `controller`. */
export function phaseOf(obj: ApiObject): Phase {
  return explicit.get(obj) ?? BY_KIND[obj.kind] ?? 'controller';
}

/** The phase's number (0-based position in {@link PHASES}). */
export function phaseIndex(phase: Phase): number {
  return PHASES.indexOf(phase);
}
