/**
 * Case runtime-exec-starves-probe (verifier side): every runtime probe has its own deadline; a runtime that accepts the
 * connection and never answers (the pre-v0.5.6 python runtime while `sleep 900` runs) keeps execution at `configured`
 * with evidence.
 *
 * The hanging python runtime is a small local server on 127.0.0.1 that follows the documented contract
 * (`examples/python-runtime-sandbox/main.py@v0.5.0`: `POST /execute` blocks while a command runs) — the python runtime
 * cannot be built here, and a real sandboxd cannot be made to hang. The sandboxd variants (silent, hanging, healthy)
 * run on the test cluster in test/cluster/verify/verify-runtime.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Facts } from '../../src/verify/probes/common.js';
import { proveExecution } from '../../src/verify/probes/workload/runtime-proof.js';
import { AdapterRuntimeProber, type RuntimeTarget } from '../../src/verify/runtime-prober.js';
import { settle } from '../../src/verify/states.js';
import type { Evidence } from '../../src/verify/evidence.js';

let server: http.Server;
let port = 0;
let mode: 'hang' | 'echo' | 'wrong' = 'hang';
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/' && req.method === 'GET')
        return void res.end(JSON.stringify({ status: 'ok', message: 'Sandbox Runtime is active.' }));
      if (req.url === '/execute' && req.method === 'POST') {
        if (mode === 'hang') return void held.push(res); // a long command is in flight: nothing else is served
        const command = (JSON.parse(body) as { command: string }).command;
        const out = mode === 'echo' ? `${command.replace(/^echo /, '')}\n` : 'something else\n';
        res.setHeader('content-type', 'application/json');
        return void res.end(JSON.stringify({ stdout: out, stderr: '', exit_code: 0 }));
      }
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const r of held) r.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function target(): RuntimeTarget {
  return {
    kind: 'python-runtime',
    transport: 'direct',
    namespace: 'sbx',
    sandbox: 's1',
    pod: 's1',
    podIP: '127.0.0.1',
    restPort: port,
  };
}

/** `probeTimeoutMs`: short where the deadline is the subject (a hang), generous where an answer is, so load cannot turn it into a timeout. */
async function run(
  probeTimeoutMs: number,
): Promise<ReturnType<typeof settle> & { blocking?: Evidence; ms: number; ok: boolean }> {
  const exec = new Facts('runtime-exec');
  exec
    .proven('discovered', 't', 'RuntimeDeclared', 'python runtime on 8888')
    .proven('compatible', 't', 'RuntimeSpoken', 'spoken')
    .proven('configured', 't', 'TransportReachesRuntime', 'direct reaches it');
  const prober = new AdapterRuntimeProber({});
  const started = Date.now();
  const ok = await proveExecution(
    prober,
    target(),
    { probeTimeoutMs, runId: 'abc123', samples: 2 },
    exec,
    'pod s1 Ready=True IP 127.0.0.1',
  );
  await prober.close();
  const blocking = exec.list.find((e) => e.step === 'verified' && e.verdict !== 'proven');
  return { ...settle(exec.list), ...(blocking ? { blocking } : {}), ms: Date.now() - started, ok };
}

describe('case runtime-exec-starves-probe (verifier)', () => {
  test('a runtime that never answers stays configured after its own deadline, evidence names the sample and its wait', async () => {
    mode = 'hang';
    const r = await run(500);
    expect(r.ok).toBe(false);
    expect(r.state).toBe('configured');
    expect(r.nextReason).toBe('RuntimeTimeout');
    expect(r.blocking).toMatchObject({ verdict: 'unknown', field: 'Execute(echo <nonce 1>)', value: 'sample 1/2' });
    expect(r.blocking!.durationMs).toBeGreaterThanOrEqual(450);
    expect(r.ms).toBeGreaterThanOrEqual(450);
    // bounded by its own deadline (without one the hang would last until the test's timeout)
    expect(r.ms).toBeLessThan(5000);
  });

  test('a runtime answering the wrong output stays configured (no lucky success)', async () => {
    mode = 'wrong';
    const r = await run(10_000);
    expect(r.state).toBe('configured');
    expect(r.nextReason).toBe('NonceMismatch');
    expect(r.blocking).toMatchObject({ verdict: 'missing', field: 'Execute(echo <nonce 1>)', value: 'something else' });
  });

  test('nothing listening: refused connections are retried until the deadline, then execution stays configured', async () => {
    const exec = new Facts('runtime-exec');
    exec
      .proven('discovered', 't', 'RuntimeDeclared', 'x')
      .proven('compatible', 't', 'RuntimeSpoken', 'x')
      .proven('configured', 't', 'TransportReachesRuntime', 'x');
    const closed = await new Promise<number>((resolve) => {
      const s = http.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const prober = new AdapterRuntimeProber({});
    const ok = await proveExecution(
      prober,
      { ...target(), restPort: closed },
      { probeTimeoutMs: 1500, runId: 'abc123', samples: 2 },
      exec,
      'pod s1 Ready=True',
    );
    expect(ok).toBe(false);
    const s = settle(exec.list);
    expect(s.state).toBe('configured');
    expect(s.nextReason).toBe('RuntimeSilent');
    const blocking = exec.list.find((e) => e.step === 'verified')!;
    expect(blocking).toMatchObject({ verdict: 'unknown', field: 'health' });
    // Refused connections were retried for (about) the whole deadline, not given up on at the first.
    expect(blocking.durationMs).toBeGreaterThanOrEqual(500);
  });

  test('a runtime echoing both nonces reaches verified for execution', async () => {
    mode = 'echo';
    const r = await run(10_000);
    expect(r).toMatchObject({ state: 'verified', next: null, nextReason: null, ok: true });
  });
});
