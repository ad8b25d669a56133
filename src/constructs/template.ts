/**
 * SandboxTemplate: a pod blueprint for sandboxes (`extensions/api/v1beta1/sandboxtemplate_types.go@v0.5.6`), written
 * as the CRD's storage version (v1beta1 on v0.5.x, v1alpha1 on v0.4.6). The pod spec is a cdk8s-plus-28 `k8s.PodSpec`
 * serialized with `k8s.toJson_PodSpec`; the runtime class comes from a {@link SandboxRuntimeClass} construct; secure
 * defaults are applied; every sandbox pod carries the label `agentplane.dev/template: <name>`.
 */
import { ApiObject } from './cdk8s.js';
import { lazy } from './lazy.js';
import { k8s } from './k8s.js';
import { Construct } from 'constructs';
import { brand, sameCopies } from './package-copies.js';
import { z } from 'zod';
import { KNOWN_DEFECTIVE_IMAGES, knownDefectOf, type LoadedRelease } from '../releases/index.js';
import type { SharedSpecOf } from './bindings.js';
import { apiVersionFor, findContext, type EnvironmentContext } from './context.js';
import { ConflictError, ConstructError, ConstructPropsError, KnownDefectiveImageError } from './errors.js';
import { addProblemCheck, thrownErrors } from './problems.js';
import { assertPinned, podSpecImages, type ContainerImage } from './images.js';
import { isPlainObject } from '../model/objects.js';
import { type Json } from './kube-object.js';
import { LABEL_ENVIRONMENT, LABEL_TEMPLATE } from './metadata.js';
import { applySecureDefaults, plain, secretUses, securityProblems } from './pod-security.js';
import { DNS_LABEL } from '../model/names.js';
import { parseProps } from './props.js';
import { addReadinessProbe, templateRuntimeBind } from './readiness.js';
import { podResources, quantityProblems, type PodResources } from './resources.js';
import { SandboxRuntimeClass } from './runtime-class.js';
import type { TemplateRuntime, TemplateRuntimeBind } from './template-runtime.js';
import { writtenJson, writtenPodSpec } from './written-rules.js';
import { templateExecLimit, type TemplateExecLimit } from './exec-limits.js';

/** `Managed`: the controller keeps one NetworkPolicy per template; `Unmanaged`: it keeps none (`sandboxtemplate_controller.go@v0.5.6`). */
export type NetworkPolicyManagement = 'Managed' | 'Unmanaged';

export type { TemplateRuntime };

/** Custom rules for the controller-managed policy (`spec.networkPolicy`); they replace the controller's default lists wholesale. */
export interface TemplateNetworkRules {
  /** @default - not written (the controller's default ingress list) */
  readonly ingress?: readonly k8s.NetworkPolicyIngressRule[];
  /** @default - not written (the controller's default egress list) */
  readonly egress?: readonly k8s.NetworkPolicyEgressRule[];
}

/** The template's `spec.networkPolicyManagement` and `spec.networkPolicy`, as every supported family writes them. */
type NetworkSpec = Pick<SharedSpecOf<'SandboxTemplate'>, 'networkPolicyManagement' | 'networkPolicy'>;

/** Custom rules for the controller-managed policy in JSON form. */
type ManagedPolicyRules = NonNullable<NetworkSpec['networkPolicy']>;

/** Props of {@link SandboxTemplate}. */
export interface SandboxTemplateProps {
  /**
   * Object name (DNS label).
   * @default - the construct id
   */
  readonly name?: string;
  /**
   * Namespace.
   * @default - the environment's `defaultNamespace`
   */
  readonly namespace?: string;
  /** Runtime class of every sandbox pod. Required: isolation is delegated to the RuntimeClass (`docs/security/threat_model.md@v0.5.6`). */
  readonly runtimeClass: SandboxRuntimeClass;
  /** The pod spec (cdk8s-plus-28). Every container needs cpu and memory limits; `runtimeClassName` may be left out. */
  readonly podSpec: k8s.PodSpec;
  /**
   * Extra labels/annotations of sandbox pods (keys under `agents.x-k8s.io/` are dropped by the controller and refused here).
   * @default - none
   */
  readonly podMetadata?: {
    /** @default - none */
    readonly labels?: Readonly<Record<string, string>>;
    /** @default - none */
    readonly annotations?: Readonly<Record<string, string>>;
  };
  /**
   * The runtime endpoint.
   * @default - `custom`, the first container, its declared container ports
   */
  readonly runtime?: TemplateRuntime;
  /**
   * A readiness probe on the runtime's port, added to the runtime container when it declares none, so a pod turns Ready
   * (and a warm pool hands it out) only once the runtime answers: without it the pod is Ready as soon as the container
   * starts, and a client's first call meets a server still starting (seen: 502 from the router). `true` adds it for
   * runtimes served on the pod network: python-runtime (`GET /` on its first port, `examples/python-runtime-sandbox/main.py@v0.5.6`),
   * sandboxd v1.0.x on a non-loopback `--listen-host` (`GET /v1/health` on its first port,
   * `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`), custom (a TCP check of its first port). sandboxd v0.5.6 binds
   * 127.0.0.1 (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`), where the kubelet's probe cannot reach, so `true`
   * there is refused (`sandboxdPodSpec` carries an exec probe run inside the container instead); so is `true` on a
   * sandboxd told `--listen-host=127.0.0.1`. `false` leaves the container as given.
   * @default - true for python-runtime; false for sandboxd and custom (a custom runtime's bind is not known)
   */
  readonly runtimeReadinessProbe?: boolean;
  /**
   * Who manages the NetworkPolicy of the template's pods: the controller (`Managed`) or the environment's own policies.
   * @default - `Unmanaged` when a SandboxNetworkPolicy of the environment selects this template, else `Managed`
   */
  readonly networkPolicyManagement?: NetworkPolicyManagement;
  /**
   * Custom rules for the controller-managed policy. Not allowed with own policies.
   * @default - none (the controller's defaults)
   */
  readonly networkPolicy?: TemplateNetworkRules;
  /**
   * Whether claims may set env.
   * @default 'Disallowed'
   */
  readonly envVarsInjectionPolicy?: 'Allowed' | 'Overrides' | 'Disallowed';
  /**
   * `true`: the controller creates a headless Service per sandbox.
   * @default - unset (upstream: keep an existing one, create none)
   */
  readonly service?: boolean;
  /**
   * Ids of known image defects (`KNOWN_DEFECTIVE_IMAGES` of the releases layer) this template accepts, e.g.
   * `['python-runtime-blocking-execute']` to keep the v0.5.0 python runtime.
   * @default - none, so a known-defective image fails synthesis with {@link KnownDefectiveImageError}
   */
  readonly acceptKnownDefects?: readonly string[];
}

const PropsSchema = z
  .object({
    name: z.string().regex(DNS_LABEL, 'must be a DNS label (lowercase letters, digits, -)').max(63).optional(),
    namespace: z.string().regex(DNS_LABEL, 'must be a DNS label').max(63).optional(),
    runtimeClass: z.instanceof(SandboxRuntimeClass, { message: 'must be a SandboxRuntimeClass construct' }),
    podSpec: z.custom<k8s.PodSpec>(
      (v) => isPlainObject(v) && Array.isArray(v['containers']) && v['containers'].length > 0,
      'must be a k8s.PodSpec with at least one container',
    ),
    podMetadata: z
      .object({
        labels: z.record(z.string(), z.string()).optional(),
        annotations: z.record(z.string(), z.string()).optional(),
      })
      .strict()
      .optional(),
    runtime: z
      .object({
        kind: z.enum(['sandboxd', 'python-runtime', 'custom']),
        container: z.string().min(1),
        ports: z.array(z.number().int().min(1).max(65535)).min(1),
      })
      .strict()
      .optional(),
    runtimeReadinessProbe: z.boolean().optional(),
    networkPolicyManagement: z.enum(['Managed', 'Unmanaged']).optional(),
    networkPolicy: z
      .object({ ingress: z.array(z.any()).optional(), egress: z.array(z.any()).optional() })
      .strict()
      .optional(),
    envVarsInjectionPolicy: z.enum(['Allowed', 'Overrides', 'Disallowed']).default('Disallowed'),
    service: z.boolean().optional(),
    acceptKnownDefects: z.array(z.enum(KNOWN_DEFECTIVE_IMAGES.map((d) => d.id) as [string, ...string[]])).default([]),
  })
  .strict();

/** The environment context of a part just created, or an error naming its path (outside an environment, or after seal). */
export function requireContext(scope: Construct, construct: string): EnvironmentContext {
  const ctx = findContext(scope);
  if (ctx === undefined) {
    throw new ConstructError(
      scope.node.path,
      `${construct} must be created inside an AgentEnvironment`,
      'create it with the environment (or one of its children) as scope, e.g. env.addTemplate(...)',
      'OutsideEnvironment',
    );
  }
  ctx.assertOpen(scope);
  return ctx;
}

/**
 * One SandboxTemplate. Public fields describe it for pools, policies and the environment descriptor.
 * @throws ConstructPropsError (bad props, insecure pod spec, runtime container missing), UnpinnedImageError.
 */
export class SandboxTemplate extends Construct {
  readonly name: string;
  readonly namespace: string;
  readonly runtimeClass: SandboxRuntimeClass;
  readonly runtime: TemplateRuntime;
  /** Where the runtime listens (its `--listen-host`, else the release's default); undefined for a custom runtime. */
  readonly runtimeBind?: TemplateRuntimeBind;
  /** The runtime's own exec limit (python runtime `SANDBOX_EXEC_TIMEOUT_SECONDS`); undefined when it has none. */
  readonly runtimeExecLimit?: TemplateExecLimit;
  /** Container images in declared order. */
  readonly images: readonly ContainerImage[];
  /** Labels every sandbox pod of this template carries (selector for policies). */
  readonly podLabels: Readonly<Record<string, string>>;
  /** Where the pod spec takes Secrets (see SandboxWarmPool's `allowTenantCredentials`). */
  readonly secretUses: readonly string[];
  /** The known-defect ids this template accepts (`acceptKnownDefects`); the written-object check reads them. */
  readonly acceptedDefects: readonly string[];
  /** Effective requests/limits of one sandbox pod, without RuntimeClass overhead (for the capacity check). */
  readonly resources: PodResources;
  /** `spec.service`: whether the controller creates a headless Service per sandbox (undefined: unset). */
  readonly service?: boolean;
  readonly release: LoadedRelease;
  readonly apiObject: ApiObject;
  private readonly explicitManagement?: NetworkPolicyManagement;
  private readonly customRules?: ManagedPolicyRules;
  private readonly policies: string[] = [];

  constructor(scope: Construct, id: string, props: SandboxTemplateProps) {
    super(sameCopies(scope, id), id);
    const ctx = requireContext(this, 'SandboxTemplate');
    const p = parseProps(this, 'SandboxTemplate', PropsSchema, props);
    this.release = ctx.release;
    this.name = p.name ?? id;
    if (!DNS_LABEL.test(this.name))
      throw new ConstructPropsError(this.node.path, 'SandboxTemplate', [
        {
          prop: 'name',
          reason: 'NotDnsLabel',
          value: this.name,
          message: `name: must be a DNS label (got ${JSON.stringify(this.name)}); pass name explicitly`,
        },
      ]);
    this.namespace = p.namespace ?? ctx.defaultNamespace;
    ctx.useNamespace(this.namespace);
    this.runtimeClass = p.runtimeClass;
    if (p.networkPolicyManagement !== undefined) this.explicitManagement = p.networkPolicyManagement;
    if (p.service !== undefined) this.service = p.service;

    const podSpec = plain(k8s.toJson_PodSpec(props.podSpec) ?? {}) as Json;
    if (podSpec['runtimeClassName'] !== undefined && podSpec['runtimeClassName'] !== this.runtimeClass.name) {
      throw new ConstructPropsError(this.node.path, 'SandboxTemplate', [
        {
          prop: 'podSpec.runtimeClassName',
          reason: 'RuntimeClassContradiction',
          value: podSpec['runtimeClassName'],
          message: `podSpec.runtimeClassName: ${JSON.stringify(podSpec['runtimeClassName'])} contradicts runtimeClass ${JSON.stringify(this.runtimeClass.name)}; leave it out`,
        },
      ]);
    }
    podSpec['runtimeClassName'] = this.runtimeClass.name;
    applySecureDefaults(podSpec);
    // quantities here, not in the helper that built the pod spec (sandboxdPodSpec), so the error names this construct
    const problems = [...securityProblems(podSpec), ...quantityProblems(podSpec)];
    const reserved = Object.keys(p.podMetadata?.labels ?? {}).filter(
      (k) => k.startsWith('agents.x-k8s.io/') || k.startsWith('extensions.agents.x-k8s.io/'),
    );
    for (const k of reserved)
      problems.push({
        prop: `podMetadata.labels.${k}`,
        reason: 'ReservedLabel',
        value: k,
        message: `podMetadata.labels.${k}: keys under agents.x-k8s.io/ are dropped by the controller (controllers/sandbox_controller.go@v0.5.6)`,
      });
    if (problems.length > 0) throw new ConstructPropsError(this.node.path, 'SandboxTemplate', problems);

    this.acceptedDefects = [...p.acceptKnownDefects];
    this.images = podSpecImages(podSpec);
    for (const img of this.images) {
      assertPinned(this.node.path, `SandboxTemplate ${this.name} ${img.where}`, img.image, ctx.requireDigests);
      const defect = knownDefectOf(img.image);
      if (defect !== undefined && !p.acceptKnownDefects.includes(defect.id))
        throw new KnownDefectiveImageError(
          this.node.path,
          `SandboxTemplate ${this.name} ${img.where}`,
          img.image,
          defect,
        );
    }
    this.secretUses = secretUses(podSpec);
    this.resources = podResources(podSpec);

    const containers = (podSpec['containers'] as Json[]).map((c) => String(c['name']));
    const first = (podSpec['containers'] as Json[])[0]!;
    const firstPorts = Array.isArray(first['ports'])
      ? (first['ports'] as Json[]).map((port) => Number(port['containerPort']))
      : [];
    this.runtime = p.runtime ?? { kind: 'custom', container: String(first['name']), ports: firstPorts };
    if (!containers.includes(this.runtime.container)) {
      throw new ConstructPropsError(this.node.path, 'SandboxTemplate', [
        {
          prop: 'runtime.container',
          reason: 'UnknownContainer',
          value: this.runtime.container,
          message: `runtime.container: ${JSON.stringify(this.runtime.container)} is not a container of podSpec (${containers.join(', ')})`,
        },
      ]);
    }
    if (this.runtime.ports.length === 0) {
      throw new ConstructPropsError(this.node.path, 'SandboxTemplate', [
        {
          prop: 'runtime.ports',
          reason: 'NoRuntimePorts',
          message: 'runtime.ports: none given and the first container declares no ports; set runtime explicitly',
        },
      ]);
    }
    const bind = templateRuntimeBind(this.node.path, this.release.facts.tag, podSpec, this.runtime);
    if (bind !== undefined) this.runtimeBind = bind;
    const execLimit = templateExecLimit(this.release.facts.tag, podSpec, this.runtime);
    if (execLimit !== undefined) this.runtimeExecLimit = execLimit;
    addReadinessProbe(this.node.path, podSpec, this.runtime, bind, p.runtimeReadinessProbe);
    if (p.networkPolicy !== undefined) {
      this.customRules = plain({
        ...(p.networkPolicy.ingress !== undefined
          ? {
              ingress: (p.networkPolicy.ingress as k8s.NetworkPolicyIngressRule[]).map(
                (r) => k8s.toJson_NetworkPolicyIngressRule(r) as Json,
              ),
            }
          : {}),
        ...(p.networkPolicy.egress !== undefined
          ? {
              egress: (p.networkPolicy.egress as k8s.NetworkPolicyEgressRule[]).map(
                (r) => k8s.toJson_NetworkPolicyEgressRule(r) as Json,
              ),
            }
          : {}),
      });
    }

    this.podLabels = { ...(p.podMetadata?.labels ?? {}), [LABEL_TEMPLATE]: this.name, [LABEL_ENVIRONMENT]: ctx.name };
    const fixed = {
      podTemplate: {
        metadata: {
          labels: { ...this.podLabels },
          ...(p.podMetadata?.annotations !== undefined ? { annotations: { ...p.podMetadata.annotations } } : {}),
        },
        spec: podSpec,
      },
      envVarsInjectionPolicy: p.envVarsInjectionPolicy,
      ...(p.service !== undefined ? { service: p.service } : {}),
    } satisfies Omit<SharedSpecOf<'SandboxTemplate'>, keyof NetworkSpec>;
    addProblemCheck(this, () => thrownErrors(() => this.networkPolicyManagement));
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: apiVersionFor(ctx.release, 'SandboxTemplate'),
      kind: 'SandboxTemplate',
      metadata: { name: this.name, namespace: this.namespace, labels: { [LABEL_ENVIRONMENT]: ctx.name } },
      spec: lazy((): Json => ({ ...fixed, ...this.networkSpec() }) satisfies SharedSpecOf<'SandboxTemplate'>),
    });
  }

  /** The pod spec as written, after escape hatches such as `apiObject.addJsonPatch` (the descriptor and capacity read it). */
  writtenPodSpec(): Record<string, unknown> {
    return writtenPodSpec(writtenJson(this.apiObject))?.spec ?? {};
  }

  /** Container images as written, in declared order. */
  writtenImages(): ContainerImage[] {
    return podSpecImages(this.writtenPodSpec());
  }

  /** Requests/limits of one sandbox pod as written, without RuntimeClass overhead. */
  writtenResources(): PodResources {
    return podResources(this.writtenPodSpec());
  }

  /** Called by SandboxNetworkPolicy: the environment declares its own policy `policyName` for this template's pods. */
  registerOwnPolicy(policyName: string): void {
    this.policies.push(policyName);
  }

  /** Whether the template gives custom rules for the controller-managed policy (they replace the controller's router peer). */
  get hasCustomManagedRules(): boolean {
    return this.customRules?.ingress !== undefined;
  }

  /** Names of the environment's own policies for this template's pods, in declaration order. */
  get ownPolicies(): readonly string[] {
    return [...this.policies];
  }

  /**
   * The effective `networkPolicyManagement`.
   * @throws ConflictError when own policies exist and the template also asks for a Managed policy or custom managed rules
   *   (NetworkPolicies only add up, so the controller's policy would re-open what ours close: case netpol-effective-coverage).
   */
  get networkPolicyManagement(): NetworkPolicyManagement {
    if (this.policies.length === 0) return this.explicitManagement ?? 'Managed';
    const clash =
      this.explicitManagement === 'Managed'
        ? 'networkPolicyManagement: Managed'
        : this.customRules !== undefined
          ? 'custom networkPolicy rules'
          : undefined;
    if (clash !== undefined) {
      throw new ConflictError(
        this.node.path,
        `template ${this.namespace}/${this.name} sets ${clash} while the environment declares its own NetworkPolicies for its pods (${this.policies.join(', ')}); both would select the pods and NetworkPolicies only add up`,
        'pick one: remove the SandboxNetworkPolicy, or drop the template setting (it then becomes Unmanaged)',
        this.policies,
      );
    }
    return 'Unmanaged';
  }

  private networkSpec(): NetworkSpec {
    const management = this.networkPolicyManagement;
    return {
      networkPolicyManagement: management,
      ...(management === 'Managed' && this.customRules !== undefined ? { networkPolicy: this.customRules } : {}),
    };
  }
}
brand(SandboxTemplate, 'SandboxTemplate');
