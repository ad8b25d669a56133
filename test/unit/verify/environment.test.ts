import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EnvironmentDescriptorError, planFromDescriptor, readEnvironment } from '../../../src/verify/environment.js';
import { DESCRIPTOR } from './fixtures.js';
import { thrownBy } from '../thrown.js';

function write(obj: unknown): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-env-'));
  writeFileSync(path.join(dir, 'environment.json'), typeof obj === 'string' ? obj : JSON.stringify(obj));
  return dir;
}

describe('environment descriptor → verify plan', () => {
  test('maps templates, ports, pools, router, policies and the declared requirements', () => {
    const { descriptor, file } = readEnvironment(write(DESCRIPTOR));
    const plan = planFromDescriptor(descriptor, path.dirname(file), {
      transport: 'direct',
      routerUrl: 'http://127.0.0.1:18080',
      probeTimeoutMs: 2000,
    });
    expect(plan.release).toBe('v0.5.6');
    expect(plan.controller).toEqual({
      namespace: 'agent-sandbox-system',
      deployment: 'agent-sandbox-controller',
      serviceAccount: 'agent-sandbox-controller',
      image: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
    });
    expect(plan.templates).toEqual([
      {
        namespace: 'dev-sandboxes',
        name: 'shell',
        runtime: 'sandboxd',
        ports: { rest: 8080, grpc: 9090 },
        runtimeImage: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6',
        runtimeClassName: 'gvisor',
        networkPolicyManagement: 'Managed',
        images: { sandboxd: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' },
        podLabels: { 'agentplane.dev/template': 'shell' },
      },
    ]);
    expect(plan.warmPools).toEqual([
      { namespace: 'dev-sandboxes', name: 'shell-pool', template: 'shell', replicas: 2 },
    ]);
    expect(plan.router).toEqual({
      namespace: 'agent-sandbox-system',
      service: 'sandbox-router-svc',
      podLabels: { app: 'sandbox-router' },
      image: 'r:1',
      url: 'http://127.0.0.1:18080',
      // The fixture's descriptor declares allow-all without the acknowledgement constructs write.
      authorizationMode: 'allow-all',
      acknowledgeUnauthenticated: false,
    });
    expect(plan.networkPolicies[0]).toEqual({
      namespace: 'dev-sandboxes',
      name: 'shell-egress',
      template: 'shell',
      allowedEgress: ['0.0.0.0/0 TCP/443'],
      ingressFrom: [{ namespace: 'agent-sandbox-system', podLabels: { app: 'sandbox-router' } }],
    });
    expect(plan.requirements).toEqual([
      { name: 'sandbox-api', required: 'verified' },
      { name: 'controller', required: 'configured' },
      { name: 'network-isolation', required: 'configured' },
      { name: 'runtime-exec', required: 'verified' },
    ]);
    expect([plan.transport, plan.probeTimeoutMs, plan.readyTimeoutMs]).toEqual(['direct', 2000, 120000]);
  });

  test('missing file, bad JSON, schema violations and unsupported releases are typed errors with a hint', () => {
    const problemOf = (fn: () => unknown) => {
      const e = thrownBy(fn, EnvironmentDescriptorError, 'EnvironmentDescriptorInvalid');
      expect(e.hint).toBeDefined();
      return { problem: e.problem, file: e.file, fields: e.fields, release: e.release };
    };
    expect(problemOf(() => readEnvironment('/nonexistent-dir'))).toMatchObject({
      problem: 'missing',
      file: '/nonexistent-dir/environment.json',
    });
    expect(problemOf(() => readEnvironment(write('{nope')))).toMatchObject({ problem: 'not-json' });
    expect(problemOf(() => readEnvironment(write({ ...DESCRIPTOR, templates: [{ name: 'x' }] })))).toMatchObject({
      problem: 'schema',
      fields: expect.arrayContaining(['templates.0.namespace']),
    });
    const { descriptor } = readEnvironment(write({ ...DESCRIPTOR, release: { ...DESCRIPTOR.release, tag: 'v0.9.9' } }));
    expect(problemOf(() => planFromDescriptor(descriptor, 'x', { transport: 'direct' }))).toMatchObject({
      problem: 'unsupported-release',
      release: 'v0.9.9',
    });
  });
});
