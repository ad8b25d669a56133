/**
 * Case chart-namespace-cluster-scoped: a chart namespace is never stamped onto cluster-scoped objects. Scope comes from
 * the pinned CRD's `spec.scope` and a table of core kinds. Inside an environment the rendering drops it; outside one,
 * the constructs that write cluster-scoped objects refuse a Chart with a namespace.
 */
import { jest } from '@jest/globals';
import { ApiObject, App, Chart, Testing } from 'cdk8s';
import {
  AgentSandboxInstall,
  ConstructError,
  isClusterScoped,
  SandboxRuntimeClass,
  synthesizeEnvironment,
  VerifierAccess,
} from '../../src/index.js';
import { thrownBy } from '../unit/thrown.js';
import { newEnvironment, release } from '../unit/constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const CLUSTER_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Namespace', 'RuntimeClass'];

describe('case chart-namespace-cluster-scoped: chart namespace on cluster-scoped objects', () => {
  test("a Chart with namespace 'sbx' holding the RuntimeClass and the install: cluster-scoped objects carry no namespace", async () => {
    const rel = await release('v0.5.6');
    const env = newEnvironment(rel, 'env', { install: false });
    const chart = new Chart(env, 'c', { namespace: 'sbx' });
    new SandboxRuntimeClass(chart, 'gvisor', { preset: 'gvisor', allNodes: true });
    new AgentSandboxInstall(chart, 'install', { release: rel });
    new ApiObject(chart, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' } });
    const s = synthesizeEnvironment(env);
    const seen = new Set<string>();
    for (const { object } of s.objects) {
      if (CLUSTER_KINDS.includes(object.kind)) {
        seen.add(object.kind);
        expect(object.metadata).not.toHaveProperty('namespace');
      } else {
        expect(typeof object.metadata?.namespace).toBe('string');
      }
    }
    expect([...seen].sort()).toEqual(CLUSTER_KINDS);
    // namespaced objects keep theirs: upstream's explicit one, or the chart's
    expect(s.objects.find((o) => o.object.kind === 'Deployment')!.object.metadata?.namespace).toBe(
      'agent-sandbox-system',
    );
    expect(s.objects.find((o) => o.object.metadata?.name === 'plain')!.object.metadata?.namespace).toBe('sbx');
    const yaml = s.files.find((f) => f.path === 'env/04-runtime-classes.yaml')!.content;
    expect(yaml).not.toContain('namespace:');
  });

  test('outside an environment, a Chart with a namespace refuses the constructs that write cluster-scoped objects', async () => {
    const rel = await release('v0.5.6');
    const chart = new Chart(new App(), 'plain', { namespace: 'sbx' });
    const rc = thrownBy(
      () => new SandboxRuntimeClass(chart, 'gvisor', { preset: 'gvisor', allNodes: true }),
      ConstructError,
      'ClusterScopedInNamespacedChart',
    );
    expect(rc.path).toBe('plain/gvisor');
    const install = thrownBy(
      () => new AgentSandboxInstall(chart, 'install', { release: rel }),
      ConstructError,
      'ClusterScopedInNamespacedChart',
    );
    expect(install.path).toBe('plain/install');
    thrownBy(
      () => new VerifierAccess(chart, 'access', { namespace: 'sbx', sandboxNamespaces: ['sbx'] }),
      ConstructError,
      'ClusterScopedInNamespacedChart',
    );
    // a plain Chart without a namespace writes the RuntimeClass without one
    const bare = new Chart(new App(), 'bare');
    new SandboxRuntimeClass(bare, 'gvisor', { preset: 'gvisor', allNodes: true });
    const [written] = Testing.synth(bare);
    expect(written.kind).toBe('RuntimeClass');
    expect(written.metadata).not.toHaveProperty('namespace');
  });

  test('scope of Agent Sandbox kinds comes from the pinned CRDs', async () => {
    const rel = await release('v0.5.6');
    expect(isClusterScoped({ apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxTemplate' }, rel)).toBe(
      false,
    );
    expect(isClusterScoped({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass' }, rel)).toBe(true);
    expect(isClusterScoped({ apiVersion: 'v1', kind: 'Namespace' }, rel)).toBe(true);
    expect(isClusterScoped({ apiVersion: 'v1', kind: 'ConfigMap' }, rel)).toBe(false);
  });
});
