/**
 * Case runtime-timeout-process-fate on the REAL upstream python runtime (`main.py` of v0.5.6 and of v1.0.3, run as it
 * is: test/unit/adapter/python-runtime-process.ts), over the direct transport. The runtime's own exec limit
 * (`SANDBOX_EXEC_TIMEOUT_SECONDS`, answered as HTTP 200 exit 1 "timed out after N seconds") is `timed-out` by the
 * runtime, never exit 1, and it kills the command's whole process group: a background child's later write never
 * happens. The caller's deadline is `timed-out` by the caller, and the command runs on (the runtime has no way to stop
 * it, and keeps it going up to its own limit): `commandMayStillRun: true`, and its late write does appear in the
 * runtime's /app. A connection nothing answers is `transport-closed`. No exit code on any of them.
 */
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import type { ExecutionStatus, SessionRef } from '../../src/adapter/types.js';
import { PYTHON_RUNTIME_TAGS } from '../../test-cluster/python-runtime.js';
import { startPythonRuntime, type PythonRuntimeProcess } from '../unit/adapter/python-runtime-process.js';

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
let n = 0;

async function run(port: number, argv: string[], timeoutMs: number): Promise<ExecutionStatus> {
  const ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified' });
  const binding: RuntimeBinding = {
    template: 'template/sbx/py',
    runtime: { kind: 'python-runtime', port },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
  const id = `t-${(n += 1)}`;
  expect((await ex.start(id, { session, argv, timeoutMs }, binding)).kind).toBe('ok');
  for (let i = 0; i < 400; i++) {
    const q = ex.query(id);
    if (q.kind === 'ok' && q.value.state !== 'running') return q.value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`execution ${id} still running`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.each(PYTHON_RUNTIME_TAGS)('python runtime %s', (tag) => {
  /** Exec limit 1 s. */
  let limited: PythonRuntimeProcess;
  /** The image's default exec limit (300 s). */
  let unlimited: PythonRuntimeProcess;
  beforeAll(async () => {
    [limited, unlimited] = await Promise.all([
      startPythonRuntime(tag, { SANDBOX_EXEC_TIMEOUT_SECONDS: '1' }),
      startPythonRuntime(tag),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([limited?.stop(), unlimited?.stop()]);
  });

  test("the runtime's exec limit: timed-out by the runtime, with its limit, no exit code; the command was stopped", async () => {
    // A background child in the command's process group writes MARK at 2 s; the command itself would end at 5 s.
    const s = await run(limited.port, ['sh', '-c', '(sleep 2; echo late > MARK) & sleep 5'], 8_000);
    expect(s.outcome).toMatchObject({
      kind: 'timed-out',
      by: 'runtime',
      reason: 'RuntimeExecTimeout',
      layer: 'runtime',
      deadlineMs: 1000,
      commandMayStillRun: false,
    });
    expect(s.state).toBe('timed-out');
    expect(s.exitCode).toBeUndefined();
    // The runtime killed the whole process group: past the time the background child would have written MARK, none.
    await sleep(2_000);
    expect(existsSync(path.join(limited.appDir, 'MARK'))).toBe(false);
  });

  test("the caller's deadline: timed-out by the caller, no exit code, and the command does run on to its end", async () => {
    const startedAt = Date.now();
    const s = await run(unlimited.port, ['sh', '-c', 'sleep 4; echo late > MARK'], 1_000);
    expect(s.outcome).toMatchObject({
      kind: 'timed-out',
      by: 'caller',
      reason: 'CallerDeadlineExceeded',
      layer: 'caller',
      deadlineMs: 1000,
      commandMayStillRun: true,
    });
    expect(s.state).toBe('timed-out');
    expect(s.exitCode).toBeUndefined();
    const mark = path.join(unlimited.appDir, 'MARK');
    expect(existsSync(mark)).toBe(false);
    // What "may still run" means on this runtime: nothing stops the command, which writes MARK at 4 s.
    while (!existsSync(mark) && Date.now() - startedAt < 15_000) await sleep(100);
    expect(existsSync(mark)).toBe(true);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(4_000);
    expect(readFileSync(mark, 'utf8')).toBe('late\n');
  });
});

test('nothing listens: transport-closed with the network error code', async () => {
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  const s = await run(port, ['true'], 2_000);
  expect(s.outcome).toMatchObject({
    kind: 'transport-closed',
    reason: 'TransportClosed',
    layer: 'transport',
    errno: 'ECONNREFUSED',
  });
  expect(s.state).toBe('failed');
});
