/**
 * Case runtime-timeout-process-fate on the python runtime (`main.py@v0.5.6` contract, local stand-in
 * fixtures/python-runtime-fake.mjs): the runtime's own exec limit (`SANDBOX_EXEC_TIMEOUT_SECONDS`, answered as HTTP 200
 * exit 1 "timed out after N seconds") is `timed-out` by the runtime, never exit 1; the caller's deadline is
 * `timed-out` by the caller; a connection nothing answers is `transport-closed`. No exit code on any of them.
 */
import net from 'node:net';
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import type { ExecutionStatus, SessionRef } from '../../src/adapter/types.js';
import { startFakePythonRuntime, type FakeRuntime } from '../unit/adapter/python-runtime-fake.js';

let rt: FakeRuntime;
beforeAll(async () => {
  rt = await startFakePythonRuntime('fixed', { SANDBOX_EXEC_TIMEOUT_SECONDS: '1' });
});
afterAll(() => rt?.stop());

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

test("the runtime's exec limit: timed-out by the runtime, with its limit, no exit code", async () => {
  const s = await run(rt.port, ['sleep', '5'], 8_000);
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
});

test("the caller's deadline: timed-out by the caller, no exit code, and the command may still run (no way to stop it)", async () => {
  const s = await run(rt.port, ['sleep', '5'], 300);
  expect(s.outcome).toMatchObject({
    kind: 'timed-out',
    by: 'caller',
    reason: 'CallerDeadlineExceeded',
    layer: 'caller',
    deadlineMs: 300,
    commandMayStillRun: true,
  });
  expect(s.state).toBe('timed-out');
  expect(s.exitCode).toBeUndefined();
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
