/**
 * AgentSandboxInstall `rbac` prop: keys from the pinned controller ClusterRoles (`k8s/rbac.generated.yaml@tag`,
 * `k8s/extensions-rbac.generated.yaml@tag`), 'cluster' leaves the output as pinned, a resource the controller neither
 * lists nor watches (events) moves to per-namespace Roles, anything else is refused (case controller-rbac-gaps).
 */
import { jest } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import {
  AgentSandboxInstall,
  ConstructPropsError,
  RbacNarrowingError,
  type AgentSandboxInstallProps,
} from '../../../src/constructs/index.js';
import type { ReleaseTag } from '../../../src/releases/index.js';
import { release } from './fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const TAGS = ['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'] as const;
const SA = [{ kind: 'ServiceAccount', name: 'agent-sandbox-controller', namespace: 'agent-sandbox-system' }];

async function build(
  tag: ReleaseTag,
  props: Omit<AgentSandboxInstallProps, 'release'> = {},
): Promise<{ install: AgentSandboxInstall; objects: Array<Record<string, any>> }> {
  const install = new AgentSandboxInstall(new Chart(new App(), 'c'), 'i', { release: await release(tag), ...props });
  return { install, objects: install.objects.map((o) => o.toJson() as Record<string, any>) };
}

async function failure(tag: ReleaseTag, props: Omit<AgentSandboxInstallProps, 'release'>): Promise<unknown> {
  return build(tag, props).then(
    () => undefined,
    (e: unknown) => e,
  );
}

function named(
  objects: Array<Record<string, any>>,
  kind: string,
  name: string,
  namespace?: string,
): Record<string, any> | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
}

function grantsEvents(rules: Array<Record<string, any>>): boolean {
  return rules.some((r) => (r.resources as string[]).includes('events'));
}

describe('AgentSandboxInstall rbac', () => {
  test.each(TAGS)(
    '%s: rbac omitted, {} and "cluster" for every key synthesize the same objects as pinned',
    async (tag) => {
      const pinned = await build(tag);
      const allCluster = Object.fromEntries(pinned.install.controllerResources.map((r) => [r.key, 'cluster' as const]));
      expect(Object.keys(allCluster).length).toBeGreaterThanOrEqual(10);
      expect((await build(tag, { rbac: {} })).objects).toEqual(pinned.objects);
      expect((await build(tag, { rbac: allCluster })).objects).toEqual(pinned.objects);
      // the pinned rules, unchanged: the extensions ClusterRole still grants networkpolicies list/watch at cluster scope
      const ext = named(pinned.objects, 'ClusterRole', 'agent-sandbox-controller-extensions')!;
      expect(ext.rules).toContainEqual({
        apiGroups: ['networking.k8s.io'],
        resources: ['networkpolicies'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      });
    },
  );

  test.each([
    [
      'v0.4.6',
      [
        'events',
        'leases',
        'networkpolicies',
        'persistentvolumeclaims',
        'pods',
        'sandboxclaims',
        'sandboxes',
        'sandboxtemplates',
        'sandboxwarmpools',
        'services',
      ],
    ],
    [
      'v0.5.0',
      [
        'customresourcedefinitions',
        'events',
        'leases',
        'networkpolicies',
        'persistentvolumeclaims',
        'pods',
        'sandboxclaims',
        'sandboxes',
        'sandboxtemplates',
        'sandboxwarmpools',
        'services',
      ],
    ],
    [
      'v0.5.6',
      [
        'customresourcedefinitions',
        'events',
        'leases',
        'networkpolicies',
        'persistentvolumeclaims',
        'pods',
        'sandboxclaims',
        'sandboxes',
        'sandboxtemplates',
        'sandboxwarmpools',
        'services',
      ],
    ],
  ] as const)(
    '%s: the keys are the resources of the pinned controller ClusterRoles; only events and customresourcedefinitions are neither listed nor watched',
    async (tag, keys) => {
      const { install } = await build(tag);
      expect(install.controllerResources.map((r) => r.key)).toEqual(keys);
      expect(install.controllerResources.filter((r) => !r.watched).map((r) => r.key)).toEqual(
        keys.filter((k) => k === 'events' || k === 'customresourcedefinitions'),
      );
      const sandboxes = install.controllerResources.find((r) => r.key === 'sandboxes')!;
      expect(sandboxes.resources).toEqual(['sandboxes.agents.x-k8s.io']); // subresources status/finalizers fold into their resource
      expect(sandboxes.grantedBy).toEqual([
        `ClusterRole agent-sandbox-controller in k8s/rbac.generated.yaml@${tag}`,
        `ClusterRole agent-sandbox-controller-extensions in k8s/extensions-rbac.generated.yaml@${tag}`,
      ]);
      expect(install.controllerResources.find((r) => r.key === 'events')!.resources).toEqual([
        'events',
        'events.events.k8s.io',
      ]);
    },
  );

  test('v0.5.6: events narrowed to two namespaces move to Role + RoleBinding per ClusterRole and namespace', async () => {
    const pinned = await build('v0.5.6');
    const { objects } = await build('v0.5.6', {
      rbac: { Events: ['namespace:team-b', 'namespace:sbx', 'namespace:sbx'] },
    });
    const core = named(objects, 'ClusterRole', 'agent-sandbox-controller')!;
    const ext = named(objects, 'ClusterRole', 'agent-sandbox-controller-extensions')!;
    expect(grantsEvents(core.rules)).toBe(false);
    expect(grantsEvents(ext.rules)).toBe(false);
    // every other pinned rule stays as it was
    const pinnedCore = named(pinned.objects, 'ClusterRole', 'agent-sandbox-controller')!;
    expect(core.rules).toEqual(pinnedCore.rules.filter((r: Record<string, any>) => !r.resources.includes('events')));
    for (const ns of ['sbx', 'team-b']) {
      expect(named(objects, 'Role', 'agent-sandbox-controller-namespaced', ns)!.rules).toEqual([
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      ]);
      expect(named(objects, 'Role', 'agent-sandbox-controller-extensions-namespaced', ns)!.rules).toEqual([
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      ]);
      const binding = named(objects, 'RoleBinding', 'agent-sandbox-controller-namespaced', ns)!;
      expect(binding.subjects).toEqual(SA);
      expect(binding.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'agent-sandbox-controller-namespaced',
      });
      expect(binding.metadata.labels['app.kubernetes.io/version']).toBe('v0.5.6');
    }
    expect(
      objects
        .filter((o) => o.kind === 'Role' || o.kind === 'RoleBinding')
        .map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)
        .sort(),
    ).toEqual([
      'Role/agent-sandbox-system/agent-sandbox-controller', // the pinned secrets Role, untouched
      'Role/sbx/agent-sandbox-controller-extensions-namespaced',
      'Role/sbx/agent-sandbox-controller-namespaced',
      'Role/team-b/agent-sandbox-controller-extensions-namespaced',
      'Role/team-b/agent-sandbox-controller-namespaced',
      'RoleBinding/agent-sandbox-system/agent-sandbox-controller',
      'RoleBinding/sbx/agent-sandbox-controller-extensions-namespaced',
      'RoleBinding/sbx/agent-sandbox-controller-namespaced',
      'RoleBinding/team-b/agent-sandbox-controller-extensions-namespaced',
      'RoleBinding/team-b/agent-sandbox-controller-namespaced',
    ]);
    expect(objects).toHaveLength(pinned.objects.length + 8);
  });

  test('v0.4.6 without extensions: events narrowing touches only the core ClusterRole (events.k8s.io rule)', async () => {
    const { objects } = await build('v0.4.6', { extensions: false, rbac: { events: 'namespace:sbx' } });
    expect(
      objects.filter((o) => o.kind === 'Role').map((o) => [o.metadata.namespace, o.metadata.name, o.rules]),
    ).toEqual([
      [
        'sbx',
        'agent-sandbox-controller-namespaced',
        [{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] }],
      ],
    ]);
  });

  test('without extensions the extension resources are unknown keys', async () => {
    const err = await failure('v0.5.6', { extensions: false, rbac: { networkPolicies: 'cluster' } });
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).problems).toEqual([
      expect.objectContaining({
        prop: 'rbac.networkPolicies',
        reason: 'UnknownResource',
        value: 'cluster',
        allowed: [
          'customresourcedefinitions',
          'events',
          'leases',
          'persistentvolumeclaims',
          'pods',
          'sandboxes',
          'services',
        ],
      }),
    ]);
    expect((err as ConstructPropsError).hint).toBeDefined();
  });

  test('an unknown key is a ConstructPropsError naming the key, the ClusterRoles searched and the valid keys', async () => {
    const err = await failure('v0.5.6', { rbac: { networkPolicy: 'namespace:sbx' } });
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    const e = err as ConstructPropsError;
    expect(e.path).toBe('c/i');
    expect(e.issues).toEqual([
      'rbac.networkPolicy: names no resource of the controller\'s ClusterRole agent-sandbox-controller in k8s/rbac.generated.yaml@v0.5.6 or ClusterRole agent-sandbox-controller-extensions in k8s/extensions-rbac.generated.yaml@v0.5.6 (got "namespace:sbx")',
    ]);
    expect(e.problems[0]!.allowed).toEqual(
      expect.arrayContaining(['customresourcedefinitions', 'events', 'leases', 'networkpolicies']),
    );
  });

  test('two spellings of one key are refused', async () => {
    const err = await failure('v0.5.6', { rbac: { networkPolicies: 'cluster', networkpolicies: 'cluster' } });
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).issues).toEqual([
      'rbac.networkpolicies: names the same resource (networkpolicies) as rbac.networkPolicies',
    ]);
  });

  test.each([
    ['ns:sbx', 'rbac.events: must be "cluster" or "namespace:<namespace>"'],
    ['namespace:Team_A', 'rbac.events: must be "cluster" or "namespace:<namespace>"'],
    [[], 'rbac.events: needs at least one "namespace:<ns>"'],
  ])('scope %j is refused by prop validation', async (scope, issue) => {
    const err = await failure('v0.5.6', { rbac: { events: scope as 'cluster' } });
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).issues.join('\n')).toContain(issue);
  });

  test.each(['v0.5.0', 'v0.5.6'] as const)(
    '%s: narrowing the cluster-scoped customresourcedefinitions is refused',
    async (tag) => {
      const err = await failure(tag, { rbac: { customResourceDefinitions: 'namespace:agent-sandbox-system' } });
      expect(err).toBeInstanceOf(RbacNarrowingError);
      const e = err as RbacNarrowingError;
      expect(e.reason).toBe('ClusterScopedResource');
      expect(e.resource).toBe('customresourcedefinitions.apiextensions.k8s.io');
      expect(e.verbs).toEqual(['get', 'patch', 'update']);
      expect([e.field, e.namespaces, e.release]).toEqual([
        'rbac.customResourceDefinitions',
        ['agent-sandbox-system'],
        tag,
      ]);
    },
  );

  test('v0.5.0: narrowing pods reports the verbs of both ClusterRoles and no v0.5.6-only flag', async () => {
    const err = await failure('v0.5.0', { rbac: { pods: ['namespace:sbx'] } });
    expect(err).toBeInstanceOf(RbacNarrowingError);
    expect((err as RbacNarrowingError).reason).toBe('ControllerWatchesCluster');
    const e = err as RbacNarrowingError;
    expect(e.resource).toBe('pods');
    expect(e.verbs).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    expect(e.grantedBy).toHaveLength(2);
    expect([e.field, e.namespaces, e.release]).toEqual(['rbac.pods', ['sbx'], 'v0.5.0']);
    expect(e.message).not.toContain('--cache-label-selectors');
  });
});
