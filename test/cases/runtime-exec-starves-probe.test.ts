/**
 * Case runtime-exec-starves-probe, adapter side: every runtime probe has its own deadline, and the probe for each
 * runtime kind comes from its documented contract (python runtime: GET / on 8888; sandboxd: GET /v1/health on 8080,
 * gRPC on 9090). The pre-v0.5.6 python runtime cannot be built here: a local stand-in following its contract
 * (fixtures/python-runtime-fake.mjs, mode `blocking`) runs each command synchronously, blocking every other request
 * like main.py@v0.4.6 / v0.5.0 did.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PythonRuntimeClient } from '../../src/adapter/runtime/python-runtime.js';
import { SandboxdClient } from '../../src/adapter/runtime/sandboxd.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../src/adapter/transports/router.js';
import { startFakePythonRuntime, type FakeRuntime } from '../unit/adapter/python-runtime-fake.js';

let rt: FakeRuntime;
beforeAll(async () => {
  rt = await startFakePythonRuntime('blocking');
});
afterAll(() => rt?.stop());

test('a long command in flight: the readiness probe times out at its own deadline instead of hanging', async () => {
  const target = { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' };
  const other = new PythonRuntimeClient(new DirectTransport(), target, { port: rt.port });
  const probe = new PythonRuntimeClient(new DirectTransport(), target, { port: rt.port });
  expect((await probe.health(2000)).kind).toBe('ok');

  const longRunning = other.execute(['sleep', '3'], { deadlineMs: 10_000 });
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  const health = await probe.health(500);
  const took = Date.now() - started;
  expect(health.kind).toBe('failed');
  if (health.kind === 'failed') {
    expect([health.error.category, health.error.deadlineMs]).toEqual(['timeout', 500]);
  }
  expect(took).toBeGreaterThanOrEqual(450);
  expect(took).toBeLessThan(2500);
  const nonce = await probe.execute(['echo', 'nonce-1'], { deadlineMs: 500 });
  expect(nonce.kind === 'failed' && nonce.error.category).toBe('timeout');

  expect(await longRunning).toMatchObject({ kind: 'ok', value: { exitCode: 0 } });
  expect((await probe.health(2000)).kind).toBe('ok');
}, 20_000);

test('the probe follows the runtime kind: GET / on 8888 for the python runtime, GET /v1/health on 8080 for sandboxd', async () => {
  const seen: Array<{ path: string; port: string }> = [];
  const router = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', port: String(req.headers['x-sandbox-port']) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'ok' }));
  });
  await new Promise<void>((r) => router.listen(0, '127.0.0.1', () => r()));
  try {
    // This loopback server records the router-addressed requests; it is not a runtime.
    const transport = new RouterTransport(`http://127.0.0.1:${(router.address() as AddressInfo).port}`);
    const target = { namespace: 'sbx', sandboxName: 's1' };
    expect((await new PythonRuntimeClient(transport, target).health(1000)).kind).toBe('ok');
    expect((await new SandboxdClient(transport, target).health(1000)).kind).toBe('ok');
    expect(seen).toEqual([
      { path: '/', port: '8888' },
      { path: '/v1/health', port: '8080' },
    ]);
  } finally {
    router.close();
  }
});
