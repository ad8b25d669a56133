/**
 * Rule: a network-reached capability is verified only after N consecutive successes. A real loopback python-runtime
 * stand-in (POST /execute echoes the command) that fails exactly one request of the sample, at a chosen position:
 * runtime-exec stays below verified and the evidence names the position.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { settle } from '../../../src/verify/states.js';
import { Facts } from '../../../src/verify/probes/common.js';
import { proveExecution } from '../../../src/verify/probes/workload/runtime-proof.js';
import { AdapterRuntimeProber } from '../../../src/verify/runtime-prober.js';

/**
 * Answers health and echo commands; the `failAt`-th echo (1-based) gets a 502. Any other command (the adapter's one
 * question whether the runtime has `timeout`) is not found here, exit 127, as in an image without it.
 */
async function flakyRuntime(failAt: number): Promise<{ port: number; close: () => Promise<void> }> {
  let executes = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      if (req.method === 'GET') return res.end('{"status":"ok"}');
      const command = (JSON.parse(raw) as { command: string }).command;
      res.setHeader('content-type', 'application/json');
      if (!command.startsWith('echo '))
        return res.end(JSON.stringify({ stdout: '', stderr: 'not found', exit_code: 127 }));
      executes += 1;
      if (executes === failAt) return res.writeHead(502).end('{"detail":"upstream failed"}');
      res.end(JSON.stringify({ stdout: `${command.replace(/^echo /, '')}\n`, stderr: '', exit_code: 0 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

async function prove(failAt: number, samples: number) {
  const rt = await flakyRuntime(failAt);
  const exec = new Facts('runtime-exec');
  exec
    .proven('discovered', 't', 'RuntimeDeclared', 'd')
    .proven('compatible', 't', 'RuntimeSpoken', 's')
    .proven('configured', 't', 'TransportReachesRuntime', 'c');
  const prober = new AdapterRuntimeProber({});
  const target = {
    kind: 'python-runtime' as const,
    transport: 'direct' as const,
    namespace: 'sbx',
    sandbox: 's1',
    pod: 's1',
    podIP: '127.0.0.1',
    restPort: rt.port,
  };
  const ok = await proveExecution(prober, target, { probeTimeoutMs: 2000, runId: 'r1', samples }, exec, 'pod s1 Ready');
  await prober.close();
  await rt.close();
  return { ok, state: settle(exec.list).state, failing: exec.list.filter((e) => e.verdict !== 'proven') };
}

test('one failure at position 4 of 5 keeps runtime-exec at configured and is reported as sample 4/5', async () => {
  const r = await prove(4, 5);
  expect(r.ok).toBe(false);
  expect(r.state).toBe('configured');
  expect(r.failing).toHaveLength(1);
  expect(r.failing[0]).toMatchObject({
    step: 'verified',
    verdict: 'unknown',
    reason: 'RuntimeError',
    value: 'sample 4/5',
  });
});

test('a failure after the sample is not seen: 5 in a row verify, and 3 of a 3-sample pass only with 3', async () => {
  expect(await prove(6, 5)).toMatchObject({ ok: true, state: 'verified' });
  expect(await prove(3, 3)).toMatchObject({ ok: false, state: 'configured' });
});
