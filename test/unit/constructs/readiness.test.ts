/** The runtime container's readiness probe: by default on the pod network's runtimes, never on a loopback one. */
import { jest } from '@jest/globals';
import { k8s } from 'cdk8s-plus-28';
import { ConstructPropsError, sandboxdPodSpec, SANDBOXD_RUNTIME } from '../../../src/constructs/index.js';
import { rejectedBy } from '../thrown.js';
import { newEnvironment, podSpec, release } from './fixture.js';

jest.setTimeout(120_000);

const PY_IMAGE = 'registry.example.internal/agent-sandbox/python-runtime-sandbox:v0.5.6';
const PY_RUNTIME = { kind: 'python-runtime', container: 'main', ports: [8888] } as const;

type Probe = Record<string, unknown> | undefined;

async function probeOf(props: Record<string, unknown>, spec: k8s.PodSpec = podSpec(PY_IMAGE)): Promise<Probe> {
  const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const t = e.addTemplate('t', { runtimeClass: rc, podSpec: spec, ...props });
  const pod = (t.apiObject.toJson() as { spec: { podTemplate: { spec: { containers: Record<string, unknown>[] } } } })
    .spec.podTemplate.spec;
  return pod.containers[0]!['readinessProbe'] as Probe;
}

describe('SandboxTemplate runtimeReadinessProbe', () => {
  test('python-runtime: GET / on its port by default; false leaves the container as given', async () => {
    expect(await probeOf({ runtime: PY_RUNTIME })).toEqual({ httpGet: { path: '/', port: 8888 }, periodSeconds: 1 });
    expect(await probeOf({ runtime: PY_RUNTIME, runtimeReadinessProbe: false })).toBeUndefined();
  });

  test("the container's own probe is kept", async () => {
    const own = { exec: { command: ['true'] }, periodSeconds: 7 };
    const spec = podSpec(PY_IMAGE, { readinessProbe: { exec: { command: ['true'] }, periodSeconds: 7 } });
    expect(await probeOf({ runtime: PY_RUNTIME }, spec)).toEqual(own);
  });

  test('custom: none by default, a TCP check of its first port when asked', async () => {
    expect(await probeOf({})).toBeUndefined();
    expect(await probeOf({ runtimeReadinessProbe: true })).toEqual({ tcpSocket: { port: 8888 }, periodSeconds: 1 });
  });

  test("sandboxd binds 127.0.0.1: sandboxdPodSpec's in-container exec probe stays, none is added, and asking for one is refused with the construct path", async () => {
    const spec = sandboxdPodSpec({ image: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' });
    expect(Object.keys((await probeOf({ runtime: SANDBOXD_RUNTIME }, spec)) ?? {})).toContain('exec');
    const plain = { ...SANDBOXD_RUNTIME, container: 'main' };
    expect(await probeOf({ runtime: plain })).toBeUndefined();
    const e = await rejectedBy(
      probeOf({ runtime: SANDBOXD_RUNTIME, runtimeReadinessProbe: true }, spec),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(e.path).toBe('env/t');
    expect(e.problems.map((p) => [p.prop, p.reason, p.value])).toEqual([
      ['runtimeReadinessProbe', 'ReadinessProbeUnreachable', true],
    ]);
  });
});
