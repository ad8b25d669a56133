/**
 * Quantities are validated where a construct consumes them, so a bad one names the construct path, the prop and the
 * value: a pod spec built by the sandboxdPodSpec helper (which has no path of its own) fails at its SandboxTemplate,
 * and every construct prop that takes a quantity accepts the one grammar the pinned CRDs give (quantity.ts QUANTITY).
 */
import { jest } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import {
  AgentSandboxInstall,
  ConstructPropsError,
  sandboxdPodSpec,
  SANDBOXD_RUNTIME,
  type PropProblem,
  type LoadedRelease,
  type SandboxdPodSpecProps,
} from '../../../src/index.js';
import { QUANTITY } from '../../../src/constructs/quantity.js';
import { cpuMilli, memoryBytes, quantityValue } from '../../../src/constructs/resources.js';
import { IMAGE, newEnvironment, podSpec, release } from './fixture.js';

// loading a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

/** The ConstructPropsError `build` throws (fails the test when it throws nothing or something else). */
function propsError(build: () => unknown): ConstructPropsError {
  try {
    build();
  } catch (err) {
    if (err instanceof ConstructPropsError) return err;
    throw err;
  }
  throw new Error('nothing was thrown');
}

const pick = (p: PropProblem): [string, string, unknown] => [p.prop, p.reason, p.value];

let rel: LoadedRelease;
beforeAll(async () => {
  rel = await release('v0.5.6');
});

function template(props: Partial<SandboxdPodSpecProps>): void {
  const env = newEnvironment(rel, 'env');
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  env.addTemplate('py', {
    runtimeClass: rc,
    podSpec: sandboxdPodSpec({ image: IMAGE, ...props }),
    runtime: SANDBOXD_RUNTIME,
  });
}

describe('a sandboxdPodSpec with a bad quantity fails at the template that consumes it', () => {
  test('resources.cpu: InvalidProps at env/py, naming requests and limits and the value', () => {
    const err = propsError(() => template({ resources: { cpu: 'lots', memory: '256Mi' } }));
    expect(err.reason).toBe('InvalidProps');
    expect(err.path).toBe('env/py');
    expect(err.problems.map(pick)).toEqual([
      ['podSpec.containers.sandboxd.resources.requests.cpu', 'NotAQuantity', 'lots'],
      ['podSpec.containers.sandboxd.resources.limits.cpu', 'NotAQuantity', 'lots'],
    ]);
  });

  test('workspaceSize: the emptyDir sizeLimit of volume workspace', () => {
    const err = propsError(() => template({ workspaceSize: '-1Gi' }));
    expect(err.path).toBe('env/py');
    expect(err.problems.map(pick)).toEqual([['podSpec.volumes.workspace.emptyDir.sizeLimit', 'NotAQuantity', '-1Gi']]);
  });

  test("the workload container's own resources, by container name", () => {
    const bad = { cpu: k8s.Quantity.fromString('1'), memory: k8s.Quantity.fromString('1 GB') };
    const err = propsError(() => template({ workload: { name: 'agent', image: IMAGE, resources: { limits: bad } } }));
    expect(err.problems.map(pick)).toEqual([
      ['podSpec.containers.agent.resources.limits.memory', 'NotAQuantity', '1 GB'],
    ]);
  });

  test('every valid form passes', () => {
    for (const cpu of ['250m', '1.5', '.5', '2', '1e-1', '+1']) template({ resources: { cpu, memory: '1Gi' } });
    for (const memory of ['256Mi', '1G', '1.5Gi', '128974848', '129e6', '1Ei'])
      template({ resources: { cpu: '1', memory } });
  });
});

test('quantity arithmetic follows the grammar (suffixes, exponents, leading dot)', () => {
  expect([cpuMilli('250m'), cpuMilli('1.5'), cpuMilli('.5'), cpuMilli('1e-1'), cpuMilli('100u')]).toEqual([
    250, 1500, 500, 100, 1,
  ]);
  expect([memoryBytes('1Ki'), memoryBytes('1k'), memoryBytes('129e6'), memoryBytes('1.5Gi')]).toEqual([
    1024,
    1000,
    129_000_000,
    1.5 * 2 ** 30,
  ]);
  for (const bad of ['lots', '-1', '1 GB', '1Kb', '', '1.2.3']) {
    expect(QUANTITY.test(bad)).toBe(false);
    expect(() => quantityValue(bad)).toThrow();
  }
});

describe('construct props that take a quantity share the grammar', () => {
  test('AgentSandboxInstall controller resources: InvalidProps at c/install with the value', () => {
    const make = (cpu: string) =>
      new AgentSandboxInstall(new Chart(new App(), 'c'), 'install', {
        release: rel,
        controller: { resources: { limits: { cpu } } },
      });
    const err = propsError(() => make('-1'));
    expect(err.path).toBe('c/install');
    expect(err.problems.map((p) => [p.prop, p.value])).toEqual([['controller.resources.limits.cpu', '-1']]);
    expect(() => make('1e3')).not.toThrow();
  });

  test('SandboxRuntimeClass overhead and nodes, VerifierJob resources: the same forms pass and fail', () => {
    for (const [cpu, ok] of [
      ['0.25', true],
      ['250m', true],
      ['1e-1', true],
      ['lots', false],
      ['-1', false],
    ] as const) {
      const env = newEnvironment(rel, 'env');
      const rc = () =>
        env.addRuntimeClass(`k${String(ok)}${cpu.length}`, {
          preset: 'kata',
          allNodes: true,
          overhead: { cpu },
          nodes: { count: 1, allocatable: { cpu: '4', memory: '16Gi' } },
        });
      const job = () =>
        env.addVerifierJob('verify', { image: `${IMAGE}-verifier`, resources: { cpu, memory: '256Mi' } });
      if (ok) {
        expect(rc).not.toThrow();
        expect(job).not.toThrow();
      } else {
        expect(propsError(rc).problems.map((p) => [p.prop, p.value])).toEqual([['overhead.cpu', cpu]]);
        expect(propsError(job).problems.map((p) => [p.prop, p.value])).toEqual([['resources.cpu', cpu]]);
      }
    }
  });
});

test('a plain pod spec with a bad limit fails the same way', () => {
  const env = newEnvironment(rel, 'env');
  const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const spec = podSpec(IMAGE, {
    resources: { limits: { cpu: k8s.Quantity.fromString('1'), memory: k8s.Quantity.fromString('lots') } },
  });
  const err = propsError(() => env.addTemplate('t', { runtimeClass: rc, podSpec: spec }));
  expect([err.reason, err.path]).toEqual(['InvalidProps', 'env/t']);
  expect(err.problems.map(pick)).toEqual([['podSpec.containers.main.resources.limits.memory', 'NotAQuantity', 'lots']]);
});
