/**
 * Case client-node-exec-settlement. AgentPlane runs no `pods/exec`: commands and probes go through the runtime's own
 * API (sandboxd gRPC `Start`, the python runtime's `POST /execute`), so the settlement rules of the case apply to those
 * calls. Each execution settles exactly once — on the exit status, on a connection that closes without one
 * (`ExecTransportClosed`, exit code unknown), on an error, or on its deadline — and the verifier's evidence records
 * which. At the deadline the sandboxd process group is stopped and a follow-up finds no probe process; a stdin-fed
 * command gets its bytes and then end-of-file (sandboxd `WriteStdin` eof, a half-close: output still flows), and a
 * command that reads stdin without being given any sees end-of-file at once instead of waiting for its deadline.
 *
 * On the REAL runtimes: sandboxd v0.5.6 and v1.0.3 (test/unit/adapter/sandboxd-process.ts) and the upstream python
 * runtime v1.0.3 (test/unit/adapter/python-runtime-process.ts). The dropped connection is produced by killing the real
 * runtime server mid-run (SIGKILL), no fake; the command it leaves behind is ours and is killed by its marker.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import type { ExecutionStatus, SessionRef } from '../../src/adapter/types.js';
import { AdapterRuntimeProber, type RuntimeTarget } from '../../src/verify/runtime-prober.js';
import { startPythonRuntime } from '../unit/adapter/python-runtime-process.js';
import { startSandboxd, type SandboxdProcess, type SandboxdTag } from '../unit/adapter/sandboxd-process.js';

const session: SessionRef = { namespace: 'sbx', name: 's1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
let n = 0;

/** A `sleep` duration no other process on this machine uses: its marker in /proc. */
function marker(): string {
  return `600.${process.pid}${(n += 1)}`;
}

/** Pids of live processes whose argv contains `mark`. */
function withMarker(mark: string): number[] {
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
      if (argv.includes(mark)) pids.push(Number(e));
    } catch {
      // gone
    }
  }
  return pids;
}

function killMarked(mark: string): void {
  for (const pid of withMarker(mark)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts an execution and waits for its one ending; `settledAfterMs` is when the registry first had it. */
async function settle(
  ex: Executions,
  binding: RuntimeBinding,
  argv: string[],
  opts: { timeoutMs?: number; stdin?: Buffer; during?: () => Promise<void> } = {},
): Promise<{ status: ExecutionStatus; settledAfterMs: number; id: string }> {
  const id = `x-${(n += 1)}`;
  const t0 = Date.now();
  const started = await ex.start(
    id,
    { session, argv, timeoutMs: opts.timeoutMs ?? 10_000, ...(opts.stdin ? { stdin: opts.stdin } : {}) },
    binding,
  );
  expect(started.kind).toBe('ok');
  if (opts.during) await opts.during();
  for (let i = 0; i < 2400; i++) {
    const q = ex.query(id);
    if (q.kind === 'ok' && q.value.state !== 'running') return { status: q.value, settledAfterMs: Date.now() - t0, id };
    await sleep(25);
  }
  throw new Error(`execution ${id} never settled`);
}

/** Waits until a process carrying `mark` runs (the command has started). */
async function running(mark: string): Promise<void> {
  for (let i = 0; i < 200 && withMarker(mark).length === 0; i++) await sleep(25);
  expect(withMarker(mark).length).toBeGreaterThan(0);
}

const SANDBOXD_TAGS: readonly SandboxdTag[] = ['v0.5.6', 'v1.0.3'];

describe.each(SANDBOXD_TAGS)('sandboxd %s', (tag) => {
  let sd: SandboxdProcess;
  let ex: Executions;
  let binding: RuntimeBinding;
  let target: RuntimeTarget;
  beforeAll(async () => {
    sd = await startSandboxd(tag);
    ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified' });
    binding = {
      template: 'template/sbx/sd',
      runtime: { kind: 'sandboxd', restPort: sd.restPort, grpcPort: sd.grpcPort },
      target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
    };
    target = {
      kind: 'sandboxd',
      transport: 'direct',
      namespace: 'sbx',
      sandbox: 's1',
      pod: 's1',
      podIP: '127.0.0.1',
      restPort: sd.restPort,
      grpcPort: sd.grpcPort,
    };
  }, 20_000);
  afterAll(async () => sd?.stop());

  test('(a) uname -r, cat /proc/version: settled on the exit status, once, with the exit code', async () => {
    const uname = await settle(ex, binding, ['uname', '-r']);
    expect(uname.status.outcome).toMatchObject({ kind: 'completed', exitCode: 0, reason: 'CommandSucceeded' });
    expect(uname.status.stdout).toBe(`${os.release()}\n`);
    const version = await settle(ex, binding, ['cat', '/proc/version']);
    expect(version.status.stdout).toBe(readFileSync('/proc/version', 'utf8'));
    const failed = await settle(ex, binding, ['sh', '-c', 'exit 3']);
    expect(failed.status.outcome).toMatchObject({ kind: 'completed', exitCode: 3, reason: 'CommandFailed' });
    // Settled once: later queries answer the same ending.
    await sleep(200);
    expect(ex.query(failed.id)).toEqual({ kind: 'ok', value: failed.status });
  });

  test('(b) sleep 600 past a 2 s deadline: timed-out by the caller, the process group stopped, no process left', async () => {
    const mark = marker();
    const r = await settle(ex, binding, ['sh', '-c', `sleep ${mark} & sleep ${mark}; echo late`], { timeoutMs: 2000 });
    expect(r.status.outcome).toMatchObject({
      kind: 'timed-out',
      by: 'caller',
      reason: 'CallerDeadlineExceeded',
      commandMayStillRun: false,
    });
    expect(r.status.exitCode).toBeUndefined();
    // Deadline + SIGTERM answered at once (the 2 s grace is an upper bound) + settling.
    expect(r.settledAfterMs).toBeLessThan(2000 + 2000 + 1500);
    await sleep(300);
    expect(withMarker(mark)).toEqual([]);
  });

  test("(b) the verifier's probe: its evidence says the caller's deadline ended it; no probe process left", async () => {
    const prober = new AdapterRuntimeProber({});
    const mark = marker();
    try {
      const r = await prober.execute(target, ['sh', '-c', `sleep ${mark} & sleep ${mark}`], 1500);
      expect(r).toMatchObject({ kind: 'timeout', outcome: 'CallerDeadlineExceeded' });
      await sleep(300);
      expect(withMarker(mark)).toEqual([]);
      expect(await prober.execute(target, ['uname', '-r'], 5000)).toMatchObject({
        kind: 'answered',
        value: { exitCode: 0, stdout: `${os.release()}\n` },
      });
    } finally {
      await prober.close();
    }
  });

  test('(d) 1 MiB on stdin, then end-of-file: the command reads all of it and its later output arrives', async () => {
    const r = await settle(ex, binding, ['sh', '-c', 'cat > stdin.bin; wc -c < stdin.bin'], {
      stdin: Buffer.alloc(1 << 20, 0xff),
    });
    expect(r.status.outcome).toMatchObject({ kind: 'completed', exitCode: 0 });
    expect(r.status.stdout.trim()).toBe('1048576');
  });

  test('(d) a command that reads stdin and is given none sees end-of-file at once, not its deadline', async () => {
    const r = await settle(ex, binding, ['wc', '-c'], { timeoutMs: 8000 });
    expect(r.status.outcome).toMatchObject({ kind: 'completed', exitCode: 0 });
    expect(r.status.stdout.trim()).toBe('0');
    expect(r.settledAfterMs).toBeLessThan(4000);
  });
});

describe.each(SANDBOXD_TAGS)('sandboxd %s dropped mid-run', (tag) => {
  test('(c) the runtime dies while the command runs: ExecTransportClosed at once, no exit code, evidence says so', async () => {
    const sd = await startSandboxd(tag);
    const mark = marker();
    const probeMark = marker();
    try {
      const ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified' });
      const binding: RuntimeBinding = {
        template: 'template/sbx/sd',
        runtime: { kind: 'sandboxd', restPort: sd.restPort, grpcPort: sd.grpcPort },
        target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
      };
      const prober = new AdapterRuntimeProber({});
      const probe = prober.execute(
        {
          kind: 'sandboxd',
          transport: 'direct',
          namespace: 'sbx',
          sandbox: 's1',
          pod: 's1',
          podIP: '127.0.0.1',
          restPort: sd.restPort,
          grpcPort: sd.grpcPort,
        },
        ['sleep', probeMark],
        20_000,
      );
      const r = await settle(ex, binding, ['sleep', mark], {
        timeoutMs: 20_000,
        during: async () => {
          await running(mark);
          await running(probeMark);
          process.kill(sd.pid, 'SIGKILL');
        },
      });
      expect(r.status.outcome).toMatchObject({ kind: 'transport-closed', reason: 'ExecTransportClosed' });
      expect(r.status.exitCode).toBeUndefined();
      expect(r.settledAfterMs).toBeLessThan(5000);
      expect(await probe).toMatchObject({ kind: 'silent', outcome: 'ExecTransportClosed' });
      await prober.close();
    } finally {
      killMarked(mark);
      killMarked(probeMark);
      await sd.stop();
    }
  }, 30_000);
});

describe('python runtime v1.0.3', () => {
  test('(a) settles on the answer; (d) stdin refused, nothing sent; (c) the runtime dies mid-run: ExecTransportClosed', async () => {
    const rt = await startPythonRuntime('v1.0.3');
    const mark = marker();
    try {
      const ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified' });
      const binding: RuntimeBinding = {
        template: 'template/sbx/py',
        runtime: { kind: 'python-runtime', port: rt.port },
        target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
      };
      const uname = await settle(ex, binding, ['uname', '-r']);
      expect(uname.status.outcome).toMatchObject({ kind: 'completed', exitCode: 0 });
      expect(uname.status.stdout).toBe(`${os.release()}\n`);
      expect(
        await ex.start('py-stdin', { session, argv: ['wc', '-c'], timeoutMs: 5000, stdin: Buffer.from('x') }, binding),
      ).toMatchObject({ kind: 'rejected', reason: 'StdinUnsupported' });
      const r = await settle(ex, binding, ['sleep', mark], {
        timeoutMs: 20_000,
        during: async () => {
          await running(mark);
          // Stops the runtime server and every process it started (the command included).
          await rt.stop();
        },
      });
      expect(r.status.outcome).toMatchObject({ kind: 'transport-closed', reason: 'ExecTransportClosed' });
      expect(r.status.exitCode).toBeUndefined();
      expect(r.settledAfterMs).toBeLessThan(5000);
    } finally {
      killMarked(mark);
      await rt.stop();
    }
  }, 60_000);
});
