/**
 * VerifierJob: `agentplane verify` run inside the cluster after every sync, as a Job under the environment's
 * {@link VerifierAccess} identity. It reads the environment's own descriptor from the mounted descriptor ConfigMap(s)
 * (whole or in parts, descriptor-parts.ts), reaches runtimes over the API server's port-forward (sandboxd v0.5.6 listens on
 * loopback only; port-forward reaches a v1.0.x sandboxd on the pod network too), `direct`ly or through the router (never `pods/exec`; `pods/portforward` only for port-forward), prints
 * the JSON report to its log and writes it to one ConfigMap; its exit code is the verify exit code.
 *
 * GitOps: an Argo CD PostSync hook (deleted before the next run's creation, so the last failed run stays) and, for Flux,
 * the last apply phase (`verify`, after everything it checks) where a Kustomization with `wait: true` health-checks it.
 */
import { ApiObject } from './cdk8s.js';
import { lazy } from './lazy.js';
import { Construct } from 'constructs';
import { z } from 'zod';
import { DNS_LABEL } from '../model/names.js';
import { DESCRIPTOR_MOUNT, REPORT_CONFIGMAP } from '../model/verifier-job.js';
import { DESCRIPTOR_CONFIGMAP, DESCRIPTOR_KEY, DESCRIPTOR_PART_KEY, descriptorPartName } from './descriptor.js';
import { DESCRIPTOR_PART_BYTES, descriptorConfigMaps } from './descriptor-parts.js';
import { ConstructError, ConstructPropsError } from './errors.js';
import { assertPinned } from './images.js';
import { LABEL_ENVIRONMENT, LABEL_MANAGED_BY, LABEL_TEMPLATE, MANAGED_BY } from './metadata.js';
import { setPhase } from './phases.js';
import { parseProps } from './props.js';
import { VerifierAccess } from './verifier-access.js';
import { QuantitySchema } from './quantity.js';

/** Argo CD hook annotations (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_hooks/). */
export const ARGOCD_HOOK = 'argocd.argoproj.io/hook';
export const ARGOCD_HOOK_DELETE_POLICY = 'argocd.argoproj.io/hook-delete-policy';

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
  /** Seconds a finished Job is kept before Kubernetes deletes it. @default 86400 (a day, so a failed run can be inspected) */
  readonly ttlSecondsAfterFinished?: number;
  /** Requests and limits of the verifier container. @default `{ cpu: '250m', memory: '256Mi' }` */
  readonly resources?: { readonly cpu: string; readonly memory: string };
  /** Deadline of each runtime call (`5s`, `500ms`). @default `5s` */
  readonly probeTimeout?: string;
  /** Deadline for a probe sandbox or claim to become Ready. @default `120s` */
  readonly readyTimeout?: string;
  /** Name of the ConfigMap the report is written to, in `namespace`. @default `agentplane-verify-report` */
  readonly reportConfigMap?: string;
  /** Argo CD PostSync hook annotations on the Job. Set `false` when Argo CD does not deploy this environment. @default true */
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
    ttlSecondsAfterFinished: z.number().int().min(0).default(86_400),
    resources: z
      .object({ cpu: QuantitySchema, memory: QuantitySchema })
      .strict()
      .default({ cpu: '250m', memory: '256Mi' }),
    probeTimeout: Duration.default('5s'),
    readyTimeout: Duration.default('120s'),
    reportConfigMap: Name.default(REPORT_CONFIGMAP),
    argoCdHook: z.boolean().default(true),
  })
  .strict();

/** UID the verifier runs as (the image's `nonroot` user). */
/** Label the controller stamps on a template's sandbox pods; its managed NetworkPolicy selects them by it (`extensions/controllers/sandboxtemplate_controller.go@v0.5.6`). */
const TEMPLATE_REF_HASH = 'agents.x-k8s.io/sandbox-template-ref-hash';
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

export class VerifierJob extends Construct {
  readonly name: string;
  readonly namespace: string;
  readonly transport: 'direct' | 'router' | 'port-forward';
  readonly reportConfigMap: string;
  readonly access: VerifierAccess;

  constructor(scope: Construct, id: string, env: VerifierJobScope, props: VerifierJobProps) {
    super(scope, id);
    const p = parseProps(this, 'VerifierJob', PropsSchema, props);
    assertPinned(this.node.path, 'VerifierJob image', p.image, env.requireDigests);
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
      const problem = {
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
    const sources = lazy(() => {
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
    });
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
      '-o',
      'json',
    ];
    if (this.transport === 'direct') this.allowDirect(env, labels);
    const quantities = { cpu: p.resources.cpu, memory: p.resources.memory };
    // A plain ApiObject: the typed KubeJob maps its fields eagerly and would not carry the lazy volume sources.
    const job = new ApiObject(this, 'Job', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: p.name,
        namespace: this.namespace,
        labels,
        ...(p.argoCdHook
          ? { annotations: { [ARGOCD_HOOK]: 'PostSync', [ARGOCD_HOOK_DELETE_POLICY]: 'BeforeHookCreation' } }
          : {}),
      },
      spec: {
        backoffLimit: p.backoffLimit,
        activeDeadlineSeconds: p.activeDeadlineSeconds,
        ttlSecondsAfterFinished: p.ttlSecondsAfterFinished,
        template: {
          metadata: { labels },
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
              { name: 'descriptor', projected: { sources } },
              { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } },
            ],
          },
        },
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
