/**
 * Case router-timeout-layers on the test cluster: the REAL v0.5.6 Go sandbox-router (a second instance of the binary
 * the cluster runs, its command line read from /proc, fresh ports) in front of the REAL python runtime (`main.py@v0.5.6`
 * on loopback, addressed by `X-Sandbox-Pod-IP`, which the cluster's router admits with `--allow-loopback-pod-ip`).
 * The router Deployment is the one a SandboxRouter with `responseHeaderTimeoutSeconds: 3` synthesizes, created in the
 * API server (no pod runs it here: the router process runs with that Deployment's timeout flags). The adapter reads the
 * Deployment through its Kubernetes layer and derives the limit: a longer deadline is refused before anything is
 * sent, naming "router response-header timeout 3s"; a shorter command goes through; and the router itself does cut
 * a longer one at 3 s (a 502 the adapter reads as the router's timeout), so the limit the adapter derived is the one
 * the router applies. No stand-in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { jest } from '@jest/globals';
import { KubeCapabilityAdapter } from '../../../src/adapter/adapter.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { Executions, type RuntimeBinding } from '../../../src/adapter/runtime/executions.js';
import { PythonRuntimeClient } from '../../../src/adapter/runtime/python-runtime.js';
import { RouterTransport } from '../../../src/adapter/transports/router.js';
import type { ExecutionStatus, SessionRef } from '../../../src/adapter/types.js';
import { startPythonRuntime, type PythonRuntimeProcess } from '../../unit/adapter/python-runtime-process.js';
import { newEnvironment, objectsOf, release } from '../../unit/constructs/fixture.js';
import { connect, freshNamespace, httpGet, type Cluster } from '../helpers.js';

jest.setTimeout(180_000);

let c: Cluster;
let ns: string;
let runtime: PythonRuntimeProcess;
let router: ChildProcess | undefined;
let routerLog = '';
let routerUrl = '';
let deploymentArgs: string[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The cluster's router command line with fresh ports and the synthesized Deployment's timeout flags. */
async function startRouter(timeoutArgs: readonly string[]): Promise<void> {
  const pid = readFileSync(path.join(c.info.runDir, 'pids/sandbox-router.pid'), 'utf8').trim();
  const [bin, ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const [http, metrics, probe] = [await freePort(), await freePort(), await freePort()];
  const swap: Record<string, string> = {
    '--http-bind-address': `127.0.0.1:${http}`,
    '--metrics-bind-address': `127.0.0.1:${metrics}`,
    '--health-probe-bind-address': `127.0.0.1:${probe}`,
  };
  const own = args
    .filter((a) => !/^--(proxy-timeout|response-header-timeout)(=|$)/.test(a))
    .map((a) => {
      const k = a.split('=')[0]!;
      return k in swap ? `${k}=${swap[k]}` : a;
    });
  router = spawn(bin!, [...own, ...timeoutArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  router.stdout!.setEncoding('utf8').on('data', (d: string) => (routerLog += d));
  router.stderr!.setEncoding('utf8').on('data', (d: string) => (routerLog += d));
  for (let i = 0; i < 150; i += 1) {
    const up = await httpGet(probe, '/readyz', {}, 1_000).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) {
      routerUrl = `http://127.0.0.1:${http}`;
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`router did not become ready:\n${routerLog}`);
}

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'rtl');
  // The Deployment a SandboxRouter with a 3 s response-header timeout synthesizes, in this test's namespace.
  const env = newEnvironment(await release('v0.5.6'), 'rtl', { install: false });
  env.addRouter('router', {
    image: 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6',
    authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
    callers: [],
    responseHeaderTimeoutSeconds: 3,
  });
  const deployment = objectsOf(env).find((o) => o['kind'] === 'Deployment')!;
  deployment['metadata'] = { ...deployment['metadata'], namespace: ns };
  deploymentArgs = deployment['spec']['template']['spec']['containers'][0]['args'] as string[];
  await c.kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({ namespace: ns, body: deployment });
  runtime = await startPythonRuntime('v0.5.6');
  await startRouter(deploymentArgs.filter((a) => /^--(proxy-timeout|response-header-timeout)=/.test(a)));
});

afterAll(async () => {
  router?.kill('SIGTERM');
  await runtime?.stop();
  if (ns) await c.core.deleteNamespace({ name: ns });
});

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };

function setUp(): {
  adapter: KubeCapabilityAdapter;
  transport: RouterTransport;
  runner: Executions;
  binding: RuntimeBinding;
} {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const transport = new RouterTransport(routerUrl, { podIPHeader: true });
  const executions = {
    transport,
    supportStates: () => 'verified' as const,
    runtimes: () => ({ kind: 'python-runtime' as const, port: runtime.port }),
    release: 'v0.5.6',
    routerDeployment: { namespace: ns, name: 'sandbox-router' },
  };
  const adapter = new KubeCapabilityAdapter({ client, executions });
  // The adapter's own runner needs a Ready session; this one takes the limits the adapter read from the cluster.
  const runner = new Executions({
    transport,
    supportStates: executions.supportStates,
    release: 'v0.5.6',
    routerLimits: async () => {
      const reading = await adapter.routerLimits();
      transport.useLimits(reading.limits);
      return reading.limits;
    },
  });
  const binding: RuntimeBinding = {
    template: 'template/sbx/py',
    runtime: { kind: 'python-runtime', port: runtime.port },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
  return { adapter, transport, runner, binding };
}

async function settled(ex: Executions, id: string): Promise<ExecutionStatus> {
  for (let i = 0; i < 400; i++) {
    const q = ex.query(id);
    if (q.kind === 'ok' && q.value.state !== 'running') return q.value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`execution ${id} still running`);
}

test('the synthesized Deployment passes the timeout flag; the adapter reads it from the API server', async () => {
  expect(deploymentArgs.filter((a) => a.includes('timeout'))).toEqual([
    '--proxy-timeout=180s',
    '--response-header-timeout=3s',
  ]);
  const { adapter } = setUp();
  const reading = await adapter.routerLimits();
  expect([reading.deployment, reading.limits.deployment, reading.limits.honoursSandboxTimeout]).toEqual([
    'read',
    `${ns}/sandbox-router`,
    false,
  ]);
  expect(reading.limits.responseHeaderTimeout).toEqual({
    layer: 'router',
    setting: 'router-response-header-timeout',
    limitMs: 3_000,
    source: 'deployment-flag',
    label: 'router response-header timeout 3s',
  });
  const caps = await adapter.capabilities('test-cluster');
  const py = caps.executionLimits?.find((l) => l.runtime === 'python-runtime');
  expect([py?.transport, py?.streaming, py?.effective.label]).toEqual([
    'router',
    false,
    'router response-header timeout 3s',
  ]);
});

test('a deadline past the deployed router limit is refused up front, naming the layer and value', async () => {
  const { runner, binding } = setUp();
  const r = await runner.start(
    'long',
    { session, argv: ['sh', '-c', 'echo sent > REFUSED; sleep 5'], timeoutMs: 10_000 },
    binding,
  );
  expect(
    r.kind === 'rejected' ? [r.reason, r.limit?.layer, r.limit?.setting, r.limit?.limitMs, r.limit?.source] : r,
  ).toEqual(['ExceedsLayerLimit', 'router', 'router-response-header-timeout', 3_000, 'deployment-flag']);
  // Nothing reached the runtime: the command's first write never happens.
  await new Promise((res) => setTimeout(res, 1_000));
  expect(existsSync(path.join(runtime.appDir, 'REFUSED'))).toBe(false);
});

test('a command within the limit goes through the real router to the real runtime', async () => {
  const { runner, binding } = setUp();
  expect(
    (await runner.start('short', { session, argv: ['sh', '-c', 'sleep 1; echo done'], timeoutMs: 3_000 }, binding))
      .kind,
  ).toBe('ok');
  const s = await settled(runner, 'short');
  expect([s.outcome?.kind, s.exitCode, s.stdout]).toEqual(['completed', 0, 'done\n']);
});

test('the real router does end a longer call at 3 s: the limit the adapter derived is the router’s own', async () => {
  const { adapter, transport } = setUp();
  transport.useLimits((await adapter.routerLimits()).limits);
  // Sent past the up-front check on purpose (the runtime client alone), to observe the router.
  const py = new PythonRuntimeClient(
    transport,
    { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
    { port: runtime.port },
  );
  const started = Date.now();
  const r = await py.execute(['sh', '-c', 'sleep 6; echo late'], { deadlineMs: 10_000 });
  const tookMs = Date.now() - started;
  expect(r.kind === 'failed' ? [r.error.category, r.error.code, r.error.decided] : r).toEqual([
    'timeout',
    502,
    { reason: 'RouterTimeout', layer: 'router' },
  ]);
  expect(tookMs).toBeGreaterThanOrEqual(2_900);
  expect(tookMs).toBeLessThan(5_500);
});
