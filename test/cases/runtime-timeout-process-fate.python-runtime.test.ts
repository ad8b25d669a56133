/**
 * Case runtime-timeout-process-fate on the REAL upstream python runtime (`main.py` of v0.5.6 and of v1.0.3, run as it
 * is: test/unit/adapter/python-runtime-process.ts), over the direct transport and through the REAL Go sandbox-router of
 * the same release (from the test-cluster cache, on loopback, `--allow-loopback-pod-ip`, no cache, addressed by
 * `X-Sandbox-Pod-IP`). The runtime's own exec
 * limit (`SANDBOX_EXEC_TIMEOUT_SECONDS`, answered as HTTP 200 exit 1 "timed out after N seconds") is `timed-out` by the
 * runtime, never exit 1, and it kills the command's whole process group. The caller's deadline is enforced inside the
 * sandbox: the adapter runs the command under GNU `timeout`, which stops the command's whole process group before the
 * deadline, so the answer is `timed-out` by the caller with `commandMayStillRun: false`, no process of the command is
 * left and its late write never happens. A connection nothing answers is `transport-closed`. No exit code on any of
 * them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../src/adapter/transports/router.js';
import type { Transport } from '../../src/adapter/transports/types.js';
import type { ExecutionStatus, SessionRef } from '../../src/adapter/types.js';
import { PYTHON_RUNTIME_TAGS } from '../../test-cluster/python-runtime.js';
import { startPythonRuntime, type PythonRuntimeProcess } from '../unit/adapter/python-runtime-process.js';
import { cachedReleaseBinary } from '../unit/adapter/sandboxd-process.js';

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
let n = 0;

async function run(
  port: number,
  argv: string[],
  timeoutMs: number,
  transport: Transport = new DirectTransport(),
): Promise<ExecutionStatus> {
  const ex = new Executions({ transport, supportStates: () => 'verified' });
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

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
}

/** The release's Go sandbox-router on 127.0.0.1, answering once its /healthz does; its proxy port. */
async function startRouter(tag: 'v0.5.6' | 'v1.0.3'): Promise<{ port: number; process: ChildProcess }> {
  const bin = cachedReleaseBinary(tag, 'sandbox-router');
  if (!bin)
    throw new Error(`no sandbox-router ${tag}: run \`bash test-cluster/scripts/build.sh agent-sandbox-${tag}\``);
  const [port, health, metrics] = [await freePort(), await freePort(), await freePort()];
  const args = [
    `--http-bind-address=127.0.0.1:${port}`,
    `--health-probe-bind-address=127.0.0.1:${health}`,
    `--metrics-bind-address=127.0.0.1:${metrics}`,
    '--allow-loopback-pod-ip',
    '--cache-enabled=false',
    '--access-log=false',
  ];
  const child = spawn(bin, args, { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${health}/healthz`, { signal: AbortSignal.timeout(500) })).ok)
        return { port, process: child };
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  child.kill();
  throw new Error(`sandbox-router ${tag} did not answer /healthz`);
}

describe.each(PYTHON_RUNTIME_TAGS)('python runtime %s', (tag) => {
  /** Exec limit 1 s. */
  let limited: PythonRuntimeProcess;
  /** The image's default exec limit (300 s). */
  let unlimited: PythonRuntimeProcess;
  let router: { port: number; process: ChildProcess };
  beforeAll(async () => {
    [limited, unlimited, router] = await Promise.all([
      startPythonRuntime(tag, { SANDBOX_EXEC_TIMEOUT_SECONDS: '1' }),
      startPythonRuntime(tag),
      startRouter(tag),
    ]);
  }, 60_000);
  afterAll(async () => {
    router?.process.kill();
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
    expect(limited.commandProcesses()).toEqual([]);
  });

  const transports: Array<[string, () => Transport]> = [
    ['direct', () => new DirectTransport()],
    ['router', () => new RouterTransport(`http://127.0.0.1:${router.port}`, { podIPHeader: true })],
  ];

  test.each(transports)(
    "the caller's deadline via %s: timed-out by the caller, no exit code, no process left, the late write never happens",
    async (_name, transport) => {
      const tag = `${_name}-${(n += 1)}`;
      const mark = path.join(unlimited.appDir, `MARK-${tag}`);
      const script = `sleep 8 & sleep 8; echo late > MARK-${tag}`;
      expect(unlimited.commandProcesses()).toEqual([]);
      const startedAt = Date.now();
      const s = await run(unlimited.port, ['sh', '-c', script], 2_000, transport());
      const answeredMs = Date.now() - startedAt;
      expect(s.outcome).toMatchObject({
        kind: 'timed-out',
        by: 'caller',
        reason: 'CallerDeadlineExceeded',
        layer: 'caller',
        deadlineMs: 2000,
        commandMayStillRun: false,
      });
      expect(s.state).toBe('timed-out');
      expect(s.exitCode).toBeUndefined();
      // The runtime answered after its SIGTERM at 1.6 s (2 s less 0.2 s grace, 0.2 s margin) and within the deadline
      // (plus the 25 ms poll): it stopped the command itself, the caller did not just give up.
      expect(answeredMs).toBeGreaterThanOrEqual(1_600);
      expect(answeredMs).toBeLessThan(2_100);
      expect(unlimited.commandProcesses()).toEqual([]);
      // Past the command's natural end (8 s), bounded: no process came back and MARK was never written.
      while (Date.now() - startedAt < 10_000) {
        expect(existsSync(mark)).toBe(false);
        await sleep(250);
      }
      expect(unlimited.commandProcesses()).toEqual([]);
      expect(existsSync(mark)).toBe(false);
    },
    30_000,
  );

  test('a command that ignores SIGTERM: SIGKILL after the grace, still timed-out by the caller, nothing left', async () => {
    // The ignored SIGTERM is inherited by both sleeps; only the SIGKILL at 1.8 s stops the group.
    const startedAt = Date.now();
    const s = await run(unlimited.port, ['sh', '-c', "trap '' TERM; sleep 8 & sleep 8"], 2_000);
    const answeredMs = Date.now() - startedAt;
    expect(s.outcome).toMatchObject({
      kind: 'timed-out',
      by: 'caller',
      reason: 'CallerDeadlineExceeded',
      commandMayStillRun: false,
    });
    expect(s.exitCode).toBeUndefined();
    expect(answeredMs).toBeGreaterThanOrEqual(1_800);
    expect(answeredMs).toBeLessThan(2_100);
    expect(unlimited.commandProcesses()).toEqual([]);
  });

  test('a command that ends before the deadline keeps its own exit status and signal under the wrapper', async () => {
    const done = await run(unlimited.port, ['sh', '-c', 'echo out; exit 124'], 5_000);
    expect(done.outcome).toMatchObject({ kind: 'completed', exitCode: 124, reason: 'CommandFailed' });
    const killed = await run(unlimited.port, ['sh', '-c', 'kill -TERM $$'], 5_000);
    expect(killed.outcome).toMatchObject({ kind: 'completed', exitCode: 143, signal: 15 });
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
