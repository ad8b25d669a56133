/**
 * Case router-timeout-layers, adapter side. (1) Runtime calls do not use Node's `fetch`, whose undici client cuts any
 * call at 300 s without response headers whatever the caller's deadline: every client-side timeout of a request comes
 * from the caller's deadline (up to the 1 h maximum). (2) Through the router, a 504, or a 502 arriving at the v0.5.6
 * router's 30 s response-header timeout, is `timed-out` by the router, not a connection failure; an early 502 is the
 * router's refusal of an answer (runtime-error decided by the router); every runtime call through the router (health,
 * files, on both runtimes) reads a 504 the same way. (3) Every layer's limit is known before the call: a deadline past
 * the router's response-header timeout is refused up front, naming the layer and value, and nothing is sent; a
 * deployed router's own flags move that limit; `X-Sandbox-Timeout` goes only to routers that take it (the python
 * router from v0.5.0, not the Go router of v0.5.6 / v1.0.3). A loopback HTTP server stands in for the router (the
 * real Go router: test/cluster/cases/router-timeout-layers.test.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpCall, requestTimeouts, routerTimeout } from '../../src/adapter/runtime/http.js';
import {
  DEFAULT_LIMITS,
  MAX_DEADLINE_MS,
  ROUTER_RESPONSE_HEADER_TIMEOUT_MS,
} from '../../src/adapter/runtime/limits.js';
import { Executions, outcomeOf } from '../../src/adapter/runtime/executions.js';

import { PythonRuntimeClient, PythonRuntimeFiles } from '../../src/adapter/runtime/python-runtime.js';
import { SandboxdClient } from '../../src/adapter/runtime/sandboxd.js';
import { RouterTransport } from '../../src/adapter/transports/router.js';
import { routerLimits } from '../../src/adapter/runtime/layer-limits.js';
import { routerLimitFacts } from '../../src/releases/router-limits.js';
import type { ExecutionStatus, Result, SessionRef } from '../../src/adapter/types.js';

let router: http.Server;
let url = '';
let answer: { status: number; delayMs: number } = { status: 200, delayMs: 0 };
/** Requests the stand-in router received: path and `X-Sandbox-Timeout` (absent = not sent). */
const seen: Array<{ path: string; sandboxTimeout?: string }> = [];
beforeAll(async () => {
  router = http.createServer((req, res) => {
    const t = req.headers['x-sandbox-timeout'];
    seen.push({ path: req.url ?? '', ...(typeof t === 'string' ? { sandboxTimeout: t } : {}) });
    req.resume();
    setTimeout(() => {
      res.writeHead(answer.status, { 'content-type': 'text/plain' });
      res.end(answer.status === 200 ? '{"status":"ok"}' : 'Could not connect to the backend sandbox');
    }, answer.delayMs);
  });
  await new Promise<void>((r) => router.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(router.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise((r) => router.close(r)));

test("every client-side timeout of a runtime call is the caller's deadline, up to 1 h (no 300 s cap)", () => {
  expect(requestTimeouts(MAX_DEADLINE_MS)).toEqual({
    headersMs: MAX_DEADLINE_MS,
    bodyMs: MAX_DEADLINE_MS,
    socketIdleMs: MAX_DEADLINE_MS,
  });
  expect(Math.min(...Object.values(requestTimeouts(MAX_DEADLINE_MS)))).toBeGreaterThan(300_000);
});

test('runtime calls do not go through fetch (whose header timeout is 300 s), and headers may take their time', async () => {
  const realFetch = globalThis.fetch;
  globalThis.fetch = (() => {
    throw new Error('fetch used');
  }) as typeof fetch;
  try {
    answer = { status: 200, delayMs: 1200 };
    const r = await httpCall(
      { baseUrl: url, headers: {}, describe: 'test' },
      { method: 'GET', path: '/' },
      { ...DEFAULT_LIMITS, deadlineMs: MAX_DEADLINE_MS },
      'test GET /',
    );
    expect(r).toMatchObject({ kind: 'ok', value: { status: 200 } });
  } finally {
    globalThis.fetch = realFetch;
  }
});

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
async function viaRouter(): Promise<ExecutionStatus> {
  const ex = new Executions({ transport: new RouterTransport(url), supportStates: () => 'verified' });
  const binding = {
    template: 'template/sbx/py' as const,
    runtime: { kind: 'python-runtime' as const },
    target: { namespace: 'sbx', sandboxName: 's1' },
  };
  expect((await ex.start('r1', { session, argv: ['sleep', '45'], timeoutMs: 20_000 }, binding)).kind).toBe('ok');
  for (let i = 0; i < 200; i++) {
    const q = ex.query('r1');
    if (q.kind === 'ok' && q.value.state !== 'running') return q.value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('still running');
}

test('a router 504: timed-out by the router, not a connection failure', async () => {
  answer = { status: 504, delayMs: 0 };
  const s = await viaRouter();
  expect(s.outcome).toMatchObject({
    kind: 'timed-out',
    by: 'router',
    reason: 'RouterTimeout',
    layer: 'router',
    commandMayStillRun: true,
  });
  expect(s.state).toBe('timed-out');
});

test("an early router 502 is the router's refusal of an answer, decided by the router", async () => {
  answer = { status: 502, delayMs: 0 };
  const s = await viaRouter();
  expect(s.outcome).toMatchObject({
    kind: 'runtime-error',
    reason: 'RuntimeAnswerInvalid',
    layer: 'router',
    code: 502,
  });
});

test("a 502 at the router's 30 s response-header timeout is the router's timeout", () => {
  const a = { status: 502, contentType: 'text/plain', body: Buffer.from('Could not connect to the backend sandbox') };
  const late = routerTimeout('router', { ...a, durationMs: ROUTER_RESPONSE_HEADER_TIMEOUT_MS + 20 }, 'x');
  expect(late).toMatchObject({ category: 'timeout', decided: { reason: 'RouterTimeout', layer: 'router' } });
  expect(outcomeOf({ kind: 'failed', error: late! }, 'router')).toMatchObject({ kind: 'timed-out', by: 'router' });
  expect(routerTimeout('router', { ...a, durationMs: 200 }, 'x')).toBeUndefined();
  expect(routerTimeout('direct', { ...a, status: 504, durationMs: 200 }, 'x')).toBeUndefined();
});

test('every runtime call through the router reads a router 504 as its timeout: health, files, both runtimes', async () => {
  answer = { status: 504, delayMs: 0 };
  const transport = new RouterTransport(url);
  const target = { namespace: 'sbx', sandboxName: 's1' };
  const sd = new SandboxdClient(transport, target);
  const py = new PythonRuntimeClient(transport, target);
  const files = new PythonRuntimeFiles(transport, target);
  const calls: Array<[string, Promise<Result<unknown>>]> = [
    ['sandboxd health', sd.health(2000)],
    ['sandboxd readFile', sd.readFile('a.txt', 2000)],
    ['sandboxd writeFile', sd.writeFile('a.txt', 'x', '0644', 2000)],
    ['python health', py.health(2000)],
    ['python write', files.write('a.txt', Buffer.from('x'), 2000)],
    ['python read', files.read('a.txt', 2000)],
    ['python list', files.list('.', 2000)],
    ['python exists', files.exists('a.txt', 2000)],
  ];
  for (const [name, call] of calls) {
    const r = await call;
    expect([name, r.kind === 'failed' ? [r.error.category, r.error.decided] : r.kind]).toEqual([
      name,
      ['timeout', { reason: 'RouterTimeout', layer: 'router' }],
    ]);
  }
  sd.close();
});

const pyBinding = {
  template: 'template/sbx/py' as const,
  runtime: { kind: 'python-runtime' as const },
  target: { namespace: 'sbx', sandboxName: 's1' },
};

test("a deadline past the router's 30 s response-header timeout is refused up front, naming the layer; nothing is sent", async () => {
  seen.length = 0;
  const ex = new Executions({ transport: new RouterTransport(url), supportStates: () => 'verified' });
  const r = await ex.start('long', { session, argv: ['sleep', '45'], timeoutMs: 600_000 }, pyBinding);
  expect(r.kind === 'rejected' ? [r.reason, r.limit] : r.kind).toEqual([
    'ExceedsLayerLimit',
    {
      layer: 'router',
      setting: 'router-response-header-timeout',
      limitMs: 30_000,
      source: 'release-default',
      label: 'router response-header timeout 30s',
    },
  ]);
  expect(seen).toEqual([]);
  expect(ex.query('long')).toMatchObject({ kind: 'rejected', reason: 'ExecutionUnknown' });
});

test("a deployed router's --response-header-timeout moves the limit; the runtime's exec limit is next", async () => {
  const deployed = routerLimits(routerLimitFacts('v0.5.6')!, {
    name: 'agent-sandbox-system/sandbox-router',
    args: ['--response-header-timeout=10m', '--proxy-timeout=10m'],
    env: {},
  });
  const ex = new Executions({
    transport: new RouterTransport(url, { limits: deployed }),
    supportStates: () => 'verified',
  });
  const r = await ex.start('long', { session, argv: ['sleep', '400'], timeoutMs: 400_000 }, pyBinding);
  expect(r.kind === 'rejected' ? [r.reason, r.limit?.layer, r.limit?.setting, r.limit?.limitMs] : r.kind).toEqual([
    'ExceedsLayerLimit',
    'runtime',
    'runtime-exec-timeout',
    300_000,
  ]);
});

test("a 502 at a deployed router's own response-header timeout (not 30 s) is the router's timeout", () => {
  const a = { status: 502, contentType: 'text/plain', body: Buffer.from('Could not connect to the backend sandbox') };
  const at3s = { ...a, durationMs: 3_050, router: { headerTimeoutMs: 3_000 } };
  expect(routerTimeout('router', at3s, 'x')?.decided).toEqual({ reason: 'RouterTimeout', layer: 'router' });
  // The python router has no header timeout: its 502 is never read as one.
  expect(routerTimeout('router', { ...a, durationMs: 31_000, router: {} }, 'x')).toBeUndefined();
});

test('X-Sandbox-Timeout only to routers that take it: never to the Go router, the deadline in seconds to the python router', async () => {
  answer = { status: 200, delayMs: 0 };
  const target = { namespace: 'sbx', sandboxName: 's1' };
  const calls = async (transport: RouterTransport): Promise<typeof seen> => {
    seen.length = 0;
    const py = new PythonRuntimeClient(transport, target);
    const files = new PythonRuntimeFiles(transport, target);
    await py.execute(['true'], { deadlineMs: 12_300 });
    await files.read('a.txt', 2_000);
    await py.health(2_000);
    return [...seen];
  };
  // The first /execute is the client's one question whether the runtime can enforce a deadline (`timeout -k`).
  expect(await calls(new RouterTransport(url))).toEqual([
    { path: '/execute' },
    { path: '/execute' },
    { path: '/download/a.txt' },
    { path: '/' },
  ]);
  const pythonRouter = routerLimits(routerLimitFacts('v0.5.0')!);
  expect(await calls(new RouterTransport(url, { limits: pythonRouter }))).toEqual([
    { path: '/execute', sandboxTimeout: '2' },
    { path: '/execute', sandboxTimeout: '13' },
    { path: '/download/a.txt', sandboxTimeout: '2' },
    { path: '/', sandboxTimeout: '2' },
  ]);
});
