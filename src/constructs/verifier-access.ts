/**
 * VerifierAccess: the least-privilege identity `agentplane verify` runs as — a ServiceAccount, a ClusterRole for the
 * few cluster-scoped reads (named CRDs, nodes, RuntimeClasses, and SubjectAccessReviews to check the controller's
 * rights, case controller-rbac-gaps), and per-namespace Roles for what the probes read (including pod lists in the
 * controller and router namespaces, for the running image digests, case unpinned-image-tags) and the labelled probe
 * objects they create and delete (the network enforcement test's fresh peers are such objects too: claims on an empty
 * pool of the verifier's own, or bare Sandboxes on v0.4, so it needs no right beyond the workload probe's). Never `pods/exec`, `pods/attach`, secrets or any write to objects the verifier did
 * not create (the in-cluster Job's one report ConfigMap is its own); the runtime is reached through `pods/portforward`
 * (the production transport to a loopback-only sandboxd, `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`), which can be
 * turned off for router/direct set-ups.
 *
 * Outside an AgentEnvironment it is refused in a Chart with a namespace (cluster-scoped objects must not carry one,
 * cluster-scope.ts); every namespaced object here sets its namespace explicitly.
 */
import { k8s } from './k8s.js';
import { Construct } from 'constructs';
import { sameCopies } from './package-copies.js';
import { z } from 'zod';
import { DNS_LABEL } from '../model/names.js';
import { SANDBOX_KINDS } from '../model/releases.js';
import { CORE_GROUP, EXTENSIONS_GROUP, resourceName, RESOURCES } from '../model/resources.js';
import { refuseChartNamespace } from './cluster-scope.js';
import { parseProps } from './props.js';

/** One RBAC rule as emitted. */
export interface VerifierRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

export interface VerifierAccessProps {
  /** Namespace of the verifier's ServiceAccount. */
  readonly namespace: string;
  /**
   * Name of the ServiceAccount, ClusterRole, Roles and bindings.
   * @default 'agentplane-verifier'
   */
  readonly name?: string;
  /** Namespaces holding the environment's templates, pools and probe sandboxes. At least one. */
  readonly sandboxNamespaces: readonly string[];
  /**
   * Namespace of the Agent Sandbox controller.
   * @default 'agent-sandbox-system' (`k8s/controller.yaml@v0.5.6`)
   */
  readonly controllerNamespace?: string;
  /**
   * Controller Deployment and ServiceAccount name.
   * @default 'agent-sandbox-controller'
   */
  readonly controllerName?: string;
  /**
   * Namespace of the sandbox-router Service, when the environment has a router.
   * @default - none
   */
  readonly routerNamespace?: string;
  /**
   * Router Service name.
   * @default 'sandbox-router-svc'
   */
  readonly routerService?: string;
  /**
   * Grant `pods/portforward` get and create in the sandbox namespaces (the port-forward transport's WebSocket needs both).
   * @default true
   */
  readonly portForward?: boolean;
  /**
   * Grant `patch` on Sandboxes in the sandbox namespaces, which the suspend-resume round trip needs: it suspends and
   * resumes the verifier's own probe Sandbox (v0.5 `spec.operatingMode`, v0.4 `spec.replicas`). Set it when the
   * environment declares `suspend-resume`; without it that capability stays unknown (Forbidden). RBAC cannot narrow
   * the right to the probe's generated names, so it is off unless asked for.
   * @default false
   */
  readonly suspendResume?: boolean;
  /**
   * Grant SubjectAccessReview create, to check the controller's rights.
   * @default true
   */
  readonly checkControllerRbac?: boolean;
  /**
   * Name of the ConfigMap in `namespace` the in-cluster verifier writes its report to: get/update/patch on that one
   * name, and create on ConfigMaps (RBAC cannot narrow create by name).
   * @default - none (no ConfigMap rights)
   */
  readonly reportConfigMap?: string;
}

const Name = z.string().regex(DNS_LABEL, 'must be a DNS label').max(63);
const PropsSchema = z
  .object({
    namespace: Name,
    name: Name.default('agentplane-verifier'),
    sandboxNamespaces: z.array(Name).min(1, 'needs at least one namespace'),
    controllerNamespace: Name.default('agent-sandbox-system'),
    controllerName: Name.default('agent-sandbox-controller'),
    routerNamespace: Name.optional(),
    routerService: Name.default('sandbox-router-svc'),
    portForward: z.boolean().default(true),
    suspendResume: z.boolean().default(false),
    checkControllerRbac: z.boolean().default(true),
    reportConfigMap: Name.optional(),
  })
  .strict();

/** The four CRD names of Agent Sandbox (`k8s/crds/*.yaml@v0.5.6`). */
const CRD_NAMES = SANDBOX_KINDS.map(resourceName);

/** Cluster-wide rules of the verifier (pure; exported for tests and docs). */
export function verifierClusterRules(p: { readonly checkControllerRbac: boolean }): VerifierRule[] {
  const rules: VerifierRule[] = [
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['get'],
      resourceNames: CRD_NAMES,
    },
    { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
    { apiGroups: ['node.k8s.io'], resources: ['runtimeclasses'], verbs: ['get'] },
  ];
  if (p.checkControllerRbac)
    rules.push({ apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] });
  return rules;
}

/** Rules in each sandbox namespace (pure): read the environment, create/delete the verifier's own probe objects (Sandboxes on v0.4; claims, and an empty pool when a template has none, on v0.5). */
export function verifierSandboxRules(p: {
  readonly portForward: boolean;
  readonly suspendResume?: boolean;
}): VerifierRule[] {
  const rules: VerifierRule[] = [
    {
      apiGroups: [CORE_GROUP],
      resources: [RESOURCES.Sandbox.plural],
      verbs: ['get', 'list', 'watch', 'create', 'delete', ...(p.suspendResume === true ? ['patch'] : [])],
    },
    {
      apiGroups: [EXTENSIONS_GROUP],
      resources: [RESOURCES.SandboxClaim.plural, RESOURCES.SandboxWarmPool.plural],
      verbs: ['get', 'list', 'watch', 'create', 'delete'],
    },
    { apiGroups: [EXTENSIONS_GROUP], resources: [RESOURCES.SandboxTemplate.plural], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['events'], verbs: ['list'] },
    // The per-sandbox Service: the router's DNS fallback needs it (case router-warm-nxdomain).
    { apiGroups: [''], resources: ['services'], verbs: ['get'] },
    { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['list'] },
  ];
  // client-node port-forwards over a WebSocket: a GET upgrade, authorized as `get`, and since 1.35 also as `create`
  // (feature AuthorizePodWebsocketUpgradeCreatePermission, `pkg/registry/core/pod/rest/subresources.go@v1.36.3`).
  if (p.portForward) rules.push({ apiGroups: [''], resources: ['pods/portforward'], verbs: ['get', 'create'] });
  return rules;
}

/**
 * Rules for the report ConfigMap (pure): get/update/patch narrowed to its name; create cannot be narrowed by
 * resourceNames (the name is not known to the authorizer before the object exists), so it is granted alone.
 */
export function verifierReportRules(name: string): VerifierRule[] {
  return [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'update', 'patch'], resourceNames: [name] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
  ];
}

export class VerifierAccess extends Construct {
  /** `system:serviceaccount:<ns>:<name>`, the user the verifier authenticates as. */
  readonly userName: string;
  readonly serviceAccountName: string;
  readonly namespace: string;

  constructor(scope: Construct, id: string, props: VerifierAccessProps) {
    super(sameCopies(scope, id), id);
    refuseChartNamespace(this, ['ClusterRole', 'ClusterRoleBinding']);
    const p = parseProps(this, 'VerifierAccess', PropsSchema, props);
    this.serviceAccountName = p.name;
    this.namespace = p.namespace;
    this.userName = `system:serviceaccount:${p.namespace}:${p.name}`;
    const subject = [{ kind: 'ServiceAccount', name: p.name, namespace: p.namespace }];
    new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name: p.name, namespace: p.namespace },
      automountServiceAccountToken: false,
    });
    new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name: p.name },
      rules: verifierClusterRules(p).map(toPolicyRule),
    });
    new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name: p.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: p.name },
      subjects: subject,
    });
    const role = (ns: string, rules: VerifierRule[]): void => {
      new k8s.KubeRole(this, `Role-${ns}`, {
        metadata: { name: p.name, namespace: ns },
        rules: rules.map(toPolicyRule),
      });
      new k8s.KubeRoleBinding(this, `RoleBinding-${ns}`, {
        metadata: { name: p.name, namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: p.name },
        subjects: subject,
      });
    };
    const perNs = new Map<string, VerifierRule[]>();
    const add = (ns: string, rules: VerifierRule[]): void => {
      perNs.set(ns, [...(perNs.get(ns) ?? []), ...rules]);
    };
    for (const ns of [...new Set(p.sandboxNamespaces)]) add(ns, verifierSandboxRules(p));
    // Pods are listed (by the Deployment's / router's pod labels) to compare running image digests with the pinned
    // ones (the `images` probe, case unpinned-image-tags); list cannot be narrowed by name.
    const podList: VerifierRule = { apiGroups: [''], resources: ['pods'], verbs: ['list'] };
    add(p.controllerNamespace, [
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'], resourceNames: [p.controllerName] },
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get'], resourceNames: [p.controllerName] },
      podList,
    ]);
    if (p.routerNamespace)
      add(p.routerNamespace, [
        { apiGroups: [''], resources: ['services'], verbs: ['get'], resourceNames: [p.routerService] },
        ...(p.routerNamespace === p.controllerNamespace ? [] : [podList]),
      ]);
    if (p.reportConfigMap) add(p.namespace, verifierReportRules(p.reportConfigMap));
    // The compatibility tuple names the CNI by its DaemonSet in kube-system.
    add('kube-system', [{ apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['list'] }]);
    for (const [ns, rules] of perNs) role(ns, rules);
  }
}

function toPolicyRule(r: VerifierRule): k8s.PolicyRule {
  return {
    apiGroups: [...r.apiGroups],
    resources: [...r.resources],
    verbs: [...r.verbs],
    ...(r.resourceNames ? { resourceNames: [...r.resourceNames] } : {}),
  };
}
