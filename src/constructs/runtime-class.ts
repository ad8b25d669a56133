/**
 * SandboxRuntimeClass: a `node.k8s.io/v1` RuntimeClass for sandbox pods with gVisor and Kata presets. A RuntimeClass
 * without scheduling rules lets pods land on nodes that lack the handler, where they never start, so `scheduling` is
 * required unless `allNodes: true` says every node has the handler (case gvisor-runtimeclass-unschedulable).
 * Upstream ships no RuntimeClass (`k8s/@v0.5.6`); names and handlers follow its examples
 * (`examples/quickstart/gvisor.md@v0.5.6`: `gvisor`/`runsc`; `examples/gke-swap/runtimes/kata/deploy_cluster.sh@v0.5.6`: `kata-qemu`).
 */
import { ApiObject } from './cdk8s.js';
import { k8s } from './k8s.js';
import { Construct } from 'constructs';
import { brand, sameCopies } from './package-copies.js';
import { z } from 'zod';
import {
  GVISOR_PROFILE,
  KATA_HYPERVISORS,
  KATA_PROFILES,
  type KataHypervisor,
  type OverheadProfile,
} from './overhead-profiles.js';
import { refuseChartNamespace } from './cluster-scope.js';
import { findContext } from './context.js';
import { parseProps } from './props.js';
import { QuantitySchema } from './quantity.js';

/** Isolation presets. */
export type RuntimePreset = 'gvisor' | 'kata';

/** Node selection for pods of this runtime class: the RuntimeClass admission controller merges it into every pod. */
export interface RuntimeScheduling {
  /** Labels that only nodes with the handler carry. Required, at least one entry. */
  readonly nodeSelector: Readonly<Record<string, string>>;
  /**
   * Tolerations for taints on those nodes.
   * @default - none
   */
  readonly tolerations?: readonly k8s.Toleration[];
}

/** The nodes that match a RuntimeClass's scheduling rules, for the capacity check at synthesis (case kata-runtimeclass-pending). */
export interface RuntimeNodes {
  /** How many such nodes there are (≥ 1). */
  readonly count: number;
  /** Allocatable cpu and memory of one node (quantities, e.g. `'4'`, `'16Gi'`): what the scheduler may place there. */
  readonly allocatable: { readonly cpu: string; readonly memory: string };
}

/** Props of {@link SandboxRuntimeClass}. */
export interface SandboxRuntimeClassProps {
  readonly preset: RuntimePreset;
  /**
   * Kata only: the hypervisor, which picks the pinned profile (name, handler, overhead).
   * @default 'qemu'
   */
  readonly hypervisor?: KataHypervisor;
  /**
   * RuntimeClass name.
   * @default - the profile's (`gvisor`; `kata-<hypervisor>`, e.g. `kata-qemu`)
   */
  readonly name?: string;
  /**
   * CRI handler.
   * @default - the profile's (`runsc`; `kata-<hypervisor>`)
   */
  readonly handler?: string;
  /**
   * Fixed per-pod overhead (quantities such as `250m`, `160Mi`) counted by the scheduler and quota. Default: the pinned
   * profile (`overhead-profiles.ts`: none for gvisor; kata-deploy's figure per hypervisor, e.g. 250m/160Mi for qemu).
   * `false`: none.
   * @default - the pinned profile (`overhead-profiles.ts`: none for gvisor; kata-deploy's figure per hypervisor, e.g. 250m/160Mi for qemu)
   */
  readonly overhead?:
    | {
        /** @default - none */
        readonly cpu?: string;
        /** @default - none */
        readonly memory?: string;
      }
    | false;
  /**
   * Where pods may run. Required unless `allNodes` is true; both at once is an error.
   * @default - none: then `allNodes` must be true
   */
  readonly scheduling?: RuntimeScheduling;
  /**
   * Every node has the handler: no scheduling rules.
   * @default false
   */
  readonly allNodes?: boolean;
  /**
   * The nodes the scheduling rules select, so synthesis can check that every pool fits.
   * @default - undeclared (no capacity check)
   */
  readonly nodes?: RuntimeNodes;
}

/**
 * Handlers that run a pod on the host kernel (runc and its peers) or under the other preset's runtime: a class whose
 * preset promises gVisor or Kata must not name one (case gvisor-evidence-markers). Other names pass, as providers
 * name their handlers freely (GKE Sandbox: `gvisor`; kata-deploy: `kata-qemu`, `kata-clh`, ...).
 */
const HOST_KERNEL_HANDLERS = ['runc', 'crun', 'youki', 'runhcs'];
const FOREIGN_HANDLER: Record<RuntimePreset, (handler: string) => boolean> = {
  gvisor: (h) => HOST_KERNEL_HANDLERS.includes(h) || h.startsWith('kata'),
  kata: (h) => HOST_KERNEL_HANDLERS.includes(h) || h === 'runsc' || h.startsWith('runsc-'),
};

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

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
    hypervisor: z.enum(KATA_HYPERVISORS).optional(),
    name: z.string().regex(DNS_SUBDOMAIN, 'must be a DNS subdomain').max(253).optional(),
    handler: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label')
      .max(63)
      .optional(),
    overhead: z
      .union([
        z.literal(false),
        z
          .object({
            cpu: QuantitySchema.optional(),
            memory: QuantitySchema.optional(),
          })
          .strict(),
      ])
      .optional(),
    scheduling: z
      .object({
        nodeSelector: z
          .record(z.string(), z.string())
          .refine((r) => Object.keys(r).length > 0, 'needs at least one label'),
        tolerations: z.array(TolerationSchema).optional(),
      })
      .strict()
      .optional(),
    allNodes: z.boolean().default(false),
    nodes: z
      .object({
        count: z.number().int().min(1),
        allocatable: z
          .object({
            cpu: QuantitySchema,
            memory: QuantitySchema,
          })
          .strict(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.hypervisor !== undefined && p.preset !== 'kata')
      ctx.addIssue({ code: 'custom', path: ['hypervisor'], message: 'only for preset kata' });
    if (p.handler !== undefined && FOREIGN_HANDLER[p.preset](p.handler))
      ctx.addIssue({
        code: 'custom',
        path: ['handler'],
        params: { reason: 'PresetHandlerMismatch' },
        message: `handler ${p.handler} does not run preset ${p.preset}: pods would run ${HOST_KERNEL_HANDLERS.includes(p.handler) ? 'on the host kernel' : 'under another runtime'}`,
      });
    if (p.scheduling === undefined && !p.allNodes) {
      ctx.addIssue({
        code: 'custom',
        path: ['scheduling'],
        params: { reason: 'SchedulingRequired' },
        message:
          'required: give nodeSelector (and tolerations) for the nodes that have the handler, or set allNodes: true if every node has it',
      });
    }
    if (p.scheduling !== undefined && p.allNodes) {
      ctx.addIssue({
        code: 'custom',
        path: ['allNodes'],
        params: { reason: 'SchedulingContradiction' },
        message: 'contradicts scheduling: pick one',
      });
    }
  });

/**
 * A cluster-scoped RuntimeClass. `name` and `handler` are what templates reference.
 * @throws ConstructPropsError when scheduling is missing without `allNodes`, the handler does not run the preset
 *   (`PresetHandlerMismatch`, e.g. preset `gvisor` with handler `runc`), or props are malformed.
 */
export class SandboxRuntimeClass extends Construct {
  readonly name: string;
  readonly handler: string;
  readonly preset: RuntimePreset;
  /** `undefined` when `allNodes` is true. */
  readonly scheduling?: RuntimeScheduling;
  readonly overhead?: { readonly cpu?: string; readonly memory?: string };
  /** Where {@link overhead} comes from: the pinned profile's source, or `overhead prop` when overridden. */
  readonly overheadSource: string;
  /** The nodes the scheduling rules select, when declared. */
  readonly nodes?: RuntimeNodes;
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: SandboxRuntimeClassProps) {
    super(sameCopies(scope, id), id);
    findContext(this)?.assertOpen(this);
    refuseChartNamespace(this, ['RuntimeClass']);
    const p = parseProps(this, 'SandboxRuntimeClass', PropsSchema, props);
    const profile: OverheadProfile = p.preset === 'gvisor' ? GVISOR_PROFILE : KATA_PROFILES[p.hypervisor ?? 'qemu'];
    this.preset = p.preset;
    this.name = p.name ?? profile.name;
    this.handler = p.handler ?? profile.handler;
    const overhead = p.overhead === false ? undefined : (p.overhead ?? profile.overhead);
    if (overhead !== undefined)
      this.overhead = {
        ...(overhead.cpu !== undefined ? { cpu: overhead.cpu } : {}),
        ...(overhead.memory !== undefined ? { memory: overhead.memory } : {}),
      };
    this.overheadSource = p.overhead === undefined ? profile.source : 'overhead prop';
    if (p.nodes !== undefined) this.nodes = p.nodes;
    if (p.scheduling !== undefined)
      this.scheduling = {
        nodeSelector: { ...p.scheduling.nodeSelector },
        ...(p.scheduling.tolerations !== undefined ? { tolerations: p.scheduling.tolerations.map(toleration) } : {}),
      };
    const podFixed: Record<string, k8s.Quantity> = {};
    if (overhead?.cpu !== undefined) podFixed['cpu'] = k8s.Quantity.fromString(overhead.cpu);
    if (overhead?.memory !== undefined) podFixed['memory'] = k8s.Quantity.fromString(overhead.memory);
    this.apiObject = new k8s.KubeRuntimeClass(this, 'Resource', {
      metadata: { name: this.name },
      handler: this.handler,
      ...(Object.keys(podFixed).length > 0 ? { overhead: { podFixed } } : {}),
      ...(this.scheduling !== undefined
        ? {
            scheduling: {
              nodeSelector: { ...this.scheduling.nodeSelector },
              ...(this.scheduling.tolerations !== undefined ? { tolerations: [...this.scheduling.tolerations] } : {}),
            },
          }
        : {}),
    });
  }
}
brand(SandboxRuntimeClass, 'SandboxRuntimeClass');

/** A parsed toleration as written: the fields given, none present as `undefined`. */
function toleration(t: z.output<typeof TolerationSchema>): k8s.Toleration {
  return {
    ...(t.key !== undefined ? { key: t.key } : {}),
    ...(t.operator !== undefined ? { operator: t.operator } : {}),
    ...(t.value !== undefined ? { value: t.value } : {}),
    ...(t.effect !== undefined ? { effect: t.effect } : {}),
    ...(t.tolerationSeconds !== undefined ? { tolerationSeconds: t.tolerationSeconds } : {}),
  };
}
