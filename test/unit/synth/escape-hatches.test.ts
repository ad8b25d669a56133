/**
 * Checks on what is actually written (issue 27, item 2): JSON patches on an ApiObject (cdk8s's escape hatch) run after
 * the construct props were checked, so the output rules run again on the rendered objects. A patch that writes a
 * `:latest` image, removes a sandbox pod's limits or floats the controller image fails synthesis naming the patched
 * ApiObject's construct path, under `synthesizeEnvironment` and under cdk8s (`Testing.synth`, `app.synth()`); the
 * descriptor and the lock are read from the written objects, so they follow every patch that is allowed; a deliberate
 * exception is an acknowledgement, recorded in the descriptor. Capacity (declared nodes of a RuntimeClass) is judged
 * on the written pool replicas and template requests; reachability on the written policies (written-reachability.test.ts).
 */
import { jest } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, JsonPatch, Testing } from 'cdk8s';
import {
  AgentEnvironment,
  ConstructError,
  ConstructPropsError,
  EnvironmentInvalidError,
  environmentsLock,
  OutputRuleError,
  sandboxdPodSpec,
  SANDBOXD_RUNTIME,
  synthesizeEnvironment,
  type LoadedRelease,
} from '../../../src/index.js';
import { capacityOf } from '../../../src/synth/index.js';
import { release } from '../constructs/fixture.js';
import { thrownBy } from '../thrown.js';

jest.setTimeout(120_000);

const SANDBOXD = 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6';

/** The environment: v0.5.6 install, gVisor, one sandboxd template, a warm pool of 2. */
function build(rel: LoadedRelease, app = new App()): AgentEnvironment {
  const env = new AgentEnvironment(app, 'dev', { release: rel, defaultNamespace: 'dev-sandboxes' });
  const gvisor = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const shell = env.addTemplate('shell', {
    runtimeClass: gvisor,
    podSpec: sandboxdPodSpec({ image: SANDBOXD, resources: { cpu: '250m', memory: '256Mi' } }),
    runtime: SANDBOXD_RUNTIME,
  });
  env.addWarmPool('pool', { template: shell, replicas: 2 });
  return env;
}

const IMAGE_PATH = '/spec/podTemplate/spec/containers/0/image';
const controllerDeployment = (env: AgentEnvironment) =>
  env.install!.objects.find((o) => o.kind === 'Deployment' && o.name === 'agent-sandbox-controller')!;

let rel: LoadedRelease;
beforeAll(async () => {
  rel = await release('v0.5.6');
});

describe('a patch that breaks an output rule fails synthesis, naming the patched ApiObject', () => {
  test('template image patched to :latest (the issue example)', () => {
    const env = build(rel);
    env.templates[0]!.apiObject.addJsonPatch(JsonPatch.replace(IMAGE_PATH, 'r.example/sandboxd:latest'));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path, v.field, v.value])).toEqual([
      [
        'UnpinnedImage',
        'dev/shell/Resource',
        'spec.podTemplate.spec.containers[sandboxd].image',
        'r.example/sandboxd:latest',
      ],
    ]);
    expect(err.violations[0]!.object).toEqual({
      group: 'extensions.agents.x-k8s.io',
      kind: 'SandboxTemplate',
      namespace: 'dev-sandboxes',
      name: 'shell',
    });
  });

  test('resources/limits removed from the sandbox container', () => {
    const env = build(rel);
    env.templates[0]!.apiObject.addJsonPatch(JsonPatch.remove('/spec/podTemplate/spec/containers/0/resources/limits'));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path, v.field, v.value])).toEqual([
      [
        'MissingResourceLimits',
        'dev/shell/Resource',
        'spec.podTemplate.spec.containers.sandboxd.resources.limits',
        ['cpu', 'memory'],
      ],
    ]);
  });

  test('the controller image patched to :latest', () => {
    const env = build(rel);
    controllerDeployment(env).addJsonPatch(
      JsonPatch.replace(
        '/spec/template/spec/containers/0/image',
        'registry.k8s.io/agent-sandbox/agent-sandbox-controller:latest',
      ),
    );
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path, v.object.kind, v.value])).toEqual([
      [
        'UnpinnedImage',
        controllerDeployment(env).node.path,
        'Deployment',
        'registry.k8s.io/agent-sandbox/agent-sandbox-controller:latest',
      ],
    ]);
    expect(controllerDeployment(env).node.path.startsWith('dev/install/')).toBe(true);
  });

  test('a privileged container added by a patch', () => {
    const env = build(rel);
    env.templates[0]!.apiObject.addJsonPatch(
      JsonPatch.add('/spec/podTemplate/spec/containers/0/securityContext/privileged', true),
    );
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => v.rule)).toEqual(['PrivilegedContainer']);
  });

  test('an image of a known-defective release patched in (KnownDefectiveImage)', () => {
    const env = build(rel);
    const defective = 'registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.5.0';
    env.templates[0]!.apiObject.addJsonPatch(JsonPatch.replace(IMAGE_PATH, defective));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path, v.value])).toEqual([
      ['KnownDefectiveImage', 'dev/shell/Resource', defective],
    ]);
  });

  test('cdk8s synthesis refuses the same patches (Testing.synth and app.synth())', () => {
    const env = build(rel);
    env.templates[0]!.apiObject.addJsonPatch(JsonPatch.replace(IMAGE_PATH, 'r.example/sandboxd:latest'));
    const err = thrownBy(() => Testing.synth(env), ConstructError, 'ConstructInvalid');
    expect(err.path).toBe('dev');
    // prose: cdk8s validations carry text only; the line names the patched ApiObject's path and the rule
    expect(err.detail).toContain('dev/shell/Resource: SandboxTemplate dev-sandboxes/shell containers[sandboxd]');
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'agentplane-escape-')) });
    const other = build(rel, app);
    controllerDeployment(other).addJsonPatch(
      JsonPatch.replace(
        '/spec/template/spec/containers/0/image',
        'registry.k8s.io/agent-sandbox/agent-sandbox-controller:latest',
      ),
    );
    expect(() => app.synth()).toThrow(Error);
  });
});

describe('the descriptor, the lock images and the capacity are read from the written objects', () => {
  test('a pinned image patched in is the image of the descriptor and of the lock', () => {
    const env = build(rel);
    env.templates[0]!.apiObject.addJsonPatch(JsonPatch.replace(IMAGE_PATH, 'r.example/sandboxd:v0.5.7'));
    controllerDeployment(env).addJsonPatch(
      JsonPatch.replace('/spec/template/spec/containers/0/image', 'mirror.example/agent-sandbox-controller:v0.5.6'),
    );
    const s = synthesizeEnvironment(env);
    expect(s.images).toEqual({
      controller: 'mirror.example/agent-sandbox-controller:v0.5.6',
      'template/dev-sandboxes/shell/sandboxd': 'r.example/sandboxd:v0.5.7',
    });
    expect(s.descriptor.install!.controllerImage).toBe('mirror.example/agent-sandbox-controller:v0.5.6');
    expect(s.descriptor.templates[0]!.images).toEqual([{ container: 'sandboxd', image: 'r.example/sandboxd:v0.5.7' }]);
    const written = s.objects.find((o) => o.object.kind === 'SandboxTemplate')!.object as any;
    expect(written.spec.podTemplate.spec.containers[0].image).toBe('r.example/sandboxd:v0.5.7');
  });

  test('patched pool replicas and container requests are what the descriptor and capacity count', () => {
    const env = build(rel);
    env.warmPools[0]!.apiObject.addJsonPatch(JsonPatch.replace('/spec/replicas', 5));
    env.templates[0]!.apiObject.addJsonPatch(
      JsonPatch.replace('/spec/podTemplate/spec/containers/0/resources/requests/cpu', '500m'),
      JsonPatch.replace('/spec/podTemplate/spec/containers/0/resources/limits/cpu', '500m'),
    );
    const s = synthesizeEnvironment(env);
    expect(s.descriptor.warmPools.map((p) => p.replicas)).toEqual([5]);
    const [gvisor] = capacityOf(env);
    expect(gvisor!.pools.map((p) => [p.pods, p.requests.cpu])).toEqual([[5, '2500m']]);
  });
});

describe('a deliberate exception is acknowledged and recorded', () => {
  test('acknowledged: synthesis passes and the descriptor records rule, path and reason', () => {
    const env = build(rel);
    const shell = env.templates[0]!;
    shell.apiObject.addJsonPatch(JsonPatch.replace(IMAGE_PATH, 'r.example/sandboxd:latest'));
    env.acknowledge({ rule: 'UnpinnedImage', path: shell, reason: 'nightly smoke environment tracks latest' });
    const s = synthesizeEnvironment(env);
    expect(s.descriptor.acknowledgements).toEqual([
      { rule: 'UnpinnedImage', path: 'dev/shell', reason: 'nightly smoke environment tracks latest' },
    ]);
    expect(s.images['template/dev-sandboxes/shell/sandboxd']).toBe('r.example/sandboxd:latest');
    expect(environmentsLock(rel, [s.descriptor]).acknowledgements).toEqual({
      'dev/UnpinnedImage/dev/shell': 'nightly smoke environment tracks latest',
    });
  });

  test('an acknowledgement covers only its rule: the limits removed beside it still fail', () => {
    const env = build(rel);
    const shell = env.templates[0]!;
    shell.apiObject.addJsonPatch(
      JsonPatch.replace(IMAGE_PATH, 'r.example/sandboxd:latest'),
      JsonPatch.remove('/spec/podTemplate/spec/containers/0/resources/limits'),
    );
    env.acknowledge({ rule: 'UnpinnedImage', path: shell, reason: 'tracks latest' });
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => v.rule)).toEqual(['MissingResourceLimits']);
  });

  test('an acknowledgement that covers nothing fails (UnusedAcknowledgement); bad ones are refused', () => {
    const env = build(rel);
    env.acknowledge({ rule: 'UnpinnedImage', path: 'dev/shell', reason: 'left over' });
    const err = thrownBy(() => synthesizeEnvironment(env), EnvironmentInvalidError, 'EnvironmentInvalid');
    expect(err.problems.map((p) => [p.path, p.reason])).toEqual([['dev/shell', 'UnusedAcknowledgement']]);
    const e2 = build(rel);
    const bad = thrownBy(
      () => e2.acknowledge({ rule: 'Whatever' as 'UnpinnedImage', path: 'dev/shell', reason: '' }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(bad.problems.map((p) => [p.prop, p.reason])).toEqual([
      ['rule', 'UnknownRule'],
      ['reason', 'Required'],
    ]);
  });
});

describe('capacity is checked on the written pools and templates', () => {
  /** The environment with the gVisor nodes declared: 2 nodes of 1 cpu / 1Gi hold the 2 pods of 250m. */
  function sized(): AgentEnvironment {
    const env = new AgentEnvironment(new App(), 'dev', { release: rel, defaultNamespace: 'dev-sandboxes' });
    const gvisor = env.addRuntimeClass('gvisor', {
      preset: 'gvisor',
      allNodes: true,
      nodes: { count: 2, allocatable: { cpu: '1', memory: '1Gi' } },
    });
    const shell = env.addTemplate('shell', {
      runtimeClass: gvisor,
      podSpec: sandboxdPodSpec({ image: SANDBOXD, resources: { cpu: '250m', memory: '256Mi' } }),
      runtime: SANDBOXD_RUNTIME,
    });
    env.addWarmPool('pool', { template: shell, replicas: 2 });
    return env;
  }

  test('pool replicas patched past the declared nodes: NodesExhausted naming the pool', () => {
    const env = sized();
    expect(capacityOf(env)[0]!.nodes!.needed).toBe(1);
    env.warmPools[0]!.apiObject.addJsonPatch(JsonPatch.replace('/spec/replicas', 12));
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path, v.field, v.value])).toEqual([
      ['NodesExhausted', 'dev/pool/Resource', 'spec.replicas', 12],
    ]);
    thrownBy(() => Testing.synth(env), ConstructError, 'ConstructInvalid');
  });

  test('template requests patched past a node: PodExceedsNode naming the template', () => {
    const env = sized();
    env.templates[0]!.apiObject.addJsonPatch(
      JsonPatch.replace('/spec/podTemplate/spec/containers/0/resources/requests/cpu', '2'),
      JsonPatch.replace('/spec/podTemplate/spec/containers/0/resources/limits/cpu', '2'),
    );
    const err = thrownBy(() => synthesizeEnvironment(env), OutputRuleError, 'OutputRuleBroken');
    expect(err.violations.map((v) => [v.rule, v.path])).toEqual([['PodExceedsNode', 'dev/shell/Resource']]);
  });

  test('acknowledged: the pool synthesizes with its written replicas, recorded in the descriptor and the lock', () => {
    const env = sized();
    const pool = env.warmPools[0]!;
    pool.apiObject.addJsonPatch(JsonPatch.replace('/spec/replicas', 12));
    env.acknowledge({ rule: 'NodesExhausted', path: pool, reason: 'the node pool autoscales to 6 nodes' });
    const s = synthesizeEnvironment(env);
    // 12 pods of 250m / 256Mi (no gVisor overhead), four to a node of 1 cpu / 1Gi
    expect(s.capacity[0]!.nodes).toEqual({ declared: 2, allocatable: { cpu: '1', memory: '1Gi' }, needed: 3 });
    expect(s.descriptor.warmPools.map((p) => p.replicas)).toEqual([12]);
    expect(environmentsLock(rel, [s.descriptor]).acknowledgements).toEqual({
      'dev/NodesExhausted/dev/pool': 'the node pool autoscales to 6 nodes',
    });
  });
});
