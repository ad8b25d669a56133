/**
 * SandboxClaim: a request for one sandbox from a warm pool. v1beta1 names the pool (`spec.warmPoolRef.name`,
 * `extensions/api/v1beta1/sandboxclaim_types.go@v0.5.6`); v1alpha1 (v0.4.6) names the template and the pool
 * (`spec.sandboxTemplateRef.name` + `spec.warmpool`). Claims are applied after templates and pools
 * (case claim-before-template-ordering); a pool named by string must exist in the environment.
 * Every claim is written with an explicit `spec.lifecycle` (case warm-claim-immortal): a `shutdownPolicy` (never the
 * CRD default `Retain`, which keeps the claim object forever) and an expiry (`shutdownTime` and/or
 * `ttlSecondsAfterFinished`, the same fields in every supported family: `k8s/crds/extensions.agents.x-k8s.io_sandboxclaims.yaml`
 * @v0.4.6, @v0.5.0, @v0.5.6); a claim without one fails synthesis unless it, or the environment, opts into `'unbounded'`.
 */
import { ApiObject } from './cdk8s.js';
import { lazy } from './lazy.js';
import { Construct, type IConstruct } from 'constructs';
import { sameCopies } from './package-copies.js';
import { z } from 'zod';
import type { ReleaseFamily } from '../model/releases.js';
import type { SharedSpecOf, SpecOf } from './bindings.js';
import { apiVersionFor, contextScope } from './context.js';
import { UnboundedLifetimeError } from './bounds-errors.js';
import { MissingReferenceError } from './errors.js';
import { addProblemCheck, thrownErrors } from './problems.js';
import type { Json } from './kube-object.js';
import {
  LIFECYCLE_PROP_SCHEMA,
  resolveClaimLifecycle,
  type ClaimLifecycle,
  type ResolvedClaimLifecycle,
} from './lifetime.js';
import { LABEL_ENVIRONMENT } from './metadata.js';
import { parseProps } from './props.js';
import { requireContext } from './template.js';
import { SandboxWarmPool } from './warm-pool.js';

/** Props of {@link SandboxClaim}. */
export interface SandboxClaimProps {
  /** The pool to claim from: the construct, or the name of a pool of the same environment and namespace. Required. */
  readonly pool: SandboxWarmPool | string;
  /**
   * Object name.
   * @default - the construct id
   */
  readonly name?: string;
  /**
   * Namespace.
   * @default - the pool's namespace (construct) or the environment's `defaultNamespace` (name)
   */
  readonly namespace?: string;
  /**
   * `spec.lifecycle`: when the claim expires and what expiry removes, or `'unbounded'` to opt this claim out of expiry.
   * @default - the environment's `claimLifecycle`; with neither, synthesis fails ({@link UnboundedLifetimeError})
   */
  readonly lifecycle?: ClaimLifecycle | 'unbounded';
}

const PropsSchema = z
  .object({
    pool: z.union([
      z.instanceof(SandboxWarmPool),
      z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a pool name (DNS label)'),
    ]),
    name: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label')
      .max(63)
      .optional(),
    namespace: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label')
      .optional(),
    lifecycle: LIFECYCLE_PROP_SCHEMA.optional(),
  })
  .strict();

/**
 * One SandboxClaim. A pool given by name is resolved at synthesis among the environment's pools.
 * @throws MissingReferenceError (at synthesis) when no pool of that name exists in the claim's namespace.
 */
export class SandboxClaim extends Construct {
  readonly name: string;
  readonly namespace: string;
  /** The written `spec.lifecycle`; `unbounded` when opted out (then only `shutdownPolicy` is written). */
  readonly lifecycle: ResolvedClaimLifecycle;
  readonly apiObject: ApiObject;
  private readonly poolRef: SandboxWarmPool | string;

  constructor(scope: Construct, id: string, props: SandboxClaimProps) {
    super(sameCopies(scope, id), id);
    const ctx = requireContext(this, 'SandboxClaim');
    const p = parseProps(this, 'SandboxClaim', PropsSchema, props);
    this.name = p.name ?? id;
    this.poolRef = p.pool;
    this.namespace = p.namespace ?? (typeof p.pool === 'string' ? ctx.defaultNamespace : p.pool.namespace);
    ctx.useNamespace(this.namespace);
    const family = ctx.release.facts.family;
    const resolved = resolveClaimLifecycle(p.lifecycle, ctx.claimLifecycle);
    if (resolved === undefined)
      throw new UnboundedLifetimeError(this.node.path, `claim ${this.namespace}/${this.name}`);
    this.lifecycle = resolved;
    const lifecycle = {
      shutdownPolicy: resolved.shutdownPolicy,
      ...(resolved.shutdownTime !== undefined ? { shutdownTime: resolved.shutdownTime } : {}),
      ...(resolved.ttlSecondsAfterFinished !== undefined
        ? { ttlSecondsAfterFinished: resolved.ttlSecondsAfterFinished }
        : {}),
    } satisfies ClaimLifecycleSpec;
    addProblemCheck(this, () => thrownErrors(() => this.pool));
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: apiVersionFor(ctx.release, 'SandboxClaim'),
      kind: 'SandboxClaim',
      metadata: { name: this.name, namespace: this.namespace, labels: { [LABEL_ENVIRONMENT]: ctx.name } },
      spec: lazy(() => claimSpec(family, this.pool, lifecycle)),
    });
  }

  /** The claimed pool. @throws MissingReferenceError when a pool named by string is not in the environment. */
  get pool(): SandboxWarmPool {
    if (typeof this.poolRef !== 'string') return this.poolRef;
    const name = this.poolRef;
    const pools = findPools(contextScope(this) ?? this.node.root);
    const match = pools.find((pool) => pool.name === name && pool.namespace === this.namespace);
    if (match === undefined) {
      const known = pools.map((pool) => `${pool.namespace}/${pool.name}`);
      throw new MissingReferenceError(
        this.node.path,
        `claim ${this.namespace}/${this.name} names warm pool ${JSON.stringify(name)}, which the environment does not contain (pools: ${known.join(', ') || 'none'})`,
        'add the SandboxWarmPool to the environment, or fix the pool name/namespace of the claim',
      );
    }
    return match;
  }
}

/** `spec.lifecycle` as every supported family writes it. */
type ClaimLifecycleSpec = NonNullable<SharedSpecOf<'SandboxClaim'>['lifecycle']>;

/** The claim's spec on `family`: v0.5 and v1.0 (v1beta1) name the pool; v0.4 (v1alpha1) names the template and the pool. */
function claimSpec(family: ReleaseFamily, pool: SandboxWarmPool, lifecycle: ClaimLifecycleSpec): Json {
  switch (family) {
    case 'v0.5':
    case 'v1.0':
      return { warmPoolRef: { name: pool.name }, lifecycle } satisfies SpecOf<'v0.5', 'SandboxClaim'>;
    case 'v0.4':
      return {
        sandboxTemplateRef: { name: pool.template.name },
        warmpool: pool.name,
        lifecycle,
      } satisfies SpecOf<'v0.4', 'SandboxClaim'>;
  }
}

function findPools(scope: IConstruct): SandboxWarmPool[] {
  return scope.node.findAll().filter((c): c is SandboxWarmPool => c instanceof SandboxWarmPool);
}
