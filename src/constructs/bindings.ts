/**
 * The spec each construct writes, typed by the cdk8s-import bindings in imports/ (generated from the pinned CRDs by
 * `npm run import`), per release family: v0.4 by the v0.4.6 bindings (v1alpha1), v0.5 by the v0.5.6 bindings (v1beta1).
 * Constructs build each spec as a plain object that `satisfies` its family's shape, so a misspelt, missing or
 * unsupported field, or a value outside an upstream enum, is a type error. The bindings are imported as types only:
 * nothing of them runs, so the written objects (and synthesized bytes) are exactly the plain objects.
 *
 * v0.5.0 is typed by the v0.5.6 bindings: the fields written here are the same in both
 * (`k8s/crds/extensions.agents.x-k8s.io_*.yaml@{v0.5.0,v0.5.6}`) except that v0.5.0 requires a pool's `spec.replicas`,
 * which the v0.5 shape therefore requires too. v1.0 is typed by the v0.5.6 bindings as well: its v1beta1 specs are
 * those of v0.5.6 apart from PodSpec fields (`k8s/crds/*.yaml@{v0.5.6,v1.0.3}`). The pod spec and custom NetworkPolicy rules are typed at the props
 * (cdk8s-plus `k8s.PodSpec`, `k8s.NetworkPolicy*Rule`) and written as their JSON; synthesis checks every object
 * against its release's own CRD schema.
 */
import type * as v046 from '../../imports/v046-extensions.agents.x-k8s.io.js';
import type * as v056 from '../../imports/v056-extensions.agents.x-k8s.io.js';
import type { ReleaseFamily } from '../model/releases.js';
import type { Json } from './kube-object.js';

/** The JSON form of a generated binding type: enums as their string values, dates as RFC 3339 strings. */
export type Wire<T> = T extends Date
  ? string
  : T extends string
    ? `${T}`
    : T extends number | boolean
      ? T
      : T extends readonly (infer E)[]
        ? readonly Wire<E>[]
        : T extends object
          ? { readonly [K in keyof T]: Wire<T[K]> }
          : T;

/** A template spec with the pod spec and the custom policy rules as JSON (typed at the props instead). */
type TemplateSpec<S extends { readonly podTemplate: object }> = Omit<Wire<S>, 'podTemplate' | 'networkPolicy'> & {
  readonly podTemplate: Omit<Wire<S['podTemplate']>, 'spec'> & { readonly spec: Json };
  readonly networkPolicy?: { readonly ingress?: readonly Json[]; readonly egress?: readonly Json[] };
};

/** The kinds constructs write with a spec typed by the bindings. */
export type WrittenKind = 'SandboxTemplate' | 'SandboxWarmPool' | 'SandboxClaim';

interface FamilySpecs {
  readonly 'v0.4': {
    readonly SandboxTemplate: TemplateSpec<v046.SandboxTemplateSpec>;
    readonly SandboxWarmPool: Wire<v046.SandboxWarmPoolSpec>;
    readonly SandboxClaim: Wire<v046.SandboxClaimSpec>;
  };
  readonly 'v0.5': {
    readonly SandboxTemplate: TemplateSpec<v056.SandboxTemplateSpec>;
    readonly SandboxWarmPool: Wire<v056.SandboxWarmPoolSpec> & { readonly replicas: number };
    readonly SandboxClaim: Wire<v056.SandboxClaimSpec>;
  };
  readonly 'v1.0': FamilySpecs['v0.5'];
}

/** The spec of `kind` on family `F`; a family without bindings here is a type error wherever its spec is built. */
export type SpecOf<F extends ReleaseFamily, K extends WrittenKind> = FamilySpecs[F][K];

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/**
 * A spec written the same on every family: only fields every family defines (the keys of the union of the families'
 * specs), each with a value every family accepts (the intersection of their types).
 */
export type SharedSpecOf<K extends WrittenKind> = Pick<
  UnionToIntersection<SpecOf<ReleaseFamily, K>>,
  Extract<keyof SpecOf<ReleaseFamily, K>, keyof UnionToIntersection<SpecOf<ReleaseFamily, K>>>
>;
