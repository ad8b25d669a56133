import { jest } from '@jest/globals';
import { k8s } from 'cdk8s-plus-28';
import {
  ConflictError,
  ConstructError,
  ConstructPropsError,
  UnpinnedImageError,
} from '../../../src/constructs/index.js';
import { IMAGE, newEnvironment, podSpec, release } from './fixture.js';
import { thrownBy } from '../thrown.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

async function env(tag: 'v0.4.6' | 'v0.5.6' = 'v0.5.6') {
  const e = newEnvironment(await release(tag), 'env', { install: false });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  return { e, rc };
}

describe('SandboxTemplate', () => {
  test('an id already used in the environment is refused with its path, whatever kind the second construct is', async () => {
    const { e, rc } = await env();
    e.addTemplate('shell', { runtimeClass: rc, podSpec: podSpec() });
    const err = thrownBy(
      () => e.addWarmPool('shell', { template: e.addTemplate('other', { runtimeClass: rc, podSpec: podSpec() }) }),
      ConstructError,
      'DuplicateConstructId',
    );
    expect(err.path).toBe('env/shell');
    thrownBy(
      () => e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true }),
      ConstructError,
      'DuplicateConstructId',
    );
  });

  test('writes v1beta1 on v0.5.6 with secure defaults, runtime class, pod labels, Managed without own policies', async () => {
    const { e, rc } = await env();
    const t = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
    const json = t.apiObject.toJson();
    expect(json.apiVersion).toBe('extensions.agents.x-k8s.io/v1beta1');
    expect(json.metadata).toEqual({
      name: 'py',
      namespace: 'agent-sandboxes',
      labels: { 'agentplane.dev/environment': 'env' },
    });
    expect(json.spec.networkPolicyManagement).toBe('Managed');
    expect(json.spec.envVarsInjectionPolicy).toBe('Disallowed');
    expect(json.spec.podTemplate.metadata.labels).toEqual({
      'agentplane.dev/template': 'py',
      'agentplane.dev/environment': 'env',
    });
    const spec = json.spec.podTemplate.spec;
    expect(spec.runtimeClassName).toBe('gvisor');
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(spec.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(t.runtime).toEqual({ kind: 'custom', container: 'main', ports: [8888] });
  });

  test('writes v1alpha1 on v0.4.6', async () => {
    const { e, rc } = await env('v0.4.6');
    expect(e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() }).apiObject.toJson().apiVersion).toBe(
      'extensions.agents.x-k8s.io/v1alpha1',
    );
  });

  test('explicit security settings are kept', async () => {
    const { e, rc } = await env();
    const spec: k8s.PodSpec = {
      ...podSpec(),
      automountServiceAccountToken: true,
      securityContext: { runAsNonRoot: false },
    };
    const json = e.addTemplate('py', { runtimeClass: rc, podSpec: spec }).apiObject.toJson();
    expect(json.spec.podTemplate.spec.automountServiceAccountToken).toBe(true);
    expect(json.spec.podTemplate.spec.securityContext.runAsNonRoot).toBe(false);
  });

  test('containers without limits, privileged containers and host namespaces are refused, all listed', async () => {
    const { e, rc } = await env();
    const spec: k8s.PodSpec = {
      hostNetwork: true,
      containers: [{ name: 'a', image: IMAGE, securityContext: { privileged: true } }],
    };
    const err = (() => {
      try {
        e.addTemplate('py', { runtimeClass: rc, podSpec: spec });
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).path).toBe('env/py');
    expect((err as ConstructPropsError).issues).toEqual([
      'podSpec.hostNetwork is true: sandbox pods must not share host namespaces',
      'container a is privileged',
      "container a has no resources.limits.cpu / memory (required: a sandbox must not take a node's capacity)",
    ]);
    expect((err as ConstructPropsError).problems.map(({ prop, reason, value }) => ({ prop, reason, value }))).toEqual([
      { prop: 'podSpec.hostNetwork', reason: 'HostNamespace', value: true },
      { prop: 'podSpec.containers.a.securityContext.privileged', reason: 'PrivilegedContainer', value: true },
      { prop: 'podSpec.containers.a.resources.limits', reason: 'MissingResourceLimits', value: ['cpu', 'memory'] },
    ]);
  });

  test('a runtimeClassName that contradicts the construct is refused', async () => {
    const { e, rc } = await env();
    const err = thrownBy(
      () => e.addTemplate('py', { runtimeClass: rc, podSpec: { ...podSpec(), runtimeClassName: 'runc' } }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems).toEqual([
      expect.objectContaining({ prop: 'podSpec.runtimeClassName', reason: 'RuntimeClassContradiction', value: 'runc' }),
    ]);
  });

  test('an unpinned image is refused with the container named', async () => {
    const { e, rc } = await env();
    thrownBy(
      () => e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec('busybox') }),
      UnpinnedImageError,
      'UnpinnedImage',
    );
    const err = thrownBy(
      () => e.addTemplate('py2', { runtimeClass: rc, podSpec: podSpec('busybox') }),
      UnpinnedImageError,
      'UnpinnedImage',
    );
    expect([err.path, err.where, err.image, err.unpinned]).toEqual([
      'env/py2',
      'SandboxTemplate py2 containers[main]',
      'busybox',
      'NoTagOrDigest',
    ]);
  });

  test('a runtime container that does not exist is refused', async () => {
    const { e, rc } = await env();
    const err = thrownBy(
      () =>
        e.addTemplate('py', {
          runtimeClass: rc,
          podSpec: podSpec(),
          runtime: { kind: 'sandboxd', container: 'sandboxd', ports: [8080] },
        }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems).toEqual([
      expect.objectContaining({ prop: 'runtime.container', reason: 'UnknownContainer', value: 'sandboxd' }),
    ]);
  });

  test('custom managed rules are written; with own policies they are a conflict', async () => {
    const { e, rc } = await env();
    const rules = { egress: [{ ports: [{ port: k8s.IntOrString.fromNumber(443), protocol: 'TCP' }] }] };
    const t = e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(), networkPolicy: rules });
    expect(t.apiObject.toJson().spec.networkPolicy).toEqual({ egress: [{ ports: [{ port: 443, protocol: 'TCP' }] }] });
    e.addNetworkPolicy('np', { template: t });
    const conflict = thrownBy(() => t.networkPolicyManagement, ConflictError, 'Conflict');
    expect([conflict.path, conflict.conflicting]).toEqual(['env/py', ['py-sandbox-policy']]);
    expect(t.node.validate()).toEqual([
      expect.stringMatching(/^template agent-sandboxes\/py sets custom networkPolicy rules/),
    ]);
    // cdk8s wraps what a lazy value throws in a plain Error, so serializing fails without the class
    expect(() => t.apiObject.toJson()).toThrow();
  });

  test('outside an AgentEnvironment it says where to create it', async () => {
    const { SandboxTemplate, SandboxRuntimeClass } = await import('../../../src/constructs/index.js');
    const { App, Chart } = await import('cdk8s');
    const chart = new Chart(new App(), 'plain');
    const rc = new SandboxRuntimeClass(chart, 'rc', { preset: 'gvisor', allNodes: true });
    const err = thrownBy(
      () => new SandboxTemplate(chart, 't', { runtimeClass: rc, podSpec: podSpec() }),
      ConstructError,
      'OutsideEnvironment',
    );
    expect(err.path).toBe('plain/t');
  });
});
