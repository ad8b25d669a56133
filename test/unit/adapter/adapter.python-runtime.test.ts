/**
 * The python-runtime client, against the REAL upstream python runtime (`main.py` of v0.5.6 and of v1.0.3, run as it is:
 * python-runtime-process.ts).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PythonRuntimeClient, shellJoin } from '../../../src/adapter/runtime/python-runtime.js';
import { DirectTransport } from '../../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../../src/adapter/transports/router.js';
import { PYTHON_RUNTIME_TAGS } from '../../../test-cluster/python-runtime.js';
import { startPythonRuntime, type PythonRuntimeProcess } from './python-runtime-process.js';

const target = { namespace: 'sbx', sandboxName: 'py-1', podIP: '127.0.0.1' };

describe.each(PYTHON_RUNTIME_TAGS)('python runtime %s', (tag) => {
  let rt: PythonRuntimeProcess;
  let client: PythonRuntimeClient;

  beforeAll(async () => {
    rt = await startPythonRuntime(tag);
    client = new PythonRuntimeClient(new DirectTransport(), target, {
      port: rt.port,
      limits: { maxRequestBytes: 2048 },
    });
  }, 60_000);
  afterAll(async () => rt?.stop());

  test('health: GET / answers status ok', async () => {
    expect(await client.health(2000)).toMatchObject({ kind: 'ok', value: { status: 'ok' } });
  });

  test('argv survives the shell-word round trip: quotes, spaces, $ and backslashes reach the process unchanged', async () => {
    const args = ["it's", 'two words', '$HOME', 'back\\slash', '"dq"', ''];
    const r = await client.execute(['printf', '%s|', ...args], { deadlineMs: 5000 });
    expect(r).toMatchObject({ kind: 'ok', value: { exitCode: 0, stdout: `${args.join('|')}|`, stderr: '' } });
    expect(shellJoin(['echo', 'a b'])).toBe("echo 'a b'");
  });

  test('a nonce command returns exit code and output; a failing one its exit code', async () => {
    const nonce = randomUUID();
    expect(await client.execute(['echo', nonce], { deadlineMs: 5000 })).toMatchObject({
      kind: 'ok',
      value: { exitCode: 0, stdout: `${nonce}\n` },
    });
    expect(await client.execute(['sh', '-c', 'exit 7'], { deadlineMs: 5000 })).toMatchObject({
      kind: 'ok',
      value: { exitCode: 7 },
    });
  });

  test('env and cwd are refused: the python runtime cannot take them', async () => {
    expect((await client.execute(['env'], { env: { A: '1' } })).kind).toBe('rejected');
    expect((await client.execute(['pwd'], { cwd: '/tmp' })).kind).toBe('rejected');
  });

  test('request size is checked before sending', async () => {
    const r = await client.execute(['echo', 'x'.repeat(3000)], { deadlineMs: 5000 });
    expect(r.kind === 'failed' && r.error.category).toBe('too-large');
  });
});

test('router transport: addresses by name (X-Sandbox-ID/-Namespace/-Port, no pod IP) and port 8888 by default, as clients do; pod IP and token on request', async () => {
  // A loopback HTTP server stands in for the router only to record what the client sends.
  const seen: http.IncomingHttpHeaders[] = [];
  const router = http.createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'ok', message: 'Sandbox Runtime is active.' }));
  });
  await new Promise<void>((r) => router.listen(0, '127.0.0.1', () => r()));
  try {
    const url = `http://127.0.0.1:${(router.address() as AddressInfo).port}`;
    const viaRouter = new PythonRuntimeClient(new RouterTransport(url), target);
    expect((await viaRouter.health(2000)).kind).toBe('ok');
    expect(seen[0]).toMatchObject({ 'x-sandbox-id': 'py-1', 'x-sandbox-namespace': 'sbx', 'x-sandbox-port': '8888' });
    expect(seen[0]!['x-sandbox-pod-ip']).toBeUndefined();
    expect(seen[0]!.authorization).toBeUndefined();
    // scoped-token routers: a bearer token, still no pod IP header (they reject it)
    const scoped = new PythonRuntimeClient(new RouterTransport(url, { token: 'router-token' }), target);
    expect((await scoped.health(2000)).kind).toBe('ok');
    expect(seen[1]).toMatchObject({ 'x-sandbox-id': 'py-1', authorization: 'Bearer router-token' });
    expect(seen[1]!['x-sandbox-pod-ip']).toBeUndefined();
    const withIP = new PythonRuntimeClient(new RouterTransport(url, { podIPHeader: true }), target);
    expect((await withIP.health(2000)).kind).toBe('ok');
    expect(seen[2]).toMatchObject({ 'x-sandbox-pod-ip': '127.0.0.1' });
  } finally {
    router.close();
  }
});
