/** The runtime container's readiness probe: by default on the pod network's runtimes, never on a loopback one. */
import { jest } from '@jest/globals';
import { k8s } from 'cdk8s-plus-28';
import {
  ConstructPropsError,
  sandboxdPodSpec,
  SANDBOXD_RUNTIME,
  UnsupportedByReleaseError,
} from '../../../src/constructs/index.js';
import type { ReleaseTag } from '../../../src/releases/index.js';
import { rejectedBy } from '../thrown.js';
import { newEnvironment, podSpec, release } from './fixture.js';

jest.setTimeout(120_000);

const PY_IMAGE = 'registry.example.internal/agent-sandbox/python-runtime-sandbox:v0.5.6';
const PY_RUNTIME = { kind: 'python-runtime', container: 'main', ports: [8888] } as const;

type Probe = Record<string, unknown> | undefined;

async function probeOf(
  props: Record<string, unknown>,
  spec: k8s.PodSpec = podSpec(PY_IMAGE),
  tag: ReleaseTag = 'v0.5.6',
): Promise<Probe> {
  const e = newEnvironment(await release(tag), 'env', { install: false });
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

  const SANDBOXD_IMAGE = 'registry.example.internal/agent-sandbox/sandboxd:v1.0.3';
  const argsOf = (spec: k8s.PodSpec): string[] => [...(spec.containers[0]!.args ?? [])];

  test('sandboxdPodSpec: --listen-host only where the release has it; off loopback the probe is GET /v1/health on 8080', () => {
    expect(argsOf(sandboxdPodSpec({ image: SANDBOXD_IMAGE }))).not.toContainEqual(expect.stringMatching(/listen-host/));
    expect(argsOf(sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v0.5.6' }))).not.toContainEqual(
      expect.stringMatching(/listen-host/),
    );
    const v1 = sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v1.0.3' });
    expect(argsOf(v1)).toContain('--listen-host=0.0.0.0');
    expect(v1.containers[0]!.readinessProbe?.httpGet?.path).toBe('/v1/health');
    expect(v1.containers[0]!.readinessProbe?.httpGet?.port.value).toBe(8080);
    const loop = sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v1.0.3', listenHost: '127.0.0.1' });
    expect(argsOf(loop)).toContain('--listen-host=127.0.0.1');
    expect(loop.containers[0]!.readinessProbe?.exec).toBeDefined();
  });

  test('v1.0.3: the template keeps the httpGet probe, records the pod-network bind, and runtimeReadinessProbe: true is allowed', async () => {
    const spec = sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v1.0.3' });
    expect(await probeOf({ runtime: SANDBOXD_RUNTIME }, spec, 'v1.0.3')).toEqual({
      httpGet: { path: '/v1/health', port: 8080 },
      periodSeconds: 5,
      timeoutSeconds: 2,
      failureThreshold: 3,
    });
    // no --listen-host: the v1.0.3 default (0.0.0.0) applies, so the kubelet can probe it
    const plain = { ...SANDBOXD_RUNTIME, container: 'main', ports: [8080, 9090] };
    expect(await probeOf({ runtime: plain, runtimeReadinessProbe: true }, podSpec(SANDBOXD_IMAGE), 'v1.0.3')).toEqual({
      httpGet: { path: '/v1/health', port: 8080 },
      periodSeconds: 1,
    });
    // told to stay on loopback: refused like v0.5.6
    const loop = sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v1.0.3', listenHost: '127.0.0.1' });
    const e = await rejectedBy(
      probeOf({ runtime: SANDBOXD_RUNTIME, runtimeReadinessProbe: true }, loop, 'v1.0.3'),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(e.problems.map((p) => p.reason)).toEqual(['ReadinessProbeUnreachable']);
  });

  test('v0.5.6: a --listen-host on the sandboxd container is refused with UnsupportedByRelease (sandboxd would exit)', async () => {
    for (const spec of [
      sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: 'v1.0.3' }),
      sandboxdPodSpec({ image: SANDBOXD_IMAGE, listenHost: '0.0.0.0' }),
      podSpec(SANDBOXD_IMAGE, { name: 'sandboxd', args: ['-listen-host', '0.0.0.0'] }),
    ]) {
      const e = await rejectedBy(
        probeOf({ runtime: SANDBOXD_RUNTIME }, spec, 'v0.5.6'),
        UnsupportedByReleaseError,
        'UnsupportedByRelease',
      );
      expect(e.path).toBe('env/t');
      expect(e.release).toBe('v0.5.6');
      expect(e.setting).toBe('podSpec container sandboxd --listen-host');
    }
  });
});
