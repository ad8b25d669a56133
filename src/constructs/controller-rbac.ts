/**
 * The controller's RBAC scopes (case controller-rbac-gaps). The controller's rights are the pinned release's generated
 * ClusterRoles (`k8s/rbac.generated.yaml@tag`, `k8s/extensions-rbac.generated.yaml@tag`), bound to its ServiceAccount by the
 * ClusterRoleBindings of `k8s/controller.yaml@tag` and `k8s/extensions.yaml@tag`. A resource may be narrowed from cluster
 * scope to namespaces only where the controller does not list or watch it: no supported release (v0.4.6, v0.5.0, v0.5.6)
 * has a flag that restricts the controller's watch to namespaces (`cmd/agent-sandbox-controller/main.go@tag`), so a
 * narrowed list/watch right makes the controller's cluster-wide informer fail and the controller crash-loop.
 */
import { z } from 'zod';
import type { ReleaseTag } from '../releases/index.js';
import { ConstructPropsError, RbacNarrowingError } from './errors.js';
import { isPlainObject } from '../model/objects.js';
import type { PropProblem } from './errors.js';
import { child, list, type Json } from './kube-object.js';

/** `namespace:<name>`: one namespace a controller resource is narrowed to. */
export type NamespaceScope = `namespace:${string}`;

/**
 * Where the controller holds its rights on one resource: `'cluster'` (as pinned), one namespace (`'namespace:<ns>'`) or
 * several (a non-empty list of `'namespace:<ns>'`).
 */
export type ControllerRbacScope = 'cluster' | NamespaceScope | readonly NamespaceScope[];

const NAMESPACE_SCOPE = /^namespace:[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NamespaceScopeSchema = z
  .string()
  .max('namespace:'.length + 63)
  .regex(NAMESPACE_SCOPE, 'must be "cluster" or "namespace:<namespace>" with a DNS-label namespace');

/**
 * zod schema of the `rbac` prop: resource key -> scope; default `{}` (every resource as pinned).
 * @internal
 */
export const ControllerRbacSchema = z
  .record(
    z.string(),
    z.union([
      z.literal('cluster'),
      NamespaceScopeSchema,
      z.array(NamespaceScopeSchema).min(1, 'needs at least one "namespace:<ns>"'),
    ]),
  )
  .default({});

/** One resource the controller's pinned ClusterRoles grant: a key of the `rbac` prop. */
export interface ControllerResource {
  /** The plural resource name of the pinned rules, e.g. `networkpolicies`; subresources (`sandboxes/status`) count as their resource. */
  readonly key: string;
  /** `plural` or `plural.group` per API group it is granted in, sorted, e.g. `['networkpolicies.networking.k8s.io']`. */
  readonly resources: readonly string[];
  /** Union of the verbs granted on it and its subresources, sorted. */
  readonly verbs: readonly string[];
  /** Whether the controller lists or watches it (verb `list`, `watch` or `*`): then it needs cluster scope. */
  readonly watched: boolean;
  /** The ClusterRoles that grant it, with the upstream file each comes from, e.g. `ClusterRole agent-sandbox-controller-extensions in k8s/extensions-rbac.generated.yaml@v0.5.6`. */
  readonly grantedBy: readonly string[];
}

/** An object of the install with the upstream file it was taken from. */
export interface SourcedObject {
  readonly file: string;
  readonly obj: Json;
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const WATCH_VERBS = new Set(['list', 'watch', '*']);
/** Cluster-scoped resources that the pinned controller ClusterRoles name (v0.5.x: the four CRDs, get/patch/update). A Role cannot grant them. */
const CLUSTER_SCOPED = new Set(['customresourcedefinitions.apiextensions.k8s.io']);

interface ControllerRole {
  readonly name: string;
  readonly file: string;
  readonly obj: Json;
  readonly subjects: readonly unknown[];
}

function baseResource(resource: string): string {
  return resource.split('/')[0]!;
}

function qualified(key: string, group: string): string {
  return group === '' ? key : `${key}.${group}`;
}

function strings(obj: Json, key: string): string[] {
  return list(obj, key).filter((v): v is string => typeof v === 'string');
}

/** The ClusterRoles that a ClusterRoleBinding of the install binds to ServiceAccount `serviceAccount` in `namespace`, in assembly order. */
function controllerRoles(
  objects: readonly SourcedObject[],
  serviceAccount: string,
  namespace: string,
): ControllerRole[] {
  const subjectsByRole = new Map<string, unknown[]>();
  for (const { obj } of objects) {
    if (obj['kind'] !== 'ClusterRoleBinding') continue;
    const roleRef = child(obj, 'roleRef');
    const subjects = list(obj, 'subjects');
    const bindsController = subjects.some(
      (s) =>
        isPlainObject(s) &&
        s['kind'] === 'ServiceAccount' &&
        s['name'] === serviceAccount &&
        s['namespace'] === namespace,
    );
    if (roleRef['kind'] === 'ClusterRole' && typeof roleRef['name'] === 'string' && bindsController)
      subjectsByRole.set(roleRef['name'], subjects);
  }
  const roles: ControllerRole[] = [];
  for (const { file, obj } of objects) {
    const name = child(obj, 'metadata')['name'];
    if (obj['kind'] !== 'ClusterRole' || typeof name !== 'string') continue;
    const subjects = subjectsByRole.get(name);
    if (subjects !== undefined) roles.push({ name, file, obj, subjects });
  }
  return roles;
}

function describeRoles(roles: readonly ControllerRole[], tag: ReleaseTag): string[] {
  return roles.map((r) => `ClusterRole ${r.name} in ${r.file}@${tag}`);
}

function resourcesOf(roles: readonly ControllerRole[], tag: ReleaseTag): ControllerResource[] {
  const acc = new Map<string, { resources: Set<string>; verbs: Set<string>; roles: ControllerRole[] }>();
  for (const role of roles) {
    for (const rule of list(role.obj, 'rules')) {
      if (!isPlainObject(rule)) continue;
      for (const resource of strings(rule, 'resources')) {
        const key = baseResource(resource);
        let entry = acc.get(key);
        if (entry === undefined) {
          entry = { resources: new Set(), verbs: new Set(), roles: [] };
          acc.set(key, entry);
        }
        for (const group of strings(rule, 'apiGroups')) entry.resources.add(qualified(key, group));
        for (const verb of strings(rule, 'verbs')) entry.verbs.add(verb);
        if (!entry.roles.includes(role)) entry.roles.push(role);
      }
    }
  }
  return [...acc.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, e]) => ({
      key,
      resources: [...e.resources].sort(),
      verbs: [...e.verbs].sort(),
      watched: [...e.verbs].some((v) => WATCH_VERBS.has(v)),
      grantedBy: describeRoles(e.roles, tag),
    }));
}

/** What {@link scopeControllerRbac} needs to know about the install. */
export interface ControllerRbacInput {
  /** Construct path, for errors. */
  readonly path: string;
  readonly tag: ReleaseTag;
  /** The install's objects in assembly order, with their upstream files; the controller's ClusterRoles among them are edited in place. */
  readonly objects: readonly SourcedObject[];
  /** The controller's ServiceAccount (`spec.template.spec.serviceAccountName` of its Deployment) and namespace. */
  readonly serviceAccount: string;
  readonly namespace: string;
  /** The parsed `rbac` prop. */
  readonly scopes: Readonly<Record<string, string | readonly string[]>>;
}

/** The outcome of {@link scopeControllerRbac}. */
export interface ControllerRbacResult {
  /** Every resource of the controller's pinned ClusterRoles, sorted by key. */
  readonly resources: readonly ControllerResource[];
  /** Role + RoleBinding pairs for narrowed resources (empty when every resource stays at cluster scope). */
  readonly added: readonly Json[];
  /** The namespaces of the added objects, sorted. */
  readonly namespaces: readonly string[];
  /** The narrowed resources (`plural` or `plural.group`, as in {@link ControllerResource.resources}) and their namespaces, by key. */
  readonly narrowed: readonly NarrowedResource[];
}

/** A controller resource the `rbac` prop moved from cluster scope to namespaces (recorded in the environment descriptor for the verifier). */
export interface NarrowedResource {
  readonly key: string;
  readonly resources: readonly string[];
  readonly namespaces: readonly string[];
}

/**
 * Applies the `rbac` prop to the controller's pinned ClusterRoles. Keys compare without case (`networkPolicies` is
 * `networkpolicies`). A key at `'cluster'` changes nothing. A key narrowed to namespaces moves its rules (resource and
 * subresources, same groups, verbs and resourceNames) out of each ClusterRole into a Role `<clusterRole>-namespaced` in
 * each namespace, bound by a RoleBinding of the same name to the ClusterRoleBinding's subjects.
 *
 * @throws ConstructPropsError for a key that names no resource of the controller's ClusterRoles (lists the valid keys), or
 *   two keys naming the same resource.
 * @throws RbacNarrowingError for a narrowed resource the controller lists or watches (it needs cluster scope, and the
 *   release has no flag restricting the controller to namespaces), or a cluster-scoped resource (no Role can grant it).
 */
export function scopeControllerRbac(input: ControllerRbacInput): ControllerRbacResult {
  const roles = controllerRoles(input.objects, input.serviceAccount, input.namespace);
  const resources = resourcesOf(roles, input.tag);
  const byKey = new Map(resources.map((r) => [r.key, r]));
  const narrowed = new Map<string, { given: string; namespaces: string[] }>();
  const seen = new Map<string, string>();
  const issues: PropProblem[] = [];
  for (const [given, scope] of Object.entries(input.scopes)) {
    const key = given.toLowerCase();
    if (!byKey.has(key)) {
      issues.push({
        prop: `rbac.${given}`,
        reason: 'UnknownResource',
        value: scope,
        allowed: resources.map((r) => r.key),
        message: `rbac.${given}: names no resource of the controller's ${describeRoles(roles, input.tag).join(' or ')} (got ${JSON.stringify(scope)})`,
      });
      continue;
    }
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      issues.push({
        prop: `rbac.${given}`,
        reason: 'DuplicateResource',
        value: scope,
        message: `rbac.${given}: names the same resource (${key}) as rbac.${earlier}`,
      });
      continue;
    }
    seen.set(key, given);
    if (scope === 'cluster') continue;
    const namespaces = [
      ...new Set((typeof scope === 'string' ? [scope] : scope).map((s) => s.slice('namespace:'.length))),
    ].sort();
    narrowed.set(key, { given, namespaces });
  }
  if (issues.length > 0) {
    throw new ConstructPropsError(
      input.path,
      'AgentSandboxInstall',
      issues,
      `use one key per resource, one of: ${resources.map((r) => r.key).join(', ')} (compared without case, so networkPolicies = networkpolicies)`,
    );
  }

  for (const [key, { given, namespaces }] of narrowed) {
    const resource = byKey.get(key)!;
    const clusterScoped = resource.resources.some((r) => CLUSTER_SCOPED.has(r));
    if (resource.watched || clusterScoped) {
      throw new RbacNarrowingError(input.path, {
        field: `rbac.${given}`,
        resource: resource.resources.join(', '),
        verbs: resource.verbs,
        namespaces,
        release: input.tag,
        grantedBy: resource.grantedBy,
        reason: clusterScoped ? 'ClusterScopedResource' : 'ControllerWatchesCluster',
        serviceAccount: `system:serviceaccount:${input.namespace}:${input.serviceAccount}`,
      });
    }
  }

  const added: Json[] = [];
  const addedNamespaces = new Set<string>();
  for (const role of roles) {
    // per namespace, the rules moved out of this ClusterRole (one rule per narrowed key, so each goes only where its key is scoped)
    const movedByNs = new Map<string, Json[]>();
    const kept: unknown[] = [];
    for (const rule of list(role.obj, 'rules')) {
      const resourcesHere = isPlainObject(rule) ? strings(rule, 'resources') : [];
      const keys = [...new Set(resourcesHere.map(baseResource).filter((k) => narrowed.has(k)))];
      if (!isPlainObject(rule) || keys.length === 0) {
        kept.push(rule);
        continue;
      }
      for (const key of keys) {
        const moved = { ...structuredClone(rule), resources: resourcesHere.filter((r) => baseResource(r) === key) };
        for (const ns of narrowed.get(key)!.namespaces) movedByNs.set(ns, [...(movedByNs.get(ns) ?? []), moved]);
      }
      const rest = resourcesHere.filter((r) => !narrowed.has(baseResource(r)));
      if (rest.length > 0) kept.push({ ...rule, resources: rest });
    }
    if (movedByNs.size === 0) continue;
    role.obj['rules'] = kept;
    const name = `${role.name}-namespaced`;
    for (const ns of [...movedByNs.keys()].sort()) {
      addedNamespaces.add(ns);
      added.push({
        apiVersion: `${RBAC_GROUP}/v1`,
        kind: 'Role',
        metadata: { name, namespace: ns },
        rules: structuredClone(movedByNs.get(ns)),
      });
      added.push({
        apiVersion: `${RBAC_GROUP}/v1`,
        kind: 'RoleBinding',
        metadata: { name, namespace: ns },
        subjects: structuredClone(role.subjects),
        roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name },
      });
    }
  }
  const narrowedResources = [...narrowed]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, { namespaces }]) => ({ key, resources: byKey.get(key)!.resources, namespaces }));
  return { resources, added, namespaces: [...addedNamespaces].sort(), narrowed: narrowedResources };
}
