/**
 * Case controller-rbac-gaps (constructs side): the controller's RBAC comes from the pinned generated RBAC files, and a
 * narrowing of a resource the controller lists/watches cluster-wide fails synthesis, because no supported release has a
 * flag restricting the controller's watch to namespaces (`cmd/agent-sandbox-controller/main.go@tag`).
 * The verifier side is controller-rbac-gaps.verify.test.ts.
 */
import { jest } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { AgentSandboxInstall, RbacNarrowingError, synthesizeEnvironment } from '../../src/index.js';
import { planFromDescriptor } from '../../src/verify/environment.js';
import { controllerNeeds, describeNeed, scopedNeeds } from '../../src/verify/probes/controller.js';
import { newEnvironment, release } from '../unit/constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

function attempt(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('case controller-rbac-gaps: controller RBAC narrowing checked against the watch scope', () => {
  test('reproduction: v0.5.6 with rbac.networkPolicies "namespace:sbx" fails with RbacNarrowingError at the construct path', async () => {
    const rel = await release('v0.5.6');
    const err = attempt(
      () =>
        new AgentSandboxInstall(new Chart(new App(), 'chart'), 'i', {
          release: rel,
          rbac: { networkPolicies: 'namespace:sbx' },
        }),
    );
    expect(err).toBeInstanceOf(RbacNarrowingError);
    expect((err as RbacNarrowingError).reason).toBe('ControllerWatchesCluster');
    const e = err as RbacNarrowingError;
    expect(e.path).toBe('chart/i');
    expect(e.field).toBe('rbac.networkPolicies');
    expect(e.resource).toBe('networkpolicies.networking.k8s.io');
    expect(e.verbs).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    expect(e.namespaces).toEqual(['sbx']);
    expect(e.release).toBe('v0.5.6');
    expect(e.reason).toBe('ControllerWatchesCluster');
    expect(e.grantedBy).toEqual([
      'ClusterRole agent-sandbox-controller-extensions in k8s/extensions-rbac.generated.yaml@v0.5.6',
    ]);
    expect(e.serviceAccount).toBe('system:serviceaccount:agent-sandbox-system:agent-sandbox-controller');
    expect(e.hint).toBeDefined();
  });

  test('inside an environment the narrowing is refused while the environment is built, so synthesis never starts', async () => {
    const rel = await release('v0.5.6');
    const err = attempt(() =>
      synthesizeEnvironment(
        newEnvironment(rel, 'sbx', { install: { rbac: { networkPolicies: ['namespace:sbx', 'namespace:team-a'] } } }),
      ),
    );
    expect(err).toBeInstanceOf(RbacNarrowingError);
    expect((err as RbacNarrowingError).reason).toBe('ControllerWatchesCluster');
    expect((err as RbacNarrowingError).path).toBe('sbx/install');
    expect((err as RbacNarrowingError).namespaces).toEqual(['sbx', 'team-a']);
  });

  test('the one resource the controller neither lists nor watches (events) synthesizes as Roles in the rbac phase, with their Namespace', async () => {
    const rel = await release('v0.5.6');
    const s = synthesizeEnvironment(newEnvironment(rel, 'sbx', { install: { rbac: { events: 'namespace:team-x' } } }));
    const placed = s.objects
      .filter(
        (o) =>
          o.object.metadata?.namespace === 'team-x' ||
          (o.object.kind === 'Namespace' && o.object.metadata?.name === 'team-x'),
      )
      .map((o) => `${o.phase} ${o.object.kind}/${o.object.metadata?.name}`)
      .sort();
    expect(placed).toEqual([
      'namespaces Namespace/team-x',
      'rbac Role/agent-sandbox-controller-extensions-namespaced',
      'rbac Role/agent-sandbox-controller-namespaced',
      'rbac RoleBinding/agent-sandbox-controller-extensions-namespaced',
      'rbac RoleBinding/agent-sandbox-controller-namespaced',
    ]);
    const clusterRoles = s.objects.filter((o) => o.object.kind === 'ClusterRole').map((o) => JSON.stringify(o.object));
    expect(clusterRoles).toHaveLength(2);
    for (const text of clusterRoles) expect(text).not.toContain('"events"');
  });

  test('the events narrowing reaches the verifier through the descriptor: it checks events where the environment granted them, not cluster-wide', async () => {
    const rel = await release('v0.5.6');
    const s = synthesizeEnvironment(
      newEnvironment(rel, 'sbx', {
        install: { rbac: { events: ['namespace:team-x', 'namespace:agent-sandbox-system'] } },
      }),
    );
    expect(s.descriptor.install?.rbacNarrowed).toEqual([
      { resources: ['events', 'events.events.k8s.io'], namespaces: ['agent-sandbox-system', 'team-x'] },
    ]);
    const plan = planFromDescriptor(s.descriptor, 'dist/sbx', { transport: 'direct' });
    const needs = scopedNeeds(controllerNeeds(rel.objects.values(), true), plan.controller.rbacNarrowed).map(
      describeNeed,
    );
    expect(needs.filter((n) => n.includes('events')).sort()).toEqual(
      [
        'create events.events.k8s.io in agent-sandbox-system',
        'create events.events.k8s.io in team-x',
        'patch events.events.k8s.io in agent-sandbox-system',
        'patch events.events.k8s.io in team-x',
        'update events.events.k8s.io in agent-sandbox-system',
        'update events.events.k8s.io in team-x',
        'create events in agent-sandbox-system',
        'create events in team-x',
        'patch events in agent-sandbox-system',
        'patch events in team-x',
        'update events in agent-sandbox-system',
        'update events in team-x',
      ].sort(),
    );
    expect(needs).toContain('watch networkpolicies.networking.k8s.io (cluster-wide)');
    // without a narrowing nothing moves, and no descriptor field is written (unchanged golden output)
    const plain = synthesizeEnvironment(newEnvironment(rel, 'sbx'));
    expect(plain.descriptor.install).not.toHaveProperty('rbacNarrowed');
    expect(
      scopedNeeds(
        controllerNeeds(rel.objects.values(), true),
        planFromDescriptor(plain.descriptor, 'dist/sbx', { transport: 'direct' }).controller.rbacNarrowed,
      ).map(describeNeed),
    ).toContain('create events (cluster-wide)');
  });

  test.each(['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'] as const)(
    '%s: every resource the controller lists/watches refuses narrowing, citing main.go at that tag',
    async (tag) => {
      const rel = await release(tag);
      const probe = new AgentSandboxInstall(new Chart(new App(), 'c'), 'i', { release: rel });
      const watched = probe.controllerResources.filter((r) => r.watched).map((r) => r.key);
      expect(watched).toEqual([
        'leases',
        'networkpolicies',
        'persistentvolumeclaims',
        'pods',
        'sandboxclaims',
        'sandboxes',
        'sandboxtemplates',
        'sandboxwarmpools',
        'services',
      ]);
      for (const key of watched) {
        const err = attempt(
          () =>
            new AgentSandboxInstall(new Chart(new App(), 'c'), 'i', { release: rel, rbac: { [key]: 'namespace:sbx' } }),
        );
        expect(err).toBeInstanceOf(RbacNarrowingError);
        expect((err as RbacNarrowingError).reason).toBe('ControllerWatchesCluster');
        expect((err as RbacNarrowingError).release).toBe(tag);
        expect((err as RbacNarrowingError).verbs).toEqual(expect.arrayContaining(['list', 'watch']));
      }
    },
  );
});
