import { jest } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import {
  ConstructPropsError,
  SandboxRuntimeClass,
  type SandboxRuntimeClassProps,
} from '../../../src/constructs/index.js';
import { thrownBy } from '../thrown.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

function make(props: SandboxRuntimeClassProps): { rc: SandboxRuntimeClass; json: Record<string, any> } {
  const rc = new SandboxRuntimeClass(new Chart(new App(), 'c'), 'rc', props);
  return { rc, json: rc.apiObject.toJson() };
}

describe('SandboxRuntimeClass', () => {
  test('gvisor preset: name gvisor, handler runsc, no overhead, scheduling written', () => {
    const { json } = make({
      preset: 'gvisor',
      scheduling: {
        nodeSelector: { 'sandbox.gke.io/runtime': 'gvisor' },
        tolerations: [{ key: 'sandbox.gke.io/runtime', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' }],
      },
    });
    expect(json).toEqual({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'gvisor' },
      handler: 'runsc',
      scheduling: {
        nodeSelector: { 'sandbox.gke.io/runtime': 'gvisor' },
        tolerations: [{ key: 'sandbox.gke.io/runtime', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' }],
      },
    });
  });

  test('kata preset: kata-qemu with the default overhead; allNodes writes no scheduling', () => {
    const { json, rc } = make({ preset: 'kata', allNodes: true });
    expect(json).toEqual({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'kata-qemu' },
      handler: 'kata-qemu',
      overhead: { podFixed: { cpu: '250m', memory: '160Mi' } },
    });
    expect(rc.scheduling).toBeUndefined();
  });

  test('overhead false and explicit name/handler', () => {
    const { json } = make({ preset: 'kata', name: 'kata-clh', handler: 'kata-clh', overhead: false, allNodes: true });
    expect(json).toEqual({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'kata-clh' },
      handler: 'kata-clh',
    });
  });

  test('scheduling and allNodes together are refused', () => {
    const err = thrownBy(
      () => make({ preset: 'gvisor', allNodes: true, scheduling: { nodeSelector: { a: 'b' } } }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect([err.path, err.construct]).toEqual(['c/rc', 'SandboxRuntimeClass']);
    expect(err.problems).toEqual([
      expect.objectContaining({ prop: 'allNodes', reason: 'SchedulingContradiction', value: true }),
    ]);
  });

  test('an empty nodeSelector is refused', () => {
    thrownBy(() => make({ preset: 'gvisor', scheduling: { nodeSelector: {} } }), ConstructPropsError, 'InvalidProps');
  });

  test('a malformed overhead quantity is refused with the value', () => {
    const err = thrownBy(
      () => make({ preset: 'kata', allNodes: true, overhead: { cpu: 'lots' } }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems).toEqual([
      expect.objectContaining({ prop: 'overhead.cpu', reason: 'InvalidFormat', value: 'lots' }),
    ]);
  });

  test('props errors carry prop, reason and value: a zod issue code, or the reason a custom check names', () => {
    const problems = (props: unknown) => {
      try {
        make(props as SandboxRuntimeClassProps);
      } catch (err) {
        expect(err).toBeInstanceOf(ConstructPropsError);
        expect((err as ConstructPropsError).reason).toBe('InvalidProps');
        return (err as ConstructPropsError).problems.map(({ prop, reason, value }) => ({ prop, reason, value }));
      }
      throw new Error('no error');
    };
    expect(problems({ preset: 'gvisor' })).toEqual([
      { prop: 'scheduling', reason: 'SchedulingRequired', value: undefined },
    ]);
    expect(problems({ preset: 'kata', allNodes: true, scheduling: { nodeSelector: { a: 'b' } } })).toEqual([
      { prop: 'allNodes', reason: 'SchedulingContradiction', value: true },
    ]);
    expect(problems({ preset: 'kata', allNodes: true, colour: 'red' })).toEqual([
      { prop: '(props)', reason: 'UnrecognizedKeys', value: { preset: 'kata', allNodes: true, colour: 'red' } },
    ]);
  });

  test('a preset whose handler does not run it is refused with the construct path, prop and value', () => {
    for (const [preset, handler] of [
      ['gvisor', 'runc'],
      ['gvisor', 'kata-qemu'],
      ['kata', 'runsc'],
      ['kata', 'crun'],
    ] as const) {
      const err = thrownBy(() => make({ preset, handler, allNodes: true }), ConstructPropsError, 'InvalidProps');
      expect([err.path, err.problems]).toEqual([
        'c/rc',
        [expect.objectContaining({ prop: 'handler', reason: 'PresetHandlerMismatch', value: handler })],
      ]);
    }
    // Provider handler names that run the preset pass (GKE Sandbox names its gVisor handler `gvisor`).
    expect(make({ preset: 'gvisor', handler: 'gvisor', allNodes: true }).json['handler']).toBe('gvisor');
    expect(make({ preset: 'kata', handler: 'kata-fc', allNodes: true }).json['handler']).toBe('kata-fc');
  });
});
