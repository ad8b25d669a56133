/**
 * The sandboxd client against the REAL sandboxd v0.5.6 binary on 127.0.0.1 (REST + gRPC ProcessService over our own proto),
 * reached through the direct transport with pod IP 127.0.0.1.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SandboxdClient } from '../../../src/adapter/runtime/sandboxd.js';
import { DirectTransport } from '../../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../../src/adapter/transports/router.js';
import { freePorts, startSandboxd, type SandboxdProcess } from './sandboxd-process.js';

let sd: SandboxdProcess;
let client: SandboxdClient;
const target = { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' };

beforeAll(async () => {
  sd = await startSandboxd();
  client = new SandboxdClient(new DirectTransport(), target, {
    ports: { rest: sd.restPort, grpc: sd.grpcPort },
    limits: { maxRequestBytes: 4096, maxResponseBytes: 64 * 1024 },
  });
}, 20_000);
afterAll(async () => {
  client?.close();
  await sd?.stop();
});

test('health answers ok over REST', async () => {
  const r = await client.health(2000);
  expect(r).toMatchObject({ kind: 'ok', value: { status: 'ok' } });
});

test('Execute runs argv without a shell and returns exit code and output', async () => {
  const nonce = randomUUID();
  const r = await client.execute(['sh', '-c', `printf %s "$NONCE"; echo err >&2; exit 3`], {
    env: { NONCE: nonce },
    deadlineMs: 5000,
  });
  expect(r).toMatchObject({ kind: 'ok', value: { exitCode: 3, stdout: nonce, stderr: 'err\n', truncated: false } });
  const noShell = await client.execute(['echo', '$HOME', '|', 'x'], { deadlineMs: 5000 });
  expect(noShell).toMatchObject({ kind: 'ok', value: { exitCode: 0, stdout: '$HOME | x\n' } });
});

test('cwd is confined to the root dir: an escape is PermissionDenied, mapped to forbidden', async () => {
  const r = await client.execute(['pwd'], { cwd: '../..', deadlineMs: 5000 });
  expect(r.kind).toBe('failed');
  if (r.kind === 'failed') expect(r.error).toMatchObject({ category: 'forbidden', code: 7 });
});

test('a missing executable is NotFound', async () => {
  const r = await client.execute(['no-such-binary-xyz'], { deadlineMs: 5000 });
  expect(r.kind).toBe('failed');
  if (r.kind === 'failed') expect(r.error.category).toBe('not-found');
});

test('the deadline cancels a command that runs too long', async () => {
  const started = Date.now();
  const r = await client.execute(['sleep', '30'], { deadlineMs: 400 });
  const took = Date.now() - started;
  expect(r.kind).toBe('failed');
  // sandboxd answers CANCELLED or the client reports DEADLINE_EXCEEDED, whichever comes first: both are the deadline.
  if (r.kind === 'failed') expect(r.error.category).toBe('timeout');
  expect(took).toBeLessThan(3000);
});

test('request size is checked on the serialized message before sending', async () => {
  const r = await client.execute(['echo', 'x'.repeat(5000)], { deadlineMs: 5000 });
  expect(r.kind).toBe('failed');
  if (r.kind === 'failed') {
    expect(r.error.category).toBe('too-large');
    expect(r.error.size?.limitBytes).toBe(4096);
    expect(r.error.size!.bytes).toBeGreaterThan(5000);
  }
});

test('output beyond the response cap: execute and start both stream it, truncated with the total count, never a size failure', async () => {
  const executed = await client.execute(['head', '-c', '200000', '/dev/zero'], { deadlineMs: 5000 });
  expect(executed).toMatchObject({
    kind: 'ok',
    value: { exitCode: 0, truncated: true, output: { stdout: { totalBytes: 200_000, truncated: true } } },
  });
  const streamed = await client.start(['head', '-c', '200000', '/dev/zero'], { deadlineMs: 5000 });
  expect(streamed.kind).toBe('ok');
  if (streamed.kind !== 'ok') return;
  const done = await streamed.value.done;
  expect(done.kind).toBe('ok');
  if (done.kind === 'ok') {
    expect(done.value.exitCode).toBe(0);
    expect(done.value.truncated).toBe(true);
    expect(Buffer.byteLength(done.value.stdout)).toBe(64 * 1024);
  }
});

test('Start streams init, output and exit', async () => {
  const r = await client.start(['sh', '-c', 'echo one; sleep 0.2; echo two; exit 5'], { deadlineMs: 5000 });
  expect(r.kind).toBe('ok');
  if (r.kind !== 'ok') return;
  const done = await r.value.done;
  expect(done).toMatchObject({ kind: 'ok', value: { exitCode: 5, stdout: 'one\ntwo\n' } });
  expect(r.value.snapshot().processId).toBeGreaterThan(0);
});

test('files: PUT then GET round-trips bytes inside the root dir', async () => {
  const body = `nonce ${randomUUID()}\n`;
  expect(await client.writeFile('probe/dir/file.txt', body)).toEqual({ kind: 'ok', value: undefined });
  expect(readFileSync(path.join(sd.rootDir, 'probe/dir/file.txt'), 'utf8')).toBe(body);
  const back = await client.readFile('probe/dir/file.txt');
  expect(back.kind === 'ok' && back.value.toString('utf8')).toBe(body);
  const missing = await client.readFile('probe/none.txt');
  expect(missing.kind === 'failed' && missing.error.category).toBe('not-found');
  writeFileSync(path.join(sd.rootDir, 'probe/local.txt'), 'written outside the API');
  const local = await client.readFile('probe/local.txt');
  expect(local.kind === 'ok' && local.value.toString('utf8')).toBe('written outside the API');
});

test('nothing listening: unreachable, not a hang', async () => {
  const dead = new SandboxdClient(new DirectTransport(), target, { ports: { rest: 1, grpc: 1 } });
  const h = await dead.health(2000);
  expect(h.kind === 'failed' && h.error.category).toBe('unreachable');
  const e = await dead.execute(['true'], { deadlineMs: 2000 });
  expect(e.kind === 'failed' && ['unreachable', 'timeout'].includes(e.error.category)).toBe(true);
  dead.close();
});

test('gRPC through the router transport is unsupported (HTTP/1.1 only), never attempted', async () => {
  const viaRouter = new SandboxdClient(new RouterTransport('http://127.0.0.1:1'), target);
  const r = await viaRouter.execute(['true'], { deadlineMs: 1000 });
  expect(r).toMatchObject({ kind: 'unsupported', capability: 'runtime-exec', state: 'unsupported' });
  if (r.kind === 'unsupported') expect(r.reason).toBe('TransportCannotCarryGrpc');
});

// A runtime that comes up after a refused call (a pod whose sandboxd starts late, or a pod IP reused) answers the
// very next call: grpc-js would otherwise fail it with the old refusal until its reconnect backoff ends.
test('a call after the runtime came up is answered at once, by this client and by a new one', async () => {
  const [rest, grpc] = await freePorts(2);
  const opts = { ports: { rest: rest!, grpc: grpc! } };
  const early = new SandboxdClient(new DirectTransport(), target, opts);
  const refused = await early.execute(['true'], { deadlineMs: 2000 });
  expect(refused.kind === 'failed' && refused.error.category).toBe('unreachable');
  const late = await startSandboxd('v0.5.6', { rest: rest!, grpc: grpc! });
  try {
    const again = await early.execute(['echo', 'up'], { deadlineMs: 5000 });
    expect(again.kind === 'ok' && again.value.stdout).toBe('up\n');
    const other = new SandboxdClient(new DirectTransport(), target, opts);
    const fresh = await other.execute(['echo', 'fresh'], { deadlineMs: 5000 });
    expect(fresh.kind === 'ok' && fresh.value.stdout).toBe('fresh\n');
    other.close();
  } finally {
    early.close();
    await late.stop();
  }
});
