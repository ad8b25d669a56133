import { jest } from '@jest/globals';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ClientIncompatibleError,
  ConstructPropsError,
  type ClientNeeds,
  type EnvironmentOffers,
  sandboxdPodSpec,
  SANDBOXD_RUNTIME,
  type AgentEnvironment,
  type SandboxClientProps,
} from '../../../src/constructs/index.js';
import { reconcileLock, synthesizeEnvironment } from '../../../src/synth/index.js';
import { LockMismatchError, lockFor, readLock } from '../../../src/releases/index.js';
import { thrownBy } from '../thrown.js';
import { newEnvironment, podSpec, release } from './fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6';
const PY_IMAGE = 'registry.example.internal/agent-sandbox/python-runtime-sandbox:v0.5.6';
const CLIENT = { sdk: 'k8s-agent-sandbox', version: '1.0.8' } as const;
const PY_RUNTIME = { kind: 'python-runtime', container: 'main', ports: [8888] } as const;

interface Parts {
  tag?: 'v0.4.6' | 'v0.5.6' | 'v1.0.3';
  router?: boolean;
  routerNamespace?: string;
  runtime?: 'python' | 'sandboxd';
  pool?: boolean;
  service?: boolean;
  authorization?: 'tokenreview' | 'scoped-token';
}

async function env(parts: Parts = {}): Promise<AgentEnvironment> {
  const tag = parts.tag ?? 'v0.5.6';
  const e = newEnvironment(await release(tag), 'env', { install: false });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const t =
    parts.runtime === 'sandboxd'
      ? e.addTemplate('sbx', {
          runtimeClass: rc,
          podSpec: sandboxdPodSpec({ image: `registry.example.internal/agent-sandbox/sandboxd:${tag}`, release: tag }),
          runtime: SANDBOXD_RUNTIME,
          ...(parts.service ? { service: true } : {}),
        })
      : e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec(PY_IMAGE), runtime: PY_RUNTIME });
  if (parts.pool !== false) e.addWarmPool('pool', { template: t });
  if (parts.router !== false)
    e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization:
        parts.authorization === 'tokenreview'
          ? { mode: 'tokenreview' }
          : parts.authorization === 'scoped-token'
            ? { mode: 'scoped-token', secretName: 'router-key' }
            : { mode: 'allow-all', acknowledgeUnauthenticated: true },
      callers: [],
      ...(parts.routerNamespace ? { namespace: parts.routerNamespace } : {}),
    });
  return e;
}

function refusal(e: AgentEnvironment): ClientIncompatibleError {
  try {
    e.seal();
  } catch (err) {
    if (err instanceof ClientIncompatibleError) return err;
    throw err;
  }
  throw new Error('seal() accepted the environment');
}

describe('env.addClient', () => {
  test('router mode against a python-runtime pool and a router: descriptor records the client, its path and the pool; runtime-files becomes required', async () => {
    const e = await env();
    e.addClient({ ...CLIENT, mode: 'router' });
    const d = synthesizeEnvironment(e).descriptor;
    expect(d.clients).toEqual([
      {
        sdk: 'k8s-agent-sandbox',
        version: '1.0.8',
        mode: 'router',
        runtimeApi: 'python-runtime',
        via: 'router',
        ports: [8888],
        headers: ['X-Sandbox-ID', 'X-Sandbox-Namespace', 'X-Sandbox-Port', 'X-Sandbox-Timeout', 'X-Sandbox-Pod-IP'],
        warmPools: [{ namespace: 'agent-sandboxes', name: 'pool' }],
      },
    ]);
    expect(d.capabilities).toContainEqual({ capability: 'runtime-files', required: 'verified' });
  });

  test('an environment without a client has no clients field and no runtime-files requirement', async () => {
    const d = synthesizeEnvironment(await env()).descriptor;
    expect(d.clients).toBeUndefined();
    expect(d.capabilities.map((c) => c.capability)).not.toContain('runtime-files');
  });

  const SBX = 'agent-sandboxes/sbx';
  test.each<[string, Parts, SandboxClientProps['mode'], string, ClientNeeds, EnvironmentOffers]>([
    [
      'router mode against a sandboxd template (the smoke environment)',
      { runtime: 'sandboxd' },
      'router',
      'ClientRuntimeApi',
      { runtimeApi: 'python-runtime' },
      { template: SBX, runtime: 'sandboxd' },
    ],
    [
      'a python-runtime mode against sandboxd via tunnel',
      { runtime: 'sandboxd', routerNamespace: 'agent-sandbox-system' },
      'tunnel',
      'ClientRuntimeApi',
      { runtimeApi: 'python-runtime' },
      { template: SBX, runtime: 'sandboxd' },
    ],
    [
      'sandboxd in-cluster mode against the loopback-bound pinned sandboxd',
      { runtime: 'sandboxd' },
      'sandboxd-in-cluster-pod-ip',
      'ClientRuntimeLoopback',
      { listener: 'pod-network' },
      { template: SBX, runtime: 'sandboxd', bind: '127.0.0.1' },
    ],
    [
      'sandboxd pod tunnel against the loopback-bound pinned sandboxd',
      { runtime: 'sandboxd', router: false },
      'sandboxd-pod-tunnel',
      'ClientRuntimeLoopback',
      { listener: 'pod-network' },
      { template: SBX, runtime: 'sandboxd', bind: '127.0.0.1' },
    ],
    [
      'a sandboxd mode against a python-runtime template',
      { router: false },
      'sandboxd-in-cluster-pod-ip',
      'ClientRuntimeApi',
      { runtimeApi: 'sandboxd' },
      { template: 'agent-sandboxes/py', runtime: 'python-runtime' },
    ],
    [
      'a client that claims from a pool when none is declared',
      { pool: false },
      'router',
      'ClientNoPool',
      {},
      { warmPools: [] },
    ],
    ['router mode without a router', { router: false }, 'router', 'ClientNoRouter', {}, { router: null }],
    [
      'tunnel mode whose router is not where the client port-forwards',
      { routerNamespace: 'routing' },
      'tunnel',
      'ClientRouterService',
      { routerService: 'agent-sandbox-system/sandbox-router-svc:8080' },
      { router: 'routing/sandbox-router-svc:8080' },
    ],
    [
      'tunnel mode (no Authorization header) against a router that requires a token',
      { authorization: 'tokenreview' },
      'tunnel',
      'ClientRouterAuth',
      { authorization: 'none' },
      { authorization: 'tokenreview' },
    ],
    [
      'router mode (X-Sandbox-Pod-IP) against a scoped-token router',
      { authorization: 'scoped-token' },
      'router',
      'ClientRouterAuth',
      { authorization: 'bearer' },
      { authorization: 'scoped-token' },
    ],
  ])('refuses %s, naming both sides', async (_name, parts, mode, code, needs, offers) => {
    const e = await env(parts);
    e.addClient({ ...CLIENT, mode });
    const err = refusal(e);
    expect(err.reason).toBe(code);
    expect(err.client).toEqual({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode });
    expect([err.needs, err.offers]).toEqual([needs, offers]);
  });

  test('v1.0.3: sandboxd listens on the pod network, so the sandboxd in-cluster modes are accepted where v0.5.6 refuses them', async () => {
    for (const mode of ['sandboxd-in-cluster-pod-ip', 'sandboxd-pod-tunnel'] as const) {
      const e = await env({ tag: 'v1.0.3', runtime: 'sandboxd', router: false });
      e.addClient({ ...CLIENT, mode });
      expect(() => e.seal()).not.toThrow();
    }
    const svc = await env({ tag: 'v1.0.3', runtime: 'sandboxd', router: false, service: true });
    svc.addClient({ ...CLIENT, mode: 'sandboxd-in-cluster-service' });
    expect(() => svc.seal()).not.toThrow();
  });

  test('a client whose API the release does not serve is refused naming the client, the release and what it serves', async () => {
    const e = await env({ tag: 'v0.4.6', router: false });
    e.addClient({ ...CLIENT, mode: 'in-cluster' });
    const err = refusal(e);
    expect(err.reason).toBe('ClientApiNotServed');
    expect(err.client).toEqual({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode: 'in-cluster' });
    expect(err.needs).toEqual({
      apiVersions: ['extensions.agents.x-k8s.io/v1beta1', 'agents.x-k8s.io/v1beta1'],
    });
    expect(err.offers).toEqual({
      release: 'v0.4.6',
      served: ['extensions.agents.x-k8s.io/v1alpha1', 'agents.x-k8s.io/v1alpha1'],
    });
    const synth = await env({ tag: 'v0.4.6', router: false });
    synth.addClient({ ...CLIENT, version: '0.5.6', mode: 'in-cluster' });
    thrownBy(() => synthesizeEnvironment(synth), ClientIncompatibleError, 'ClientApiNotServed');
  });

  test('client 0.5.6: v1beta1 like 1.0.8, accepted on v0.5.6 and v1.0.3; no sandboxd modes; no extra_headers for a token', async () => {
    for (const tag of ['v0.5.6', 'v1.0.3'] as const) {
      const e = await env({ tag });
      e.addClient({ ...CLIENT, version: '0.5.6', mode: 'router' });
      expect(() => e.seal()).not.toThrow();
    }
    const e = await env({ tag: 'v1.0.3', router: false });
    const err = thrownBy(
      () => e.addClient({ ...CLIENT, version: '0.5.6', mode: 'sandboxd-in-cluster-pod-ip' }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems.map((p) => [p.prop, p.reason])).toEqual([['mode', 'UnknownClientMode']]);
    const tr = await env({ authorization: 'tokenreview' });
    tr.addClient({ ...CLIENT, version: '0.5.6', mode: 'router' });
    const auth = refusal(tr);
    expect([auth.reason, auth.needs]).toEqual(['ClientRouterAuth', { authorization: 'none' }]);
  });

  test('router mode may carry a Bearer token in extra_headers: a tokenreview router that requires one is accepted', async () => {
    const e = await env({ authorization: 'tokenreview' });
    e.addClient({ ...CLIENT, mode: 'router' });
    expect(() => e.seal()).not.toThrow();
  });

  test('synthesis of the smoke-style environment (sandboxd template, router) with a router-mode client fails with the reason code', async () => {
    const e = await env({ runtime: 'sandboxd' });
    e.addClient({ ...CLIENT, mode: 'router' });
    thrownBy(() => synthesizeEnvironment(e), ClientIncompatibleError, 'ClientRuntimeApi');
  });

  test('a server_port the router may not dial is refused (router egress)', async () => {
    const e = newEnvironment(await release('v0.5.6'), 'env', { install: false });
    const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const t = e.addTemplate('py', {
      runtimeClass: rc,
      podSpec: podSpec(PY_IMAGE),
      runtime: { kind: 'python-runtime', container: 'main', ports: [9000] },
    });
    e.addWarmPool('pool', { template: t });
    e.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
      callers: [],
    });
    e.addClient({ ...CLIENT, mode: 'router', serverPort: 9000 });
    expect(refusal(e).reason).toBe('ClientRouterEgress');
  });

  test('an unknown client version is refused at once with the versions that have facts', async () => {
    const e = await env();
    const err = thrownBy(
      () => e.addClient({ ...CLIENT, version: '1.0.7', mode: 'router' }),
      ConstructPropsError,
      'InvalidProps',
    );
    expect(err.problems).toEqual([
      expect.objectContaining({ prop: 'version', reason: 'UnknownClientVersion', value: '1.0.7' }),
    ]);
    expect(err.hint).toBeDefined();
  });

  test('the lock records the client; a changed client mode is a lock difference', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-client-lock-'));
    const lockPath = join(dir, 'agentplane.lock.json');
    const e = await env();
    e.addClient({ ...CLIENT, mode: 'router' });
    const s = synthesizeEnvironment(e);
    expect(
      reconcileLock(lockPath, lockFor(s.release, s.images, { 'env/k8s-agent-sandbox/router': '1.0.8' }), false),
    ).toBe('created');
    expect(readLock(lockPath)?.clients).toEqual({ 'env/k8s-agent-sandbox/router': '1.0.8' });
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).clients).toEqual({ 'env/k8s-agent-sandbox/router': '1.0.8' });
    const mismatch = thrownBy(
      () => reconcileLock(lockPath, lockFor(s.release, s.images, { 'env/k8s-agent-sandbox/gateway': '1.0.8' }), false),
      LockMismatchError,
      'LockMismatch',
    );
    // one difference per client key: the recorded one gone, the new one added
    expect(mismatch.lockFile).toBe(lockPath);
    expect(mismatch.differences).toEqual([
      { field: 'clients', key: 'env/k8s-agent-sandbox/gateway', declared: '1.0.8' },
      { field: 'clients', key: 'env/k8s-agent-sandbox/router', locked: '1.0.8' },
    ]);
    expect(
      reconcileLock(lockPath, lockFor(s.release, s.images, { 'env/k8s-agent-sandbox/router': '1.0.8' }), false),
    ).toBe('unchanged');
  });
});
