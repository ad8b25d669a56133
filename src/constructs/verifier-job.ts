/**
 * VerifierJob: `agentplane verify` run inside the cluster after every sync, as a Job under the environment's
 * {@link VerifierAccess} identity. It reads the environment's own descriptor from the mounted descriptor ConfigMap(s)
 * (whole or in parts, descriptor-parts.ts), reaches runtimes over the API server's port-forward (sandboxd v0.5.6 listens on
 * loopback only; port-forward reaches a v1.0.x sandboxd on the pod network too), `direct`ly or through the router (never `pods/exec`; `pods/portforward` only for port-forward), prints
 * the JSON report to its log and writes it to one ConfigMap; its exit code is the verify exit code.
 *
 * Delivery ({@link VerifierDelivery}, case hook-job-ttl-and-immutability): `argocd`, a PostSync hook deleted before the
 * next run's creation (so the last failed run stays) and never given a TTL (the TTL controller could delete it before
 * Argo CD records its result, argoproj/argo-cd#21055); `flux`, in the last apply phase (`verify`) under a name that carries
 * a hash of its pod template, so a changed template is a new Job rather than a rejected update of an immutable field;
 * `plain`, a fixed name and a TTL.
 */
import { ApiObject } from './cdk8s.js';
import { lazy } from './lazy.js';
import { createHash } from 'node:crypto';
import { Construct } from 'constructs';
import { sameCopies } from './package-copies.js';
import { z } from 'zod';
import { DNS_LABEL } from '../model/names.js';
import { DESCRIPTOR_MOUNT, REPORT_CONFIGMAP } from '../model/verifier-job.js';
import { DESCRIPTOR_CONFIGMAP, DESCRIPTOR_KEY, DESCRIPTOR_PART_KEY, descriptorPartName } from './descriptor.js';
import { DESCRIPTOR_PART_BYTES, descriptorConfigMaps } from './descriptor-parts.js';
import { ConstructError, ConstructPropsError, VerifierDeliveryError, type PropProblem } from './errors.js';
import { withSortedKeys } from '../model/objects.js';
import { assertPinned } from './images.js';
import { LABEL_ENVIRONMENT, LABEL_MANAGED_BY, LABEL_TEMPLATE, MANAGED_BY } from './metadata.js';
import { setPhase } from './phases.js';
import { findContext } from './context.js';
import { parseProps } from './props.js';
import { VerifierAccess } from './verifier-access.js';
import { QuantitySchema } from './quantity.js';

/** Argo CD hook annotations (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_hooks/). */
export const ARGOCD_HOOK = 'argocd.argoproj.io/hook';
export const ARGOCD_HOOK_DELETE_POLICY = 'argocd.argoproj.io/hook-delete-policy';

/**
 * How the verifier Job reaches the cluster:
 * - `argocd`: an Argo CD PostSync hook with `hook-delete-policy: BeforeHookCreation`, `backoffLimit` and
 *   `activeDeadlineSeconds`, and no `ttlSecondsAfterFinished`: Argo CD deletes the previous run when it creates the next,
 *   while a TTL lets Kubernetes delete the Job before Argo CD has read its result and the sync waits for it forever
 *   (argoproj/argo-cd#21055, #6880, #18884).
 * - `flux`: the Job is named `<name>-<hash>`, the hash of its pod template ({@link podTemplateHash}), which also carries
 *   the descriptor's digest: a change to what it runs or checks is a new Job (the pod template of a Job is immutable,
 *   so an update of the same Job is rejected and stalls the Kustomization, fluxcd/kustomize-controller#373), and the
 *   Kustomization's garbage collection (`prune: true`) deletes the old one. No TTL: kustomize-controller re-applies
 *   every object of its source on each reconcile, so a Job deleted by a TTL is created again and runs again.
 * - `plain`: a fixed name, `ttlSecondsAfterFinished` (default a day); for `kubectl apply` or any other tool.
 */
export type VerifierDelivery = 'argocd' | 'flux' | 'plain';
export const VERIFIER_DELIVERIES: readonly VerifierDelivery[] = ['argocd', 'flux', 'plain'];

/** Hex digits of the pod-template hash in a `flux` Job's name. */
const HASH_CHARS = 10;

/**
 * The hash a `flux` VerifierJob's name carries: the first 10 hex digits of the SHA-256 of the pod template as JSON with
 * sorted keys. Any change to the template (image, args, volumes, the descriptor digest annotation) changes it.
 */
export function podTemplateHash(template: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(withSortedKeys(template)), 'utf8')
    .digest('hex')
    .slice(0, HASH_CHARS);
}

/** Pod-template annotation of a `flux` Job: the SHA-256 of the descriptor it verifies (so a new descriptor is a new Job). */
export const ANNOTATION_DESCRIPTOR_SHA256 = 'agentplane.dev/descriptor-sha256';

/** What the environment tells its VerifierJob (read when the Job is added). */
export interface VerifierJobScope {
  readonly name: string;
  readonly defaultNamespace: string;
  readonly requireDigests: boolean;
  /** Namespaces of templates, pools and claims. */
  readonly sandboxNamespaces: readonly string[];
  readonly controllerNamespace?: string;
  readonly router?: {
    readonly namespace: string;
    readonly serviceName: string;
    readonly port: number;
    readonly authorizationMode: 'tokenreview' | 'scoped-token' | 'allow-all';
  };
  /** The environment's templates: runtime kind and ports, and whether the controller's managed NetworkPolicy isolates them. */
  readonly templates: readonly {
    readonly namespace: string;
    readonly name: string;
    readonly managed: boolean;
    readonly runtime: string;
    readonly ports: readonly number[];
  }[];
  /** Whether the environment requires suspend-resume: the round trip patches the probe Sandbox. */
  readonly suspendResume: boolean;
  /** The descriptor text (lazy: it is read when the Job is rendered). */
  readonly descriptorText: () => string;
}

/** Props of {@link VerifierJob}. */
export interface VerifierJobProps {
  /** The verifier image (`scripts/build-verifier-image.sh` builds one from the package), pinned by tag or digest. Required. */
  readonly image: string;
  /** Name of the Job and of its VerifierAccess identity. @default `agentplane-verifier` */
  readonly name?: string;
  /** Namespace of the Job, its ServiceAccount and its report ConfigMap. @default the environment's `defaultNamespace` */
  readonly namespace?: string;
  /**
   * How the Job reaches runtime servers: `direct` (pod IPs), `router`, or `port-forward` (through the API server; its
   * identity then gets `get` and `create` on `pods/portforward` in the sandbox namespaces, never `pods/exec`).
   * @default `port-forward` when a template runs sandboxd (it carries gRPC, which the router cannot; v0.5.6 listens on 127.0.0.1 only, `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`, and port-forward reaches both that and v1.0.x's `--listen-host`), else `router` when the environment has a router, else `direct`
   */
  readonly transport?: 'direct' | 'router' | 'port-forward';
  /** Router base URL for the `router` transport and router health. @default `http://<service>.<namespace>.svc:<port>` of the environment's router */
  readonly routerUrl?: string;
  /** Retries of a failed run (a failed verify is a finding, not a flake). @default 0 */
  readonly backoffLimit?: number;
  /** Deadline of the whole run, seconds. @default 900 */
  readonly activeDeadlineSeconds?: number;
  /**
   * Seconds a finished Job is kept before Kubernetes deletes it; only with `delivery: 'plain'` (with `argocd` or `flux`
   * it is refused with {@link VerifierDeliveryError}, see {@link VerifierDelivery}).
   * @default 86400 with `plain` (a day, so a failed run can be inspected); none otherwise
   */
  readonly ttlSecondsAfterFinished?: number;
  /** How the Job is delivered: `argocd`, `flux` or `plain` ({@link VerifierDelivery}). @default `argocd` */
  readonly delivery?: VerifierDelivery;
  /** Requests and limits of the verifier container. @default `{ cpu: '250m', memory: '256Mi' }` */
  readonly resources?: { readonly cpu: string; readonly memory: string };
  /** Deadline of each runtime call (`5s`, `500ms`). @default `5s` */
  readonly probeTimeout?: string;
  /** Deadline for a probe sandbox or claim to become Ready. @default `120s` */
  readonly readyTimeout?: string;
  /**
   * How long the verifier first waits for the environment to be ready (CRDs Established, the controller Available at
   * its generation, every warm pool's members Ready) before it probes, logging progress; it exits 15 when they are not
   * (`verify --wait-ready`). Must stay below `activeDeadlineSeconds`, so the verifier, not the Job's deadline, ends a
   * wait and says why. Argo CD's Healthy before PostSync does not mean any of this (argoproj/argo-cd#16509).
   * @default `activeDeadlineSeconds` less 300 s (at least 30 s)
   */
  readonly waitReady?: string;
  /** Name of the ConfigMap the report is written to, in `namespace`. @default `agentplane-verify-report` */
  readonly reportConfigMap?: string;
  /**
   * Argo CD PostSync hook annotations on the Job: `true` is `delivery: 'argocd'`, `false` is `delivery: 'plain'`; given
   * together with a `delivery` it disagrees with, synthesis fails ({@link VerifierDeliveryError}).
   * @default - unset: `delivery` decides
   * @deprecated use `delivery`.
   */
  readonly argoCdHook?: boolean;
}

const Name = z.string().regex(DNS_LABEL, 'must be a DNS label').max(63);
const Duration = z.string().regex(/^\d+(ms|s|m)$/, 'must be a duration like 5s, 500ms or 2m');
const PropsSchema = z
  .object({
    image: z.string().min(1),
    name: Name.default('agentplane-verifier'),
    namespace: Name.optional(),
    transport: z.enum(['direct', 'router', 'port-forward']).optional(),
    routerUrl: z
      .string()
      .regex(/^https?:\/\/[^\s/]+(\/\S*)?$/, 'must be an http(s) URL')
      .optional(),
    backoffLimit: z.number().int().min(0).max(10).default(0),
    activeDeadlineSeconds: z.number().int().min(60).default(900),
    ttlSecondsAfterFinished: z.number().int().min(0).optional(),
    delivery: z.enum(['argocd', 'flux', 'plain']).optional(),
    resources: z
      .object({ cpu: QuantitySchema, memory: QuantitySchema })
      .strict()
      .default({ cpu: '250m', memory: '256Mi' }),
    probeTimeout: Duration.default('5s'),
    readyTimeout: Duration.default('120s'),
    waitReady: Duration.optional(),
    reportConfigMap: Name.default(REPORT_CONFIGMAP),
    argoCdHook: z.boolean().optional(),
  })
  .strict();

/** Seconds of a duration like `5s`, `500ms` or `2m` (rounded up). */
function seconds(d: string): number {
  const m = /^(\d+)(ms|s|m)$/.exec(d)!;
  const n = Number(m[1]);
  return m[2] === 'ms' ? Math.ceil(n / 1000) : m[2] === 'm' ? n * 60 : n;
}

/** Label the controller stamps on a template's sandbox pods; its managed NetworkPolicy selects them by it (`extensions/controllers/sandboxtemplate_controller.go@v0.5.6`). */
const TEMPLATE_REF_HASH = 'agents.x-k8s.io/sandbox-template-ref-hash';
/** UID the verifier runs as (the image's `nonroot` user). */
const RUN_AS = 65532;
/** Where the kubelet mounts a pod's ServiceAccount token. */
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Number of part ConfigMaps a descriptor of `text` is stored in (0 when whole); overestimates near the limit, never under. */
export function descriptorPartCount(text: string): number {
  // The real ConfigMap also carries labels and annotations: pad by them so the whole/parts decision errs towards parts
  // (the part volumes are optional, so one too many is harmless; pieces depend on the text only).
  const probe = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: DESCRIPTOR_CONFIGMAP, annotations: { pad: 'x'.repeat(4096) } },
    data: { [DESCRIPTOR_KEY]: text },
  };
  const cms = descriptorConfigMaps(probe, DESCRIPTOR_PART_BYTES);
  return cms.length === 1 ? 0 : cms.length - 1;
}

/** The delivery the props ask for: `delivery`, else the deprecated `argoCdHook`, else `argocd`; contradictions refused. */
function deliveryOf(
  path: string,
  p: {
    delivery?: VerifierDelivery | undefined;
    argoCdHook?: boolean | undefined;
    ttlSecondsAfterFinished?: number | undefined;
  },
): VerifierDelivery {
  const fromHook = p.argoCdHook === undefined ? undefined : p.argoCdHook ? 'argocd' : 'plain';
  if (p.delivery !== undefined && fromHook !== undefined && (p.delivery === 'argocd') !== p.argoCdHook) {
    throw new VerifierDeliveryError(
      path,
      'ConflictingDelivery',
      ['delivery', 'argoCdHook'],
      { delivery: p.delivery, argoCdHook: p.argoCdHook },
      `delivery: ${JSON.stringify(p.delivery)} contradicts the deprecated argoCdHook: ${String(p.argoCdHook)}`,
      'drop argoCdHook (deprecated) and keep delivery',
    );
  }
  const delivery = p.delivery ?? fromHook ?? 'argocd';
  if (delivery !== 'plain' && p.ttlSecondsAfterFinished !== undefined) {
    const argo = delivery === 'argocd';
    throw new VerifierDeliveryError(
      path,
      argo ? 'TtlWithHookDelivery' : 'TtlWithFluxDelivery',
      ['delivery', 'ttlSecondsAfterFinished'],
      { delivery, ttlSecondsAfterFinished: p.ttlSecondsAfterFinished },
      argo
        ? `ttlSecondsAfterFinished: ${p.ttlSecondsAfterFinished} with delivery: "argocd" (a PostSync hook): the TTL controller may delete the Job before Argo CD records its result, and the sync then waits for the hook forever (argoproj/argo-cd#21055)`
        : `ttlSecondsAfterFinished: ${p.ttlSecondsAfterFinished} with delivery: "flux": Flux re-applies the Job after the TTL deleted it, so the verifier runs again on every reconcile`,
      argo
        ? 'drop ttlSecondsAfterFinished: with BeforeHookCreation Argo CD deletes the previous run when it creates the next'
        : 'drop ttlSecondsAfterFinished: the Kustomization prunes a superseded Job (prune: true); or use delivery: "plain"',
    );
  }
  return delivery;
}

export class VerifierJob extends Construct {
  readonly name: string;
  readonly namespace: string;
  readonly transport: 'direct' | 'router' | 'port-forward';
  readonly reportConfigMap: string;
  readonly access: VerifierAccess;
  /** How the Job is delivered. */
  readonly delivery: VerifierDelivery;

  constructor(scope: Construct, id: string, env: VerifierJobScope, props: VerifierJobProps) {
    super(sameCopies(scope, id), id);
    findContext(this)?.assertOpen(this);
    const p = parseProps(this, 'VerifierJob', PropsSchema, props);
    assertPinned(this.node.path, 'VerifierJob image', p.image, env.requireDigests);
    this.delivery = deliveryOf(this.node.path, p);
    const ttl = this.delivery === 'plain' ? (p.ttlSecondsAfterFinished ?? 86_400) : undefined;
    if (this.delivery === 'flux' && p.name.length > 63 - HASH_CHARS - 1) {
      throw new ConstructPropsError(this.node.path, 'VerifierJob', [
        {
          prop: 'name',
          reason: 'TooLong',
          value: p.name,
          message: `name: ${p.name.length} characters; with delivery flux the Job is named <name>-<${HASH_CHARS} hex digits>, at most 63 (got ${JSON.stringify(p.name)})`,
        },
      ]);
    }
    const waitReadySeconds =
      p.waitReady === undefined ? Math.max(30, p.activeDeadlineSeconds - 300) : seconds(p.waitReady);
    if (waitReadySeconds >= p.activeDeadlineSeconds) {
      throw new ConstructPropsError(this.node.path, 'VerifierJob', [
        {
          prop: 'waitReady',
          reason: 'NotBelowDeadline',
          value: p.waitReady,
          message: `waitReady: ${waitReadySeconds}s is not below activeDeadlineSeconds (${p.activeDeadlineSeconds}): the Job would be killed while waiting, without a summary (got ${JSON.stringify(p.waitReady)})`,
        },
      ]);
    }
    this.name = p.name;
    this.namespace = p.namespace ?? env.defaultNamespace;
    this.transport =
      p.transport ??
      (env.templates.some((t) => t.runtime === 'sandboxd') ? 'port-forward' : env.router ? 'router' : 'direct');
    this.reportConfigMap = p.reportConfigMap;
    const routerUrl =
      p.routerUrl ??
      (env.router ? `http://${env.router.serviceName}.${env.router.namespace}.svc:${env.router.port}` : undefined);
    if (this.transport === 'router' && routerUrl === undefined) {
      throw new ConstructError(
        this.node.path,
        'VerifierJob transport "router" needs a router',
        'add a SandboxRouter before the VerifierJob, pass routerUrl, or use transport "direct"',
      );
    }
    this.access = new VerifierAccess(this, 'access', {
      namespace: this.namespace,
      name: p.name,
      sandboxNamespaces: env.sandboxNamespaces.length > 0 ? env.sandboxNamespaces : [env.defaultNamespace],
      ...(env.controllerNamespace ? { controllerNamespace: env.controllerNamespace } : {}),
      ...(env.router ? { routerNamespace: env.router.namespace, routerService: env.router.serviceName } : {}),
      portForward: this.transport === 'port-forward',
      suspendResume: env.suspendResume,
      reportConfigMap: p.reportConfigMap,
    });

    const descriptorNs = env.defaultNamespace;
    if (descriptorNs !== this.namespace) {
      const problem: PropProblem = {
        prop: 'namespace',
        reason: 'NotDescriptorNamespace',
        value: this.namespace,
        message: `namespace: ${this.namespace} differs from the descriptor ConfigMap's ${descriptorNs} (got ${JSON.stringify(this.namespace)})`,
      };
      throw new ConstructPropsError(
        this.node.path,
        'VerifierJob',
        [problem],
        'a pod mounts ConfigMaps of its own namespace only: leave namespace unset',
      );
    }
    const sourcesOf = (): unknown[] => {
      const parts = descriptorPartCount(env.descriptorText());
      return [
        { configMap: { name: DESCRIPTOR_CONFIGMAP } },
        ...Array.from({ length: parts }, (_, i) => {
          const name = descriptorPartName(DESCRIPTOR_CONFIGMAP, i + 1);
          return {
            configMap: { name, optional: true, items: [{ key: DESCRIPTOR_PART_KEY, path: `parts/${name}` }] },
          };
        }),
      ];
    };
    const sources = lazy(sourcesOf);
    const labels = {
      [LABEL_ENVIRONMENT]: env.name,
      [LABEL_MANAGED_BY]: MANAGED_BY,
      'app.kubernetes.io/name': 'agentplane-verifier',
    };
    const args = [
      'verify',
      '--in-cluster',
      '--descriptor-dir',
      DESCRIPTOR_MOUNT,
      '--report-configmap',
      `${this.namespace}/${p.reportConfigMap}`,
      '--transport',
      this.transport,
      ...(routerUrl ? ['--router-url', routerUrl] : []),
      // The router's negative probes point it at a listener on this pod's IP (expanded by the kubelet from the env below).
      ...(routerUrl ? ['--router-canary-host', '$(AGENTPLANE_POD_IP)'] : []),
      // A tokenreview router authenticates any ServiceAccount token: this pod's own (scoped-token needs a minted one).
      ...(env.router?.authorizationMode === 'tokenreview' ? ['--router-token-file', `${SA_DIR}/token`] : []),
      '--probe-timeout',
      p.probeTimeout,
      '--ready-timeout',
      p.readyTimeout,
      '--wait-ready',
      `${waitReadySeconds}s`,
      '-o',
      'json',
    ];
    if (this.transport === 'direct') this.allowDirect(env, labels);
    const quantities = { cpu: p.resources.cpu, memory: p.resources.memory };
    const podTemplate = (volumeSources: unknown, annotations?: Record<string, string>): Record<string, unknown> => ({
      metadata: { labels, ...(annotations ? { annotations } : {}) },
      spec: {
        serviceAccountName: p.name,
        // VerifierAccess's ServiceAccount turns automounting off for every other pod; this one authenticates with it.
        automountServiceAccountToken: true,
        restartPolicy: 'Never',
        enableServiceLinks: false,
        securityContext: {
          runAsNonRoot: true,
          runAsUser: RUN_AS,
          runAsGroup: RUN_AS,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [
          {
            name: 'verify',
            image: p.image,
            args,
            env: [
              { name: 'AGENTPLANE_RUN', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'AGENTPLANE_JOB', value: p.name },
              ...(routerUrl
                ? [{ name: 'AGENTPLANE_POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }]
                : []),
            ],
            resources: { requests: quantities, limits: quantities },
            // The verifier writes a summary to /dev/termination-log; a run that dies before it does shows its log's tail.
            terminationMessagePolicy: 'FallbackToLogsOnError',
            securityContext: {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              privileged: false,
              capabilities: { drop: ['ALL'] },
            },
            volumeMounts: [
              { name: 'descriptor', mountPath: DESCRIPTOR_MOUNT, readOnly: true },
              { name: 'tmp', mountPath: '/tmp' },
            ],
          },
        ],
        volumes: [
          { name: 'descriptor', projected: { sources: volumeSources } },
          { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } },
        ],
      },
    });
    // flux: the template (resolved when the Job is rendered, as the descriptor is) names the Job.
    const fluxTemplate = (): Record<string, unknown> =>
      podTemplate(sourcesOf(), {
        [ANNOTATION_DESCRIPTOR_SHA256]: createHash('sha256').update(env.descriptorText(), 'utf8').digest('hex'),
      });
    const flux = this.delivery === 'flux';
    // A plain ApiObject: the typed KubeJob maps its fields eagerly and would not carry the lazy volume sources.
    const job = new ApiObject(this, 'Job', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: flux ? lazy(() => `${p.name}-${podTemplateHash(fluxTemplate())}`) : p.name,
        namespace: this.namespace,
        labels,
        ...(this.delivery === 'argocd'
          ? { annotations: { [ARGOCD_HOOK]: 'PostSync', [ARGOCD_HOOK_DELETE_POLICY]: 'BeforeHookCreation' } }
          : {}),
      },
      spec: {
        backoffLimit: p.backoffLimit,
        activeDeadlineSeconds: p.activeDeadlineSeconds,
        ...(ttl === undefined ? {} : { ttlSecondsAfterFinished: ttl }),
        template: flux ? lazy(fluxTemplate) : podTemplate(sources),
      },
    });
    setPhase(job, 'verify');
  }

  /**
   * The controller's managed policy admits only the router's pods (`sandboxtemplate_controller.go@v0.5.6`), so a Job
   * dialling pod IPs is dropped wherever policies are enforced. One NetworkPolicy per namespace admits this Job's pods
   * to the runtime ports of its managed templates' pods. It selects only pods the controller stamped (ref-hash present),
   * which its own policy already isolates: the allowance widens their ingress by this pod alone, isolating nothing new.
   */
  private allowDirect(env: VerifierJobScope, jobLabels: Record<string, string>): void {
    const byNs = new Map<string, { names: string[]; ports: Set<number> }>();
    for (const t of env.templates.filter((x) => x.managed)) {
      const e = byNs.get(t.namespace) ?? { names: [], ports: new Set<number>() };
      e.names.push(t.name);
      t.ports.forEach((port) => e.ports.add(port));
      byNs.set(t.namespace, e);
    }
    for (const [namespace, { names, ports }] of [...byNs].sort(([a], [b]) => a.localeCompare(b))) {
      const policy = new ApiObject(this, `direct-${namespace}`, {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: `${this.name}-direct`, namespace, labels: jobLabels },
        spec: {
          podSelector: {
            matchExpressions: [
              { key: LABEL_TEMPLATE, operator: 'In', values: [...names].sort() },
              { key: TEMPLATE_REF_HASH, operator: 'Exists' },
            ],
          },
          policyTypes: ['Ingress'],
          ingress: [
            {
              from: [
                {
                  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': this.namespace } },
                  podSelector: { matchLabels: jobLabels },
                },
              ],
              ports: [...ports].sort((a, b) => a - b).map((port) => ({ protocol: 'TCP', port })),
            },
          ],
        },
      });
      setPhase(policy, 'policies');
    }
  }
}
