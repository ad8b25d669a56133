/**
 * AgentEnvironment: the cdk8s Chart that ties one environment together — the pinned install, runtime classes,
 * templates, warm pools, claims, router and network policies — and describes itself for the verifier
 * ({@link EnvironmentDescriptor}, also written as ConfigMap `agentplane-environment`).
 * The chart has no namespace of its own, so nothing is stamped onto cluster-scoped objects (case
 * chart-namespace-cluster-scoped).
 *
 * Complete in the construct tree: Namespaces and the descriptor ConfigMap exist from construction on, the checks run as
 * cdk8s validations and {@link AgentEnvironment.toJson} writes the objects as `agentplane synth` does (render.ts), so
 * `app.synth()`, `cdk8s synth` and `Testing.synth()` give the same objects.
 */
import { routerLimitWarnings, type RouterLimitWarning } from './exec-limits.js';
import { Chart, YamlOutputType } from './cdk8s.js';
import { lazy } from './lazy.js';
import { k8s } from './k8s.js';
import type { Construct } from 'constructs';
import { brand, isCdk8sApp, sameCopies } from './package-copies.js';
import { z } from 'zod';
import { reconcileLock, type LoadedRelease } from '../releases/index.js';
import { resolve } from 'node:path';
import { environmentsLock } from './lock.js';
import { SandboxClaim, type SandboxClaimProps } from './claim.js';
import { SandboxClientDecl, type SandboxClientProps } from './client.js';
import { apiVersionFor, provideContext } from './context.js';
import {
  DESCRIPTOR_CONFIGMAP,
  DESCRIPTOR_KEY,
  descriptorJson,
  EnvironmentDescriptorSchema,
  type EnvironmentDescriptor,
} from './descriptor.js';
import { ConstructError, ConstructPropsError } from './errors.js';
import { AgentSandboxInstall, type AgentSandboxInstallProps } from './install.js';
import { isPlainObject, withSortedKeys } from '../model/objects.js';
import { LIFECYCLE_PROP_SCHEMA, type ClaimLifecycle } from './lifetime.js';
import { LABEL_ENVIRONMENT, LABEL_MANAGED_BY, LABEL_TEMPLATE, MANAGED_BY } from './metadata.js';
import { SandboxNetworkPolicy, type SandboxNetworkPolicyProps } from './network-policy.js';
import { setPhase } from './phases.js';
import { parseProps } from './props.js';
import { childProblems, problem, problemOf, validationLine, type EnvironmentProblem } from './problems.js';
import { renderObjects, type Rendering } from './render.js';
import {
  describeDuplicate,
  describeOversize,
  describeViolation,
  duplicateObjects,
  schemaViolations,
  tooLargeObjects,
  type DuplicateObject,
  type ObjectSchemaViolation,
  type OversizeObject,
} from './output-checks.js';
import { routerOptionProblems, SandboxRouter, type SandboxRouterProps } from './router.js';
import type { Json } from './kube-object.js';
import { SandboxRuntimeClass, type SandboxRuntimeClassProps } from './runtime-class.js';
import { DNS_LABEL } from '../model/names.js';
import { OUTPUT_RULES } from '../model/output-rules.js';
import { familyConverts, SANDBOX_KINDS } from '../model/releases.js';
import { SUPPORT_STATES, type RequiredState } from '../model/states.js';
import { SandboxTemplate, type SandboxTemplateProps } from './template.js';
import { SandboxWarmPool, type SandboxWarmPoolProps } from './warm-pool.js';
import { VerifierJob, type VerifierJobProps, type VerifierJobScope } from './verifier-job.js';
import type { ApiObject } from './cdk8s.js';
import { podSpecImages } from './images.js';
import {
  acknowledges,
  describeOutputRuleViolation,
  outputRuleViolations,
  writtenJson,
  writtenPodSpec,
  type Acknowledgement,
  type AcknowledgementInput,
  type OutputRuleViolation,
} from './written-rules.js';
import { reachabilityViolations } from './written-reachability.js';
import { capacityRefusals, capacityViolations } from './written-capacity.js';

/** Props of {@link AgentEnvironment}. */
export interface AgentEnvironmentProps {
  /** The verified release (from `loadRelease`). Required. */
  readonly release: LoadedRelease;
  /**
   * Environment name: dist folder, label value, descriptor name (DNS label).
   * @default - the construct id
   */
  readonly name?: string;
  /**
   * Install options, or `false` when the controller is installed by someone else.
   * @default {} (install with extensions)
   */
  readonly install?: Omit<AgentSandboxInstallProps, 'release' | 'requireDigests'> | false;
  /**
   * Namespace for templates, pools and claims that name none, and for the descriptor ConfigMap.
   * @default 'agent-sandboxes'
   */
  readonly defaultNamespace?: string;
  /**
   * Write a Namespace object for every namespace the environment uses (except the controller's).
   * @default true
   */
  readonly createNamespaces?: boolean;
  /**
   * Refuse images without a digest.
   * @default false (upstream records no digests for its images)
   */
  readonly requireDigests?: boolean;
  /**
   * Overrides of the required state per capability, e.g. `{ 'runtime-exec': 'configured' }`.
   * @default - per capability, see {@link AgentEnvironment.descriptor}
   */
  readonly requiredStates?: Readonly<Record<string, RequiredState>>;
  /**
   * Lifecycle of every claim that sets none (e.g. `{ ttlSecondsAfterFinished: 3600 }`), or `'unbounded'` to let such
   * claims live until deleted.
   * @default - none, so a claim without `lifecycle` fails synthesis (case warm-claim-immortal)
   */
  readonly claimLifecycle?: ClaimLifecycle | 'unbounded';
  /**
   * The lock file `app.synth()` (and so `cdk8s synth`) checks as `agentplane synth` does: written when absent, and a
   * difference (an image, the release, an acknowledgement) fails synthesis with LockMismatchError. A relative path is
   * resolved against the working directory; the environments of one app naming the same file share it. `false`: not
   * checked. `Testing.synth()` writes no output and does not check it; `agentplane synth` checks its own (`--lock`).
   * @default 'agentplane.lock.json'
   */
  readonly lockFile?: string | false;
}

const PropsSchema = z
  .object({
    release: z.custom<LoadedRelease>(
      (v) => isPlainObject(v) && 'facts' in v && 'objects' in v,
      'must be a LoadedRelease from loadRelease()',
    ),
    name: z.string().regex(DNS_LABEL, 'must be a DNS label').max(63).optional(),
    install: z.union([z.literal(false), z.record(z.string(), z.unknown())]).default({}),
    defaultNamespace: z.string().regex(DNS_LABEL, 'must be a DNS label').max(63).default('agent-sandboxes'),
    createNamespaces: z.boolean().default(true),
    requireDigests: z.boolean().default(false),
    requiredStates: z.record(z.string(), z.enum(SUPPORT_STATES)).default({}),
    claimLifecycle: LIFECYCLE_PROP_SCHEMA.optional(),
    lockFile: z.union([z.literal(false), z.string().min(1)]).default('agentplane.lock.json'),
  })
  .strict();

export { DESCRIPTOR_CONFIGMAP, DESCRIPTOR_KEY };

/** What stands between an environment and its output; every list empty when it can be written. */
export interface EnvironmentCheck {
  /** Environment-level problems and objects that could not be rendered. */
  readonly problems: readonly EnvironmentProblem[];
  /** Objects written more than once. */
  readonly duplicates: readonly DuplicateObject[];
  /** Fields of Agent Sandbox objects the pinned CRD schema refuses. */
  readonly violations: readonly ObjectSchemaViolation[];
  /** Objects over the API server's object limit, which no apply method lifts. */
  readonly tooLarge: readonly OversizeObject[];
  /** Rules the written objects break (after escape hatches) that no acknowledgement covers. */
  readonly ruleViolations: readonly OutputRuleViolation[];
  readonly rendering: Rendering;
  /** What does not stop synthesis but the person deploying must know (e.g. a router limit below a runtime's). */
  readonly warnings: readonly RouterLimitWarning[];
}

/** The output checks' findings, a line each, as cdk8s validations report them. */
function outputFindings(c: EnvironmentCheck): string[] {
  return [
    ...c.duplicates.map(describeDuplicate),
    ...c.violations.map(describeViolation),
    ...c.tooLarge.map(describeOversize),
    ...c.ruleViolations.map(describeOutputRuleViolation),
  ];
}

/** The image of container `container` (else the first) of the Deployment among `objects`, as written. */
function writtenDeploymentImage(
  objects: readonly ApiObject[],
  name: string | undefined,
  container: string,
): string | undefined {
  const deployment = objects.find((o) => o.kind === 'Deployment' && (name === undefined || o.name === name));
  if (deployment === undefined) return undefined;
  const images = podSpecImages(writtenPodSpec(writtenJson(deployment))?.spec ?? {});
  return (images.find((i) => i.container === container) ?? images[0])?.image;
}

function byNsName<T extends { namespace: string; name: string }>(a: T, b: T): number {
  return a.namespace === b.namespace
    ? a.name < b.name
      ? -1
      : a.name > b.name
        ? 1
        : 0
    : a.namespace < b.namespace
      ? -1
      : 1;
}

/**
 * One environment. Add parts with the `add*` methods (or `new X(env, ...)`); synthesis (`synthesizeEnvironment`) seals it.
 * @throws ConstructPropsError on invalid props; errors of the install construct.
 */
export class AgentEnvironment extends Chart {
  /** Environment name. */
  readonly name: string;
  readonly release: LoadedRelease;
  readonly defaultNamespace: string;
  readonly requireDigests: boolean;
  /** The install, or `undefined` with `install: false`. */
  readonly install?: AgentSandboxInstall;
  private readonly createNamespaces: boolean;
  private readonly requiredStates: Readonly<Record<string, RequiredState>>;
  private readonly namespaces = new Set<string>();
  private readonly acks: Acknowledgement[] = [];
  /** Each `addVerifierJob` call: its id and props, and the scope (as JSON) its Job was last built for. */
  private readonly verifiers: Array<{ id: string; props: VerifierJobProps; builtFor: string }> = [];
  private sealed = false;
  /** The lock file `app.synth()` checks, or `false`. */
  readonly lockFile: string | false;
  /** Set by this chart's validation, which cdk8s runs before writing output (not in `Testing.synth()`). */
  private lockDue = false;

  constructor(scope: Construct, id: string, props: AgentEnvironmentProps) {
    super(sameCopies(scope, id), id, { disableResourceNameHashes: true });
    const p = parseProps(this, 'AgentEnvironment', PropsSchema, props);
    this.name = p.name ?? id;
    if (!DNS_LABEL.test(this.name))
      throw new ConstructError(
        this.node.path,
        `environment name ${JSON.stringify(this.name)} is not a DNS label`,
        'pass name explicitly (lowercase letters, digits, -)',
      );
    this.release = p.release;
    this.defaultNamespace = p.defaultNamespace;
    this.requireDigests = p.requireDigests;
    this.createNamespaces = p.createNamespaces;
    this.requiredStates = p.requiredStates;
    this.lockFile = p.lockFile;
    provideContext(this, {
      name: this.name,
      release: this.release,
      requireDigests: this.requireDigests,
      defaultNamespace: this.defaultNamespace,
      useNamespace: (ns) => this.useNamespace(ns),
      assertOpen: (part) => {
        if (!this.sealed) return;
        part.node.scope?.node.tryRemoveChild(part.node.id);
        throw this.sealedError(part.node.path);
      },
      ...(p.claimLifecycle !== undefined ? { claimLifecycle: p.claimLifecycle } : {}),
    });
    if (p.install !== false) {
      this.install = new AgentSandboxInstall(this, 'install', {
        ...(props.install === false ? {} : (props.install ?? {})),
        release: this.release,
        requireDigests: this.requireDigests,
      });
      for (const ns of this.install.rbacNamespaces) this.useNamespace(ns);
    }
    this.useNamespace(this.defaultNamespace);
    const cm = new k8s.KubeConfigMap(this, 'descriptor', {
      metadata: {
        name: DESCRIPTOR_CONFIGMAP,
        namespace: this.defaultNamespace,
        labels: { [LABEL_ENVIRONMENT]: this.name, [LABEL_MANAGED_BY]: MANAGED_BY },
      },
      data: lazy(() => ({ [DESCRIPTOR_KEY]: descriptorJson(this.descriptor()) })),
    });
    setPhase(cm, 'environment');
    this.node.addValidation({
      validate: () => {
        this.lockDue = true;
        const c = this.check();
        return [...c.problems.map(validationLine), ...outputFindings(c)];
      },
    });
  }

  /** Writes the Namespace of `ns` once, unless namespaces are not created or it is the controller's (the install writes that one). */
  private useNamespace(ns: string): void {
    if (!this.createNamespaces || this.namespaces.has(ns) || ns === this.install?.namespace) return;
    this.namespaces.add(ns);
    new k8s.KubeNamespace(this, `namespace-${ns}`, {
      metadata: { name: ns, labels: { [LABEL_ENVIRONMENT]: this.name, [LABEL_MANAGED_BY]: MANAGED_BY } },
    });
  }

  /** Adds a RuntimeClass (gVisor, Kata or a named handler) this environment's templates can run under; `id` is unique per environment. */
  addRuntimeClass(id: string, props: SandboxRuntimeClassProps): SandboxRuntimeClass {
    this.assertOpen(id);
    return new SandboxRuntimeClass(this, id, props);
  }

  /** Adds a SandboxTemplate in the environment's namespace (or `props.namespace`); refused once the environment is sealed. */
  addTemplate(id: string, props: SandboxTemplateProps): SandboxTemplate {
    this.assertOpen(id);
    return new SandboxTemplate(this, id, props);
  }

  /** Adds a SandboxWarmPool that keeps `replicas` sandboxes of a template started, claimed on demand. */
  addWarmPool(id: string, props: SandboxWarmPoolProps): SandboxWarmPool {
    this.assertOpen(id);
    return new SandboxWarmPool(this, id, props);
  }

  /** Adds a SandboxClaim: a standing session from a warm pool (v0.5 and v1.0) or a template (v0.4). */
  addClaim(id: string, props: SandboxClaimProps): SandboxClaim {
    this.assertOpen(id);
    return new SandboxClaim(this, id, props);
  }

  /** Adds the sandbox router (Deployment, Service, RBAC, its NetworkPolicy): the HTTP path applications reach runtimes by. */
  addRouter(id: string, props: SandboxRouterProps): SandboxRouter {
    this.assertOpen(id);
    return new SandboxRouter(this, id, props);
  }

  /** Adds a NetworkPolicy for the environment's sandbox pods; templates it selects become `networkPolicyManagement: Unmanaged`. */
  addNetworkPolicy(id: string, props: SandboxNetworkPolicyProps): SandboxNetworkPolicy {
    this.assertOpen(id);
    return new SandboxNetworkPolicy(this, id, props);
  }

  /** Declares the application's client SDK and mode; synthesis refuses an environment that client cannot use (ClientIncompatibleError). */
  addClient(props: SandboxClientProps, id = `client-${props.sdk}-${props.mode}`): SandboxClientDecl {
    this.assertOpen(id);
    return new SandboxClientDecl(this, id, props);
  }

  /**
   * The in-cluster verifier of this environment (a Job under its own VerifierAccess identity). It may be added at any
   * point: it is built here (so its props are checked at this call), and built again from the same props when the
   * environment gains a namespace, template or router later ({@link AgentEnvironment.seal}, {@link AgentEnvironment.check}),
   * so its identity covers every namespace and its transport fits every template. The returned Job is the one built
   * here; the written one is in the output.
   * @throws ConstructPropsError, UnpinnedImageError, VerifierDeliveryError on bad props.
   */
  addVerifierJob(id: string, props: VerifierJobProps): VerifierJob {
    this.assertOpen(id);
    const scope = this.verifierScope();
    const job = new VerifierJob(this, id, scope, props);
    this.verifiers.push({ id, props, builtFor: JSON.stringify(scope) });
    return job;
  }

  /** What a VerifierJob is built for: the environment's namespaces, templates and router as they are now. */
  private verifierScope(): VerifierJobScope {
    const sandboxNamespaces = [
      ...new Set([
        this.defaultNamespace,
        ...this.templates.map((t) => t.namespace),
        ...this.warmPools.map((w) => w.namespace),
        ...this.claims.map((c) => c.namespace),
      ]),
    ].sort();
    const r = this.routers[0];
    return {
      name: this.name,
      defaultNamespace: this.defaultNamespace,
      requireDigests: this.requireDigests,
      sandboxNamespaces,
      templates: this.templates.map((t) => ({
        namespace: t.namespace,
        name: t.name,
        managed: t.networkPolicyManagement === 'Managed',
        runtime: t.runtime.kind,
        ports: [...t.runtime.ports],
      })),
      suspendResume: this.requiredStates['suspend-resume'] !== undefined,
      ...(this.install ? { controllerNamespace: this.install.namespace } : {}),
      ...(r === undefined
        ? {}
        : {
            router: {
              namespace: r.namespace,
              serviceName: r.serviceName,
              port: r.port,
              authorizationMode: r.authorizationMode,
            },
          }),
      descriptorText: () => descriptorJson(this.descriptor()),
    };
  }

  /** Builds each VerifierJob again whose environment changed since it was built, so where `addVerifierJob` was called does not matter. */
  private refreshVerifierJobs(): void {
    for (const v of this.verifiers) {
      const scope = this.verifierScope();
      const key = JSON.stringify(scope);
      if (key === v.builtFor) continue;
      this.node.tryRemoveChild(v.id);
      new VerifierJob(this, v.id, scope, v.props);
      v.builtFor = key;
    }
  }

  /**
   * Accepts that the object written at `path` (an ApiObject's construct path, or a construct above it) breaks `rule`
   * after an escape hatch such as `addJsonPatch`, for the `reason` given. The acknowledgement is written into the
   * descriptor and the lock; one that covers no written object fails synthesis (`UnusedAcknowledgement`).
   * @throws ConstructPropsError on an unknown rule or an empty reason; ConstructError after synthesis.
   */
  acknowledge(ack: AcknowledgementInput): Acknowledgement {
    if (this.sealed) throw this.sealedError(this.node.path);
    const path = typeof ack.path === 'string' ? ack.path : ack.path.node.path;
    const problems = [
      ...((OUTPUT_RULES as readonly string[]).includes(ack.rule)
        ? []
        : [
            {
              prop: 'rule',
              reason: 'UnknownRule' as const,
              value: ack.rule,
              message: `rule: ${JSON.stringify(ack.rule)} is not one of ${OUTPUT_RULES.join(', ')}`,
              allowed: OUTPUT_RULES,
            },
          ]),
      ...(typeof ack.reason === 'string' && ack.reason.trim() !== ''
        ? []
        : [{ prop: 'reason', reason: 'Required' as const, message: 'reason: say why the rule may be broken here' }]),
      ...(path === ''
        ? [{ prop: 'path', reason: 'Required' as const, message: 'path: name the ApiObject or construct' }]
        : []),
    ];
    if (problems.length > 0) throw new ConstructPropsError(this.node.path, 'Acknowledgement', problems);
    const recorded = { rule: ack.rule, path, reason: ack.reason };
    this.acks.push(recorded);
    return recorded;
  }

  /** The acknowledged exceptions to the output rules, sorted by path and rule. */
  get acknowledgements(): readonly Acknowledgement[] {
    return [...this.acks].sort((a, b) =>
      a.path === b.path ? (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0) : a.path < b.path ? -1 : 1,
    );
  }

  get runtimeClasses(): SandboxRuntimeClass[] {
    return this.all(SandboxRuntimeClass);
  }
  get templates(): SandboxTemplate[] {
    return this.all(SandboxTemplate);
  }
  get warmPools(): SandboxWarmPool[] {
    return this.all(SandboxWarmPool);
  }
  get claims(): SandboxClaim[] {
    return this.all(SandboxClaim);
  }
  get routers(): SandboxRouter[] {
    return this.all(SandboxRouter);
  }
  get networkPolicies(): SandboxNetworkPolicy[] {
    return this.all(SandboxNetworkPolicy);
  }
  get clients(): SandboxClientDecl[] {
    return this.all(SandboxClientDecl);
  }

  /** Builds the VerifierJobs for the environment as it is, then refuses further parts (synthesis calls it). Idempotent. */
  seal(): void {
    if (!this.sealed) this.refreshVerifierJobs();
    this.sealed = true;
    this.checkClients();
  }

  /** @throws ClientIncompatibleError when a declared client cannot use the environment as declared. */
  private checkClients(): void {
    const router = this.routers[0];
    for (const client of this.clients)
      client.check({ warmPools: this.warmPools, ...(router !== undefined ? { router } : {}) });
  }

  /**
   * Everything that keeps this environment from being written, found on its rendered objects (JsonPatches applied):
   * more than one router, descriptor conflicts and missing references, render errors, pools the declared nodes of
   * their RuntimeClass cannot hold, duplicate objects, fields the pinned CRD schemas refuse. Runs as this chart's cdk8s validation; `agentplane synth` reads it for typed errors.
   */
  check(): EnvironmentCheck {
    const problems: EnvironmentProblem[] = [];
    try {
      this.refreshVerifierJobs();
    } catch (err) {
      problems.push(problemOf(err, this.node.path));
    }
    const routers = this.routers;
    if (routers.length > 1)
      problems.push(
        problem(
          this.node.path,
          'MultipleRouters',
          `environment has ${routers.length} routers (${routers.map((r) => r.node.path).join(', ')}); declare one SandboxRouter per environment`,
        ),
      );
    const apiServerBlocked = routers.find((r) => r.callsApiServer && r.apiServer.length === 0);
    if (apiServerBlocked !== undefined && this.networkIsolationRequired === 'verified')
      problems.push(
        problem(
          apiServerBlocked.node.path,
          'RouterApiServerNotAdmitted',
          `the router calls the API server (${apiServerBlocked.authorizationMode === 'tokenreview' ? 'tokenreview' : 'its Pod-IP cache'}) and network-isolation is required verified, so its NetworkPolicy is enforced; that policy admits the API server only as a pod of namespace default on 443/6443 (sandbox-router/deploy/networkpolicy.yaml@${this.release.facts.tag}), and the API server's endpoints are no pods there: its cache never syncs and it never becomes ready. Set the router's apiServer to the endpoints of Service default/kubernetes (kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes)`,
        ),
      );
    // Each environment owns its descriptor, its lock entries (`<name>/<role>`) and dist/<name>/, within one app.
    const namesake = this.node.root.node
      .findAll()
      .filter((c) => c instanceof AgentEnvironment)
      .find((c) => c !== this && (c as AgentEnvironment).name === this.name);
    if (namesake !== undefined)
      problems.push(
        problem(
          this.node.path,
          'EnvironmentNameClash',
          `environment name ${JSON.stringify(this.name)} is also used by ${namesake.node.path} in the same app; give every environment a unique name`,
        ),
      );
    const app = isCdk8sApp(this.node.root) ? this.node.root : undefined;
    if (app?.yamlOutputType === YamlOutputType.FOLDER_PER_CHART_FILE_PER_RESOURCE) {
      problems.push(
        problem(
          this.node.path,
          'UnsupportedOutputType',
          "the app's yamlOutputType FOLDER_PER_CHART_FILE_PER_RESOURCE writes objects without the environment's rendering (sync waves, cluster scope); use FILE_PER_CHART, FILE_PER_APP or FILE_PER_RESOURCE",
        ),
      );
    }
    try {
      this.checkClients();
      this.descriptor();
    } catch (err) {
      problems.push(problemOf(err, this.node.path));
    }
    const rendering = renderObjects(this, this.release);
    for (const p of rendering.problems) if (!problems.some((q) => q.message === p.message)) problems.push(p);
    for (const r of routers)
      for (const o of rendering.objects)
        if (o.object.kind === 'Deployment' && o.constructPath.startsWith(`${r.node.path}/`))
          for (const err of routerOptionProblems(r, o.object as unknown as Json))
            problems.push(problemOf(err, r.node.path));
    const capacity = { runtimeClasses: this.runtimeClasses, warmPools: this.warmPools, claims: this.claims };
    for (const err of capacityRefusals(capacity)) problems.push(problem(err.path, err.reason, err.detail));
    const broken = [
      ...outputRuleViolations(
        rendering.objects,
        this.requireDigests,
        (path) => this.templates.find((t) => t.apiObject.node.path === path)?.acceptedDefects ?? [],
      ),
      ...reachabilityViolations(
        { environment: this.name, templates: this.templates, routers, policies: this.networkPolicies },
        rendering.objects,
      ),
      ...capacityViolations(capacity, rendering.objects),
    ];
    for (const a of this.acknowledgements)
      if (!broken.some((v) => acknowledges(a, v)))
        problems.push(
          problem(
            a.path,
            'UnusedAcknowledgement',
            `acknowledgement of ${a.rule} covers no written object (${JSON.stringify(a.reason)}); remove it`,
          ),
        );
    return {
      problems,
      duplicates: duplicateObjects(rendering.objects),
      ruleViolations: broken.filter((v) => !this.acks.some((a) => acknowledges(a, v))),
      violations: schemaViolations(rendering.objects, this.release),
      tooLarge: tooLargeObjects(rendering.objects),
      rendering,
      warnings: routers.flatMap((r) =>
        routerLimitWarnings(
          r,
          this.templates.map((t) => ({
            namespace: t.namespace,
            name: t.name,
            ...(t.runtimeExecLimit ? { execLimit: t.runtimeExecLimit } : {}),
          })),
        ),
      ),
    };
  }

  /**
   * The environment's objects as cdk8s writes them (`app.synth()`, `Testing.synth()`): validated like
   * `agentplane synth` validates them, then rendered the same way (render.ts), keys sorted at every level as
   * `agentplane synth` writes them (cdk8s sorts an ApiObject's keys, but rendering adds annotations after that).
   * @throws ConstructError listing every problem when a construct validation or {@link AgentEnvironment.check} fails.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the signature of cdk8s's Chart.toJson
  override toJson(): any[] {
    const c = this.check();
    const problems = [...[...childProblems(this), ...c.problems].map(validationLine), ...outputFindings(c)];
    if (problems.length > 0)
      throw new ConstructError(
        this.node.path,
        `environment ${this.name} cannot be synthesized:\n  ${problems.join('\n  ')}`,
        'fix the constructs named above',
      );
    if (this.lockDue) {
      this.lockDue = false;
      this.checkLock();
    }
    return c.rendering.objects.map((o) => withSortedKeys(o.object));
  }

  /** The state required of `network-isolation`: declared, else `verified` with own policies (as in the descriptor). */
  private get networkIsolationRequired(): RequiredState {
    return this.requiredStates['network-isolation'] ?? (this.networkPolicies.length > 0 ? 'verified' : 'configured');
  }

  /**
   * Compares {@link AgentEnvironment.lockFile} with the lock of every environment of this app that shares it (from
   * their descriptors, read from the written objects), writing it when absent.
   * @throws LockMismatchError when they differ; ConstructError (`LockMixedReleases`) when they pin different releases.
   */
  private checkLock(): void {
    if (this.lockFile === false) return;
    const path = resolve(this.lockFile);
    const sharing = this.node.root.node
      .findAll()
      .filter((c): c is AgentEnvironment => c instanceof AgentEnvironment)
      .filter((e) => e.lockFile !== false && resolve(e.lockFile) === path);
    const tags = [...new Set(sharing.map((e) => e.release.facts.tag))];
    if (tags.length > 1)
      throw new ConstructError(
        this.node.path,
        `the environments ${sharing.map((e) => e.name).join(', ')} pin different releases (${tags.join(', ')}) but share the lock file ${path}`,
        'give each release its own lockFile',
        'LockMixedReleases',
      );
    reconcileLock(
      path,
      environmentsLock(
        this.release,
        sharing.map((e) => e.descriptor()),
      ),
      false,
      `if the change is intended, delete ${path} and synthesize again (it is written anew), then commit it`,
    );
  }

  /**
   * The descriptor of this environment, validated against the {@link EnvironmentDescriptor} schema. Lists are sorted by
   * namespace/name. Default required states: `sandbox-api` verified; `extensions-api` verified (with extensions);
   * `controller` configured; `conversion` configured (v0.5.x); `runtime-class/<name>` verified;
   * `template/<ns>/<name>` configured; `warm-pool/<ns>/<name>` verified when replicas > 0 else configured; `router` verified;
   * `runtime-exec` verified (with templates); `network-isolation` verified with own policies, else configured.
   * @throws ConflictError / MissingReferenceError from templates and claims.
   */
  descriptor(): EnvironmentDescriptor {
    const facts = this.release.facts;
    const templates = this.templates.sort(byNsName);
    const pools = this.warmPools.sort(byNsName);
    const claims = this.claims.sort(byNsName);
    const policies = this.networkPolicies.sort(byNsName);
    const router = this.routers[0];
    // Images and replicas as written (escape hatches applied), so the descriptor and the lock agree with the YAML.
    const controllerImage =
      this.install === undefined
        ? undefined
        : (writtenDeploymentImage(this.install.objects, 'agent-sandbox-controller', 'agent-sandbox-controller') ??
          this.install.controllerImage);
    const routerImage =
      router === undefined
        ? undefined
        : (writtenDeploymentImage(router.objects, undefined, 'sandbox-router') ?? router.image);
    const templateImages = new Map(templates.map((t) => [t, t.writtenImages()]));
    const images: Record<string, string> = {};
    if (controllerImage !== undefined) images['controller'] = controllerImage;
    if (routerImage !== undefined) images['router'] = routerImage;
    for (const t of templates)
      for (const img of templateImages.get(t)!)
        images[`template/${t.namespace}/${t.name}/${img.container}`] = img.image;

    const caps: Array<[string, RequiredState]> = [['sandbox-api', 'verified']];
    if (this.install?.extensions !== false) caps.push(['extensions-api', 'verified']);
    caps.push(['controller', 'configured']);
    if (familyConverts(facts.family)) caps.push(['conversion', 'configured']);
    for (const rc of [...this.runtimeClasses].sort((a, b) => (a.name < b.name ? -1 : 1)))
      caps.push([`runtime-class/${rc.name}`, 'verified']);
    for (const t of templates) caps.push([`template/${t.namespace}/${t.name}`, 'configured']);
    const replicas = new Map(pools.map((pool) => [pool, pool.writtenReplicas()]));
    for (const pool of pools)
      caps.push([`warm-pool/${pool.namespace}/${pool.name}`, replicas.get(pool)! > 0 ? 'verified' : 'configured']);
    if (router !== undefined) caps.push(['router', 'verified']);
    if (templates.length > 0) caps.push(['runtime-exec', 'verified']);
    // A declared client reads and writes files: its file API is part of what must work.
    if (this.clients.length > 0) caps.push(['runtime-files', 'verified']);
    caps.push(['network-isolation', this.networkIsolationRequired]);
    const capabilities = caps.map(([capability, required]) => ({
      capability,
      required: this.requiredStates[capability] ?? required,
    }));
    for (const [capability, required] of Object.entries(this.requiredStates).sort()) {
      if (!caps.some(([c]) => c === capability)) capabilities.push({ capability, required });
    }

    const apiVersions: Record<string, string> = {};
    for (const kind of SANDBOX_KINDS) apiVersions[kind] = apiVersionFor(this.release, kind);

    return EnvironmentDescriptorSchema.parse({
      apiVersion: 'agentplane.dev/v1alpha1',
      kind: 'EnvironmentDescriptor',
      name: this.name,
      release: { tag: facts.tag, commit: facts.commit, family: facts.family, apiVersions },
      install:
        this.install === undefined
          ? null
          : {
              namespace: this.install.namespace,
              controllerDeployment: 'agent-sandbox-controller',
              controllerImage: controllerImage ?? this.install.controllerImage,
              extensions: this.install.extensions,
              certificates: this.install.certificates,
              serverSideApply: [...this.install.serverSideApply].sort(),
              ...(this.install.narrowedResources.length > 0
                ? {
                    rbacNarrowed: this.install.narrowedResources.map((n) => ({
                      resources: [...n.resources],
                      namespaces: [...n.namespaces],
                    })),
                  }
                : {}),
            },
      runtimeClasses: [...this.runtimeClasses]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((rc) => ({
          name: rc.name,
          handler: rc.handler,
          preset: rc.preset,
          overhead: rc.overhead === undefined ? null : { ...rc.overhead },
          scheduling:
            rc.scheduling === undefined
              ? null
              : {
                  nodeSelector: { ...rc.scheduling.nodeSelector },
                  tolerations: JSON.parse(JSON.stringify(rc.scheduling.tolerations ?? [])),
                },
          allNodes: rc.scheduling === undefined,
        })),
      templates: templates.map((t) => ({
        namespace: t.namespace,
        name: t.name,
        runtimeClassName: t.runtimeClass.name,
        networkPolicyManagement: t.networkPolicyManagement,
        podLabels: { ...t.podLabels },
        runtime: { kind: t.runtime.kind, container: t.runtime.container, ports: [...t.runtime.ports] },
        images: templateImages.get(t)!.map((i) => ({ container: i.container, image: i.image })),
      })),
      warmPools: pools.map((pool) => ({
        namespace: pool.namespace,
        name: pool.name,
        template: pool.template.name,
        replicas: replicas.get(pool)!,
        updateStrategy: pool.updateStrategy,
      })),
      claims: claims.map((c) => ({ namespace: c.namespace, name: c.name, warmPool: c.pool.name })),
      router:
        router === undefined
          ? null
          : {
              namespace: router.namespace,
              serviceName: router.serviceName,
              port: router.port,
              podLabels: { ...router.podLabels },
              image: routerImage ?? router.image,
              authorizationMode: router.authorizationMode,
              ...(router.acknowledgeUnauthenticated ? { acknowledgeUnauthenticated: true as const } : {}),
            },
      networkPolicies: policies.map((np) => ({
        namespace: np.namespace,
        name: np.name,
        template: np.template.name,
        podSelector: { [LABEL_TEMPLATE]: np.template.name, [LABEL_ENVIRONMENT]: this.name },
        ingressFrom: np.ingressFrom.map((peer) => ({ ...peer })),
        ingressPorts: [...np.ingressPorts],
        dns:
          np.dns === false
            ? null
            : {
                ...(np.dns.pods ? { pods: { ...np.dns.pods } } : {}),
                ...(np.dns.nodeLocalCache ? { nodeLocalCache: np.dns.nodeLocalCache } : {}),
                ...(np.dns.serviceIP ? { serviceIP: np.dns.serviceIP } : {}),
              },
        egress: np.egress.map(({ except, ports, ...e }) => ({
          ...e,
          ...(except !== undefined ? { except: [...except] } : {}),
          ports: ports.map((port) => ({ port: port.port, protocol: port.protocol ?? 'TCP' })),
        })),
      })),
      images,
      capabilities,
      ...(this.acks.length > 0 ? { acknowledgements: this.acknowledgements.map((a) => ({ ...a })) } : {}),
      ...(this.clients.length > 0
        ? {
            clients: this.clients
              .map((c) => ({
                sdk: c.sdk,
                version: c.version,
                mode: c.mode,
                runtimeApi: c.modeFacts.runtimeApi,
                via: c.modeFacts.via,
                ports: [...c.ports],
                headers: [...c.modeFacts.headers],
                warmPools: c
                  .pools({ warmPools: pools })
                  .map((pool) => ({ namespace: pool.namespace, name: pool.name })),
                ...(c.routerNamespace !== undefined ? { routerNamespace: c.routerNamespace } : {}),
              }))
              .sort((a, b) => (`${a.sdk}/${a.mode}` < `${b.sdk}/${b.mode}` ? -1 : 1)),
          }
        : {}),
    } satisfies EnvironmentDescriptor);
  }

  private all<T>(type: abstract new (...args: never[]) => T): T[] {
    return this.node.findAll().filter((c): c is T & Construct => c instanceof type) as T[];
  }

  /** The error for a part added at `path` after {@link AgentEnvironment.seal}. */
  private sealedError(path: string): ConstructError {
    return new ConstructError(
      path,
      `environment ${this.name} is already synthesized (sealed); a part added now would be missing from its output`,
      'add every part before calling synthesizeEnvironment',
      'EnvironmentSealed',
    );
  }

  /** Refuses an add after synthesis, and an id a sibling already holds (cdk8s would throw without a path). */
  private assertOpen(id: string): void {
    if (this.sealed) throw this.sealedError(`${this.node.path}/${id}`);
    const taken = this.node.tryFindChild(id);
    if (taken !== undefined)
      throw new ConstructError(
        `${this.node.path}/${id}`,
        `the id ${JSON.stringify(id)} is already used by ${taken.constructor.name} ${taken.node.path}`,
        'give each construct of the environment its own id (ids are the construct paths errors and the descriptor name)',
        'DuplicateConstructId',
      );
  }
}
brand(AgentEnvironment, 'AgentEnvironment');
