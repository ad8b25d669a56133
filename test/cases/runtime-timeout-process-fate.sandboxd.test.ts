/**
 * Case runtime-timeout-process-fate on the REAL sandboxd v0.5.6 binary (test/unit/adapter/sandboxd-process.ts), over
 * the direct transport: a caller's deadline on `sh -c 'sleep 120 & sleep 120; echo late > MARK'` is `timed-out` by
 * the caller with no exit code, and leaves no process of the command behind (sandboxd alone kills only the group
 * leader on cancel; the adapter signals the group), so MARK can never be written. The command's processes are found
 * by a nonce in their environment (/proc/<pid>/environ, inherited by every descendant, reparented or not).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { SandboxdClient } from '../../src/adapter/runtime/sandboxd.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import type { ExecutionStatus, SessionRef } from '../../src/adapter/types.js';
import { startSandboxd, type SandboxdProcess } from '../unit/adapter/sandboxd-process.js';

let sd: SandboxdProcess;
beforeAll(async () => {
  sd = await startSandboxd();
}, 20_000);
afterAll(async () => sd?.stop());

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };

/** Pids of live processes whose environment carries `nonce`. */
function processesWith(nonce: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(nonce)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

async function settle(ex: Executions, id: string): Promise<ExecutionStatus> {
  for (let i = 0; i < 400; i++) {
    const q = ex.query(id);
    if (q.kind === 'ok' && q.value.state !== 'running') return q.value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`execution ${id} still running after 20 s`);
}

test("a caller's 3 s deadline stops the whole process group: no descendant left, no MARK", async () => {
  const nonce = `agentplane-fate-${randomUUID()}`;
  const ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified' });
  const binding: RuntimeBinding = {
    template: 'template/sbx/sd',
    runtime: { kind: 'sandboxd', restPort: sd.restPort, grpcPort: sd.grpcPort },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
  const argv = ['sh', '-c', 'sleep 120 & sleep 120; echo late > MARK'];
  const started = await ex.start('fate', { session, argv, env: { AGENTPLANE_FATE: nonce }, timeoutMs: 3000 }, binding);
  expect(started.kind).toBe('ok');
  await new Promise((r) => setTimeout(r, 1000));
  expect(processesWith(nonce).length).toBeGreaterThanOrEqual(3); // sh and both sleeps run: the probe sees them

  const s = await settle(ex, 'fate');
  expect(s.outcome).toMatchObject({
    kind: 'timed-out',
    by: 'caller',
    reason: 'CallerDeadlineExceeded',
    layer: 'caller',
    deadlineMs: 3000,
    commandMayStillRun: false,
  });
  expect(s.state).toBe('timed-out');
  expect(s.exitCode).toBeUndefined();
  await new Promise((r) => setTimeout(r, 500));
  expect(processesWith(nonce)).toEqual([]);
  expect(existsSync(path.join(sd.rootDir, 'MARK'))).toBe(false);
}, 30_000);

test('the client: the deadline result waits for the signal answer, and the stop sequence ends (cancel resolves)', async () => {
  const nonce = `agentplane-fate-${randomUUID()}`;
  const client = new SandboxdClient(
    new DirectTransport(),
    { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
    { ports: { rest: sd.restPort, grpc: sd.grpcPort }, stopGraceMs: 5000 },
  );
  try {
    const p = await client.start(['sh', '-c', 'sleep 120 & sleep 120'], {
      env: { AGENTPLANE_FATE: nonce },
      deadlineMs: 1000,
    });
    if (p.kind !== 'ok') throw new Error(p.kind);
    const r = await p.value.done;
    expect(r.kind === 'failed' && [r.error.category, r.error.decided]).toEqual([
      'timeout',
      { reason: 'CallerDeadlineExceeded', layer: 'caller' },
    ]);
    await p.value.cancel(); // hangs if the grace wait is never woken after SIGTERM ended the stream
    expect(processesWith(nonce)).toEqual([]);

    const q = await client.start(['sh', '-c', 'sleep 120 & sleep 120'], {
      env: { AGENTPLANE_FATE: nonce },
      deadlineMs: 60_000,
    });
    if (q.kind !== 'ok') throw new Error(q.kind);
    await new Promise((res) => setTimeout(res, 500));
    await q.value.cancel();
    const c = await q.value.done;
    expect(c.kind === 'failed' && c.error.category).toBe('timeout');
    expect(processesWith(nonce)).toEqual([]);
  } finally {
    client.close();
  }
}, 30_000);

test("a command killed by a signal has no exit status: runtime-error, never 'exit -1'", async () => {
  const ex = new Executions({ transport: new DirectTransport(), supportStates: () => 'verified' });
  const binding: RuntimeBinding = {
    template: 'template/sbx/sd',
    runtime: { kind: 'sandboxd', restPort: sd.restPort, grpcPort: sd.grpcPort },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
  expect((await ex.start('killed', { session, argv: ['sh', '-c', 'kill -9 $$'], timeoutMs: 5000 }, binding)).kind).toBe(
    'ok',
  );
  const s = await settle(ex, 'killed');
  expect(s.outcome).toMatchObject({ kind: 'runtime-error', reason: 'RuntimeNoExitStatus', layer: 'runtime' });
  expect(s.exitCode).toBeUndefined();
  expect(s.state).toBe('failed');
});

test('the runtime shuts down mid-command: settles once, runtime-error, no exit code', async () => {
  const own = await startSandboxd();
  const client = new SandboxdClient(
    new DirectTransport(),
    { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
    { ports: { rest: own.restPort, grpc: own.grpcPort } },
  );
  try {
    const p = await client.start(['sleep', '30'], { deadlineMs: 20_000 });
    if (p.kind !== 'ok') throw new Error(p.kind);
    await new Promise((r) => setTimeout(r, 500));
    await own.stop();
    const r = await p.value.done;
    expect(r.kind === 'failed' && r.error.decided).toEqual({ reason: 'RuntimeNoExitStatus', layer: 'runtime' });
  } finally {
    client.close();
  }
}, 30_000);
