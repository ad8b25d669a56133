/**
 * Settings of the controller's Deployment, with the keys of upstream's Helm chart values they mirror
 * (`helm/values.yaml@v0.5.6`), so a team moving from the chart finds each one. Applied to the pinned Deployment by
 * AgentSandboxInstall; every value is validated, and nothing is written for a setting left out.
 */
import { k8s } from './k8s.js';
import { z } from 'zod';
import { child, list, type Json } from './kube-object.js';
import { QuantitySchema } from './quantity.js';

/** Compute resources of the controller container, as Kubernetes quantities (`'500m'`, `'128Mi'`). */
export interface ControllerResources {
  /** @default none */
  readonly requests?: {
    /** @default - none */
    readonly cpu?: string;
    /** @default - none */
    readonly memory?: string;
  };
  /** @default none */
  readonly limits?: {
    /** @default - none */
    readonly cpu?: string;
    /** @default - none */
    readonly memory?: string;
  };
}

/** Settings of the controller Deployment (AgentSandboxInstallProps.controller). */
export interface ControllerDeploymentProps {
  /** Controller replicas (leader election, on in every pinned release, keeps one active). Helm: `replicaCount`. @default 1 (as pinned) */
  readonly replicas?: number;
  /** Resources of the controller container. Helm: `resources`. @default none (as pinned: no requests or limits) */
  readonly resources?: ControllerResources;
  /** Pod `nodeSelector`. Helm: `nodeSelector`. @default none */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** Pod tolerations. Helm: `tolerations`. @default none */
  readonly tolerations?: readonly k8s.Toleration[];
  /** Pod affinity. Helm: `affinity`. @default none */
  readonly affinity?: k8s.Affinity;
  /** Annotations added to the pod template. Helm: `podAnnotations`. @default none */
  readonly podAnnotations?: Readonly<Record<string, string>>;
  /** Labels added to the pod template (the selector labels stay). Helm: `podLabels`. @default none */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** Names of Secrets for pulling the controller image. Helm: `imagePullSecrets` (as `[{ name }]`). @default none */
  readonly imagePullSecrets?: readonly string[];
  /** Pod `priorityClassName`. No Helm value (v0.5.6). @default none */
  readonly priorityClassName?: string;
  /**
   * Flags appended to the controller's arguments, e.g. `['--zap-log-level=debug']`. Helm: `controller.extraArgs`.
   * Flags AgentPlane sets itself (`--extensions`, `--manage-webhook-certs`) are refused here: use `extensions` and
   * `certificates`. @default none
   */
  readonly extraArgs?: readonly string[];
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const MANAGED_FLAGS = ['--extensions', '--manage-webhook-certs'];

const quantities = z
  .object({
    cpu: QuantitySchema.optional(),
    memory: QuantitySchema.optional(),
  })
  .strict();

/**
 * zod schema of the `controller` prop ({@link ControllerDeploymentProps}).
 * @internal
 */
export const ControllerDeploymentSchema = z
  .object({
    replicas: z.number().int().min(0).max(100).optional(),
    resources: z.object({ requests: quantities.optional(), limits: quantities.optional() }).strict().optional(),
    nodeSelector: z
      .record(
        z.string().regex(LABEL_KEY, 'must be a label key'),
        z.string().regex(LABEL_VALUE, 'must be a label value'),
      )
      .optional(),
    tolerations: z.array(z.record(z.string(), z.unknown())).optional(),
    affinity: z.record(z.string(), z.unknown()).optional(),
    podAnnotations: z.record(z.string().regex(LABEL_KEY, 'must be an annotation key'), z.string()).optional(),
    podLabels: z
      .record(
        z.string().regex(LABEL_KEY, 'must be a label key'),
        z.string().regex(LABEL_VALUE, 'must be a label value'),
      )
      .optional(),
    imagePullSecrets: z.array(z.string().regex(DNS_SUBDOMAIN, 'must be a Secret name').max(253)).optional(),
    priorityClassName: z.string().regex(DNS_SUBDOMAIN, 'must be a PriorityClass name').max(253).optional(),
    extraArgs: z
      .array(z.string().regex(/^--?[A-Za-z0-9]/, 'must be a flag (starting with - or --)'))
      .refine(
        (args) => !args.some((a) => MANAGED_FLAGS.some((f) => a === f || a.startsWith(`${f}=`))),
        `must not set ${MANAGED_FLAGS.join(' or ')} (use the extensions and certificates props)`,
      )
      .optional(),
  })
  .strict()
  .default({});

function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/**
 * Writes the settings into the controller Deployment (JSON form) and its container named `container`.
 * @internal
 */
export function applyControllerSettings(
  deployment: Json,
  container: Json,
  props: z.infer<typeof ControllerDeploymentSchema>,
  raw: ControllerDeploymentProps,
): void {
  const spec = child(deployment, 'spec');
  const template = child(spec, 'template');
  const pod = child(template, 'spec');
  if (props.replicas !== undefined) spec['replicas'] = props.replicas;
  if (props.resources !== undefined) container['resources'] = plain(props.resources);
  if (props.nodeSelector !== undefined) pod['nodeSelector'] = { ...props.nodeSelector };
  if (raw.tolerations !== undefined) pod['tolerations'] = raw.tolerations.map((t) => plain(k8s.toJson_Toleration(t)));
  if (raw.affinity !== undefined) pod['affinity'] = plain(k8s.toJson_Affinity(raw.affinity));
  if (props.podAnnotations !== undefined)
    Object.assign(child(child(template, 'metadata'), 'annotations'), props.podAnnotations);
  if (props.podLabels !== undefined) {
    const labels = child(child(template, 'metadata'), 'labels');
    for (const [k, v] of Object.entries(props.podLabels)) if (!(k in labels)) labels[k] = v; // selector labels stay as pinned
  }
  if (props.imagePullSecrets !== undefined) pod['imagePullSecrets'] = props.imagePullSecrets.map((name) => ({ name }));
  if (props.priorityClassName !== undefined) pod['priorityClassName'] = props.priorityClassName;
  if (props.extraArgs !== undefined) list(container, 'args').push(...props.extraArgs);
}
