/**
 * SandboxWarmPool: keeps `replicas` pre-started sandboxes of a template (`extensions/api/v1beta1/sandboxwarmpool_types.go@v0.5.6`).
 * A pooled sandbox is handed to whichever tenant claims it next, so a template that mounts Secrets or takes env from
 * Secrets is refused unless `allowTenantCredentials: true` says the credentials are not tenant-specific.
 */
import { ApiObject } from './cdk8s.js';
import { Construct } from 'constructs';
import { brand, sameCopies } from './package-copies.js';
import { z } from 'zod';
import type { SharedSpecOf } from './bindings.js';
import { apiVersionFor } from './context.js';
import { ConstructPropsError } from './errors.js';
import { isPlainObject } from '../model/objects.js';
import { LABEL_ENVIRONMENT } from './metadata.js';
import { parseProps } from './props.js';
import { requireContext, SandboxTemplate } from './template.js';
import { writtenJson } from './written-rules.js';

/** Props of {@link SandboxWarmPool}. */
export interface SandboxWarmPoolProps {
  /** The template whose sandboxes the pool keeps. Required. */
  readonly template: SandboxTemplate;
  /**
   * Object name (DNS label). The namespace is the template's.
   * @default - the construct id
   */
  readonly name?: string;
  /**
   * Number of warm sandboxes, ≥ 0. Always written (v0.4.6 and v0.5.0 require it).
   * @default 1
   */
  readonly replicas?: number;
  /**
   * `Recreate`: replace stale unclaimed members when the template changes; `OnReplenish` (upstream default): only on replenish.
   * @default 'OnReplenish'
   */
  readonly updateStrategy?: 'Recreate' | 'OnReplenish';
  /**
   * Allow a template that takes Secrets (they would pass from one tenant to the next).
   * @default false
   */
  readonly allowTenantCredentials?: boolean;
}

const PropsSchema = z
  .object({
    template: z.instanceof(SandboxTemplate, { message: 'must be a SandboxTemplate construct' }),
    name: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label')
      .max(63)
      .optional(),
    replicas: z.number().int().min(0).max(10000).default(1),
    updateStrategy: z.enum(['Recreate', 'OnReplenish']).default('OnReplenish'),
    allowTenantCredentials: z.boolean().default(false),
  })
  .strict();

/**
 * One SandboxWarmPool in its template's namespace.
 * @throws ConstructPropsError for bad props or a template that takes Secrets without `allowTenantCredentials`.
 */
export class SandboxWarmPool extends Construct {
  readonly name: string;
  readonly namespace: string;
  readonly template: SandboxTemplate;
  readonly replicas: number;
  readonly updateStrategy: 'Recreate' | 'OnReplenish';
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: SandboxWarmPoolProps) {
    super(sameCopies(scope, id), id);
    const ctx = requireContext(this, 'SandboxWarmPool');
    const p = parseProps(this, 'SandboxWarmPool', PropsSchema, props);
    this.name = p.name ?? id;
    this.template = p.template;
    this.namespace = p.template.namespace;
    this.replicas = p.replicas;
    this.updateStrategy = p.updateStrategy;
    if (!p.allowTenantCredentials && p.template.secretUses.length > 0) {
      throw new ConstructPropsError(
        this.node.path,
        'SandboxWarmPool',
        p.template.secretUses.map((u) => ({
          prop: 'template',
          reason: 'TenantCredentials',
          value: p.template.name,
          message: `template ${p.template.name}: ${u}`,
        })),
        'a warm sandbox goes to whichever tenant claims it next; move credentials out of the template (inject them after the claim), or set allowTenantCredentials: true if they are not tenant-specific',
      );
    }
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: apiVersionFor(ctx.release, 'SandboxWarmPool'),
      kind: 'SandboxWarmPool',
      metadata: { name: this.name, namespace: this.namespace, labels: { [LABEL_ENVIRONMENT]: ctx.name } },
      spec: {
        replicas: this.replicas,
        sandboxTemplateRef: { name: this.template.name },
        updateStrategy: { type: this.updateStrategy },
      } satisfies SharedSpecOf<'SandboxWarmPool'>,
    });
  }

  /** `spec.replicas` as written, after escape hatches such as `apiObject.addJsonPatch` (the descriptor and capacity read it). */
  writtenReplicas(): number {
    const spec = writtenJson(this.apiObject)['spec'];
    const replicas = isPlainObject(spec) ? spec['replicas'] : undefined;
    return typeof replicas === 'number' ? replicas : 0;
  }
}
brand(SandboxWarmPool, 'SandboxWarmPool');
