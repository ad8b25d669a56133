/**
 * Rule: no HTTP client of the product follows a redirect (case router-podip-ssrf (d)). Two real loopback servers the
 * test owns: the first answers every request with a redirect to the second; the second counts the connections it gets,
 * which must stay 0 for every runtime client call over every HTTP transport, and the outcome is the typed `redirect`
 * failure.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PythonRuntimeClient } from '../../../src/adapter/runtime/python-runtime.js';
import { SandboxdClient } from '../../../src/adapter/runtime/sandboxd.js';
import { DirectTransport } from '../../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../../src/adapter/transports/router.js';
import type { Result } from '../../../src/adapter/types.js';
import { AdapterRuntimeProber } from '../../../src/verify/runtime-prober.js';
import { runtimeFailureReason } from '../../../src/verify/probes/workload/runtime-proof.js';

let target: http.Server;
let targetConnections = 0;
let redirector: http.Server;
const seenAuth: string[] = [];

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

let redirectPort = 0;
beforeAll(async () => {
  target = http.createServer((_req, res) => res.end('{"status":"ok"}'));
  target.on('connection', (s: Socket) => {
    targetConnections += 1;
    s.destroy();
  });
  const targetPort = await listen(target);
  redirector = http.createServer((req, res) => {
    if (req.headers.authorization) seenAuth.push(req.headers.authorization);
    const status = req.url?.startsWith('/v1/files') ? 302 : 307;
    res.writeHead(status, { Location: `http://127.0.0.1:${targetPort}${req.url}` }).end();
  });
  redirectPort = await listen(redirector);
});
afterAll(async () => {
  await new Promise((r) => target.close(r));
  await new Promise((r) => redirector.close(r));
});

function expectRedirect(r: Result<unknown>, status: number): void {
  expect(r.kind).toBe('failed');
  if (r.kind === 'failed') expect(r.error).toMatchObject({ category: 'redirect', code: status });
}

test('sandboxd REST over direct: health, file write and read answer redirect; the redirect target gets 0 connections', async () => {
  const client = new SandboxdClient(
    new DirectTransport(),
    { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
    { ports: { rest: redirectPort } },
  );
  expectRedirect(await client.health(2000), 307);
  expectRedirect(await client.writeFile('a.txt', 'secret', '0644', 2000), 302);
  expectRedirect(await client.readFile('a.txt', 2000), 302);
  client.close();
  expect(targetConnections).toBe(0);
});

test('python runtime over the router transport with a bearer token: the token goes to the router only, never to the redirect target', async () => {
  const router = new RouterTransport(`http://127.0.0.1:${redirectPort}`, { token: 'router-token' });
  const client = new PythonRuntimeClient(router, { namespace: 'sbx', sandboxName: 's1' }, { port: 8888 });
  expectRedirect(await client.health(2000), 307);
  expectRedirect(await client.execute(['echo', 'x'], { deadlineMs: 2000 }), 307);
  // Health, the first call's question whether the runtime has `timeout`, then the command: each to the router only.
  expect(seenAuth).toEqual(['Bearer router-token', 'Bearer router-token', 'Bearer router-token']);
  expect(targetConnections).toBe(0);
});

test("the verifier's prober reports the redirect as RuntimeRedirected", async () => {
  const prober = new AdapterRuntimeProber({ routerUrl: `http://127.0.0.1:${redirectPort}` });
  const target = {
    kind: 'sandboxd' as const,
    transport: 'direct' as const,
    namespace: 'sbx',
    sandbox: 's1',
    pod: 's1',
    podIP: '127.0.0.1',
    restPort: redirectPort,
    grpcPort: 1,
  };
  for (const via of [undefined, 'router' as const]) {
    const r = await prober.health(target, 2000, via);
    expect(r.kind).toBe('error');
    if (r.kind !== 'answered') expect(runtimeFailureReason(r)).toBe('RuntimeRedirected');
  }
  await prober.close();
  expect(targetConnections).toBe(0);
});
