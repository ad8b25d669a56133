/**
 * A runtime that refuses connections at first (not listening yet) and then accepts but never answers: the health
 * contact ends as a timeout whose duration is the whole contact, at least the probe deadline, not the last attempt.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Facts } from '../../../src/verify/probes/common.js';
import { proveExecution } from '../../../src/verify/probes/workload/runtime-proof.js';
import { AdapterRuntimeProber, type RuntimeProber } from '../../../src/verify/runtime-prober.js';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(() => r(undefined)));
  return port;
}

test('late-listening runtime that hangs: RuntimeTimeout on health, duration covers the whole deadline', async () => {
  const port = await freePort();
  const hanging = http.createServer(() => undefined);
  const listening = new Promise<void>((resolve) =>
    setTimeout(() => hanging.listen(port, '127.0.0.1', () => resolve()), 600),
  );
  const exec = new Facts('runtime-exec');
  const prober = new AdapterRuntimeProber({});
  const target = {
    kind: 'python-runtime' as const,
    transport: 'direct' as const,
    namespace: 'sbx',
    sandbox: 's1',
    pod: 's1',
    podIP: '127.0.0.1',
    restPort: port,
  };
  const ok = await proveExecution(
    prober,
    target,
    { probeTimeoutMs: 1500, runId: 'r1', samples: 3 },
    exec,
    'pod s1 Ready',
  );
  await prober.close();
  await listening;
  hanging.closeAllConnections();
  await new Promise((r) => hanging.close(() => r(undefined)));
  expect(ok).toBe(false);
  const failing = exec.list.filter((e) => e.verdict !== 'proven');
  expect(failing.map((e) => [e.step, e.verdict, e.reason, e.field])).toEqual([
    ['verified', 'unknown', 'RuntimeTimeout', 'health'],
  ]);
  expect(failing[0]!.durationMs).toBeGreaterThanOrEqual(1500);
});

test('a runtime refusing every connection over a slow transport stays RuntimeSilent: no retry is begun that the deadline cannot finish', async () => {
  // FAKE, and why: a port-forward under load takes hundreds of milliseconds before the pod refuses; the real transport
  // shows that delay only at random. Here each refusal takes 400 ms, and an attempt given less than that times out.
  const calls: number[] = [];
  const slowRefusal: RuntimeProber = {
    health: async (_t, deadlineMs) => {
      calls.push(deadlineMs);
      const wait = Math.min(400, deadlineMs);
      await new Promise((r) => setTimeout(r, wait));
      return wait < 400
        ? { kind: 'timeout', durationMs: wait, detail: 'port-forward: no answer' }
        : { kind: 'silent', durationMs: wait, detail: 'port-forward: connection refused in the pod' };
    },
    execute: async () => {
      throw new Error('not reached');
    },
    fileRoundTrip: async () => {
      throw new Error('not reached');
    },
    readFile: async () => {
      throw new Error('not reached');
    },
    close: async () => undefined,
  };
  const exec = new Facts('runtime-exec');
  const target = {
    kind: 'sandboxd' as const,
    transport: 'port-forward' as const,
    namespace: 'sbx',
    sandbox: 's1',
    pod: 's1',
    restPort: 8080,
  };
  const ok = await proveExecution(
    slowRefusal,
    target,
    { probeTimeoutMs: 1500, runId: 'r2', samples: 3 },
    exec,
    'Ready',
  );
  expect(ok).toBe(false);
  const failing = exec.list.filter((e) => e.verdict !== 'proven');
  expect(failing.map((e) => [e.verdict, e.reason, e.field])).toEqual([['unknown', 'RuntimeSilent', 'health']]);
  // every attempt had at least the 400 ms a refusal takes
  expect(Math.min(...calls)).toBeGreaterThanOrEqual(400);
});
