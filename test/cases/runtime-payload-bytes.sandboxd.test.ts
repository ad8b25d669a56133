/**
 * Case runtime-payload-bytes on the REAL sandboxd v0.5.6 binary (test/unit/adapter/sandboxd-process.ts), over the
 * direct transport: non-UTF-8 output is kept as bytes and its text flagged lossy; output past the per-stream cap is
 * `truncated` with the total byte count, not a silent success of the first bytes.
 */
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import type { ExecutionStatus, SessionRef } from '../../src/adapter/types.js';
import { startSandboxd, type SandboxdProcess } from '../unit/adapter/sandboxd-process.js';

let sd: SandboxdProcess;
beforeAll(async () => {
  sd = await startSandboxd();
}, 20_000);
afterAll(async () => sd?.stop());

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
let n = 0;

async function run(argv: string[], maxResponseBytes?: number): Promise<ExecutionStatus> {
  const ex = new Executions({
    transport: new DirectTransport(),
    supportStates: () => 'verified',
    ...(maxResponseBytes ? { limits: { maxResponseBytes } } : {}),
  });
  const binding: RuntimeBinding = {
    template: 'template/sbx/sd',
    runtime: { kind: 'sandboxd', restPort: sd.restPort, grpcPort: sd.grpcPort },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
  const id = `b-${(n += 1)}`;
  expect((await ex.start(id, { session, argv, timeoutMs: 10_000 }, binding)).kind).toBe('ok');
  for (let i = 0; i < 400; i++) {
    const q = ex.query(id);
    if (q.kind === 'ok' && q.value.state !== 'running') return q.value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`execution ${id} still running`);
}

test("printf 'ok\\377': completed, the byte kept, the text flagged lossy", async () => {
  const s = await run(['sh', '-c', "printf 'ok\\377'"]);
  expect(s.outcome).toMatchObject({ kind: 'completed', exitCode: 0, success: true, reason: 'CommandSucceeded' });
  expect(s.output?.stdout).toMatchObject({
    base64: Buffer.from([0x6f, 0x6b, 0xff]).toString('base64'),
    bytes: 3,
    totalBytes: 3,
    truncated: false,
    encoding: 'utf-8',
    lossy: true,
  });
});

test('output past the per-stream cap: truncated, with the total byte count', async () => {
  const s = await run(['sh', '-c', "head -c 300000 /dev/zero | tr '\\0' a; echo err >&2"], 100_000);
  expect(s.outcome).toMatchObject({ kind: 'completed', exitCode: 0 });
  expect(s.output?.stdout).toMatchObject({ bytes: 100_000, totalBytes: 300_000, truncated: true, lossy: false });
  expect(s.output?.stderr).toMatchObject({ bytes: 4, totalBytes: 4, truncated: false, text: 'err\n' });
});
