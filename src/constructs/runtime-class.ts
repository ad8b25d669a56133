/**
 * SandboxRuntimeClass: a `node.k8s.io/v1` RuntimeClass for sandbox pods with gVisor and Kata presets. A RuntimeClass
 * without scheduling rules lets pods land on nodes that lack the handler, where they never start, so `scheduling` is
 * required unless `allNodes: true` says every node has the handler (case 12-gvisor-runtimeclass-unschedulable).
 * Upstream ships no RuntimeClass (`k8s/@v0.5.6`); names and handlers follow its examples
 * (`examples/quickstart/gvisor.md@v0.5.6`: `gvisor`/`runsc`; `examples/gke-swap/runtimes/kata/deploy_cluster.sh@v0.5.6`: `kata-qemu`).
 */
import { ApiObject } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { z } from 'zod';
import { parseProps } from './props.js';

/** Isolation presets. */
export type RuntimePreset = 'gvisor' | 'kata';

/** Node selection for pods of this runtime class: the RuntimeClass admission controller merges it into every pod. */
export interface RuntimeScheduling {
  /** Labels that only nodes with the handler carry. Required, at least one entry. */
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** Tolerations for taints on those nodes. Default: none. */
  readonly tolerations?: readonly k8s.Toleration[];
}

/** Props of {@link SandboxRuntimeClass}. */
export interface SandboxRuntimeClassProps {
  readonly preset: RuntimePreset;
  /** RuntimeClass name. Default: `gvisor` for gvisor, `kata-qemu` for kata. */
  readonly name?: string;
  /** CRI handler. Default: `runsc` for gvisor, `kata-qemu` for kata. */
  readonly handler?: string;
  /**
   * Fixed per-pod overhead (quantities such as `250m`, `160Mi`) counted by the scheduler and quota.
   * Default: none for gvisor, `{ cpu: '250m', memory: '160Mi' }` for kata (the VM's own footprint; AgentPlane's default). `false`: none.
   */
  readonly overhead?: { readonly cpu?: string; readonly memory?: string } | false;
  /** Where pods may run. Required unless `allNodes` is true; both at once is an error. */
  readonly scheduling?: RuntimeScheduling;
  /** Every node has the handler: no scheduling rules. Default `false`. */
  readonly allNodes?: boolean;
}

const PRESETS: Readonly<Record<RuntimePreset, { name: string; handler: string; overhead?: { cpu: string; memory: string } }>> = {
  gvisor: { name: 'gvisor', handler: 'runsc' },
  kata: { name: 'kata-qemu', handler: 'kata-qemu', overhead: { cpu: '250m', memory: '160Mi' } },
};

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/;

const TolerationSchema = z
  .object({
    key: z.string().optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .strict();

const PropsSchema = z
  .object({
    preset: z.enum(['gvisor', 'kata']),
    name: z.string().regex(DNS_SUBDOMAIN, 'must be a DNS subdomain').max(253).optional(),
    handler: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label').max(63).optional(),
    overhead: z
      .union([z.literal(false), z.object({ cpu: z.string().regex(QUANTITY, 'must be a quantity').optional(), memory: z.string().regex(QUANTITY, 'must be a quantity').optional() }).strict()])
      .optional(),
    scheduling: z
      .object({
        nodeSelector: z.record(z.string(), z.string()).refine((r) => Object.keys(r).length > 0, 'needs at least one label'),
        tolerations: z.array(TolerationSchema).optional(),
      })
      .strict()
      .optional(),
    allNodes: z.boolean().default(false),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.scheduling === undefined && !p.allNodes) {
      ctx.addIssue({
        code: 'custom',
        path: ['scheduling'],
        params: { reason: 'SchedulingRequired' },
        message: 'required: give nodeSelector (and tolerations) for the nodes that have the handler, or set allNodes: true if every node has it',
      });
    }
    if (p.scheduling !== undefined && p.allNodes) {
      ctx.addIssue({ code: 'custom', path: ['allNodes'], params: { reason: 'SchedulingContradiction' }, message: 'contradicts scheduling: pick one' });
    }
  });

/**
 * A cluster-scoped RuntimeClass. `name` and `handler` are what templates reference.
 * @throws ConstructPropsError when scheduling is missing without `allNodes`, or props are malformed.
 */
export class SandboxRuntimeClass extends Construct {
  readonly name: string;
  readonly handler: string;
  readonly preset: RuntimePreset;
  /** `undefined` when `allNodes` is true. */
  readonly scheduling?: RuntimeScheduling;
  readonly overhead?: { readonly cpu?: string; readonly memory?: string };
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: SandboxRuntimeClassProps) {
    super(scope, id);
    const p = parseProps(this, 'SandboxRuntimeClass', PropsSchema, props);
    const preset = PRESETS[p.preset];
    this.preset = p.preset;
    this.name = p.name ?? preset.name;
    this.handler = p.handler ?? preset.handler;
    const overhead = p.overhead === false ? undefined : (p.overhead ?? preset.overhead);
    if (overhead !== undefined) this.overhead = overhead;
    if (p.scheduling !== undefined) this.scheduling = p.scheduling as RuntimeScheduling;
    const podFixed: Record<string, k8s.Quantity> = {};
    if (overhead?.cpu !== undefined) podFixed['cpu'] = k8s.Quantity.fromString(overhead.cpu);
    if (overhead?.memory !== undefined) podFixed['memory'] = k8s.Quantity.fromString(overhead.memory);
    this.apiObject = new k8s.KubeRuntimeClass(this, 'Resource', {
      metadata: { name: this.name },
      handler: this.handler,
      ...(Object.keys(podFixed).length > 0 ? { overhead: { podFixed } } : {}),
      ...(p.scheduling !== undefined
        ? { scheduling: { nodeSelector: { ...p.scheduling.nodeSelector }, ...(p.scheduling.tolerations !== undefined ? { tolerations: p.scheduling.tolerations } : {}) } }
        : {}),
    });
  }
}
