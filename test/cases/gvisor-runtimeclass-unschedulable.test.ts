/**
 * Case gvisor-runtimeclass-unschedulable (construct side): a RuntimeClass needs scheduling rules (nodeSelector,
 * tolerations) for the nodes with the handler, or an explicit all-nodes opt-in.
 */
import { jest } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { ConstructPropsError, SandboxRuntimeClass, synthesizeEnvironment } from '../../src/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

describe('case gvisor-runtimeclass-unschedulable: gVisor RuntimeClass without scheduling', () => {
  test('the reproduction (gvisor/runsc, no scheduling) is refused with the path and what to do', () => {
    let err: unknown;
    try {
      new SandboxRuntimeClass(new Chart(new App(), 'c'), 'gvisor', { preset: 'gvisor' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConstructPropsError);
    expect((err as ConstructPropsError).reason).toBe('InvalidProps');
    expect((err as ConstructPropsError).path).toBe('c/gvisor');
    expect((err as ConstructPropsError).issues).toEqual([
      'scheduling: required: give nodeSelector (and tolerations) for the nodes that have the handler, or set allNodes: true if every node has it (got undefined)',
    ]);
  });

  test('with scheduling for node-b the RuntimeClass carries it, and the template and descriptor reference it', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    const rc = env.addRuntimeClass('gvisor', {
      preset: 'gvisor',
      scheduling: {
        nodeSelector: { 'kubernetes.io/hostname': 'node-b' },
        tolerations: [{ key: 'runsc', operator: 'Exists', effect: 'NoSchedule' }],
      },
    });
    env.addWarmPool('pool', { template: env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() }), replicas: 3 });
    const s = synthesizeEnvironment(env);
    const runtimeClass = s.objects.find((o) => o.object.kind === 'RuntimeClass')!.object;
    expect(runtimeClass).toMatchObject({
      handler: 'runsc',
      scheduling: {
        nodeSelector: { 'kubernetes.io/hostname': 'node-b' },
        tolerations: [{ key: 'runsc', operator: 'Exists', effect: 'NoSchedule' }],
      },
    });
    expect(s.descriptor.runtimeClasses).toEqual([
      {
        name: 'gvisor',
        handler: 'runsc',
        preset: 'gvisor',
        overhead: null,
        scheduling: {
          nodeSelector: { 'kubernetes.io/hostname': 'node-b' },
          tolerations: [{ key: 'runsc', operator: 'Exists', effect: 'NoSchedule' }],
        },
        allNodes: false,
      },
    ]);
    expect(s.descriptor.capabilities).toContainEqual({ capability: 'runtime-class/gvisor', required: 'verified' });
    const tpl = s.objects.find((o) => o.object.kind === 'SandboxTemplate')!.object as unknown as {
      spec: { podTemplate: { spec: { runtimeClassName: string } } };
    };
    expect(tpl.spec.podTemplate.spec.runtimeClassName).toBe('gvisor');
  });

  test('allNodes: true is the explicit opt-in and writes no scheduling', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const s = synthesizeEnvironment(env);
    expect(s.objects.find((o) => o.object.kind === 'RuntimeClass')!.object['scheduling']).toBeUndefined();
    expect(s.descriptor.runtimeClasses[0]!.allNodes).toBe(true);
  });
});
