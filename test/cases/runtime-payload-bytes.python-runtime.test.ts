/**
 * Case runtime-payload-bytes on the REAL upstream python runtime (`main.py` of v0.5.6 and of v1.0.3, run as it is:
 * test/unit/adapter/python-runtime-process.ts): the runtime's decode failure and its failure to start a command are
 * `runtime-error`, never the command's exit 1; an answer over the adapter's response cap is `too-large`, never a
 * timeout; a plain answer carries bytes and honest text. The runtime answers text it decoded with universal newlines
 * (`subprocess.Popen(text=True)`), so `\r\n` and `\r` reach the adapter as `\n`: the bytes are the runtime's answer,
 * not the command's. Over the direct and the router transport (the runtime ignores the router's addressing headers).
 */
import { Executions, type RuntimeBinding } from '../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../src/adapter/transports/router.js';
import type { Transport } from '../../src/adapter/transports/types.js';
import type { ExecutionStatus, SessionRef } from '../../src/adapter/types.js';
import { AdapterRuntimeProber } from '../../src/verify/runtime-prober.js';
import { PYTHON_RUNTIME_TAGS } from '../../test-cluster/python-runtime.js';
import { startPythonRuntime, type PythonRuntimeProcess } from '../unit/adapter/python-runtime-process.js';

const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
let n = 0;

describe.each(PYTHON_RUNTIME_TAGS)('python runtime %s', (tag) => {
  let rt: PythonRuntimeProcess;
  beforeAll(async () => {
    rt = await startPythonRuntime(tag);
  }, 60_000);
  afterAll(async () => rt?.stop());

  const binding = (): RuntimeBinding => ({
    template: 'template/sbx/py',
    runtime: { kind: 'python-runtime', port: rt.port },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  });

  async function run(transport: Transport, argv: string[], maxResponseBytes?: number): Promise<ExecutionStatus> {
    const ex = new Executions({
      transport,
      supportStates: () => 'verified',
      ...(maxResponseBytes ? { limits: { maxResponseBytes } } : {}),
    });
    const id = `e-${(n += 1)}`;
    expect((await ex.start(id, { session, argv, timeoutMs: 10_000 }, binding())).kind).toBe('ok');
    for (let i = 0; i < 400; i++) {
      const q = ex.query(id);
      if (q.kind === 'ok' && q.value.state !== 'running') return q.value;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`execution ${id} still running`);
  }

  const transports: Array<[string, () => Transport]> = [
    ['direct', () => new DirectTransport()],
    ['router', () => new RouterTransport(`http://127.0.0.1:${rt.port}`)],
  ];

  describe.each(transports)('via %s', (_name, transport) => {
    test("printf 'ok\\377': the runtime's decode failure is a runtime-error, not the command's exit 1", async () => {
      const s = await run(transport(), ['printf', 'ok\\377']);
      expect(s.outcome).toMatchObject({ kind: 'runtime-error', reason: 'RuntimeDecodeFailed', layer: 'runtime' });
      expect(s.exitCode).toBeUndefined();
      expect(s.state).toBe('failed');
      expect(s.output?.stdout).toMatchObject({ bytes: 0, truncated: false, lossy: false });
    });

    test("an executable that does not exist: the runtime's own failure, not exit 1", async () => {
      const s = await run(transport(), ['no-such-executable-agentplane']);
      expect(s.outcome).toMatchObject({ kind: 'runtime-error', reason: 'RuntimeExecFailed', layer: 'runtime' });
      expect(s.exitCode).toBeUndefined();
    });

    test('an answer over the response cap is too-large, never a timeout', async () => {
      const s = await run(transport(), ['head', '-c', '200000', '/dev/zero'], 64 * 1024);
      expect(s.outcome).toMatchObject({
        kind: 'too-large',
        reason: 'AnswerTooLarge',
        layer: 'adapter',
        limitBytes: 65536,
      });
      expect(s.state).toBe('failed');
    });

    test('a plain answer: completed with exit code, bytes as base64, text not lossy; a non-zero exit is the command', async () => {
      const s = await run(transport(), ['printf', 'h\\303\\251']);
      expect(s.outcome).toMatchObject({
        kind: 'completed',
        exitCode: 0,
        success: true,
        reason: 'CommandSucceeded',
        layer: 'command',
      });
      expect(s.state).toBe('succeeded');
      expect(s.output?.stdout).toMatchObject({
        base64: Buffer.from('hé').toString('base64'),
        bytes: 3,
        totalBytes: 3,
        truncated: false,
        text: 'hé',
        encoding: 'utf-8',
        lossy: false,
      });
      const failed = await run(transport(), ['sh', '-c', 'exit 3']);
      expect(failed.outcome).toMatchObject({ kind: 'completed', exitCode: 3, success: false, reason: 'CommandFailed' });
      expect(failed).toMatchObject({ state: 'failed', exitCode: 3 });
      // The runtime answers a signal's death as Python's negative returncode: 128 + the signal, as the shell says.
      const killed = await run(transport(), ['sh', '-c', 'kill -9 $$']);
      expect(killed.outcome).toMatchObject({
        kind: 'completed',
        exitCode: 137,
        signal: 9,
        success: false,
        reason: 'CommandKilledBySignal',
      });
    });

    test("carriage returns: the runtime's universal newlines turn \\r\\n and \\r into \\n before the adapter sees bytes", async () => {
      const s = await run(transport(), ['printf', 'a\\r\\nb\\rc']);
      expect(s.outcome).toMatchObject({ kind: 'completed', exitCode: 0, reason: 'CommandSucceeded' });
      // 6 bytes written, 5 answered: the bytes are the runtime's answer, not the command's.
      expect(s.output?.stdout).toMatchObject({
        base64: Buffer.from('a\nb\nc').toString('base64'),
        bytes: 5,
        totalBytes: 5,
        truncated: false,
        lossy: false,
      });
    });
  });

  test("the verifier's prober records the runtime's own failure by its execution reason, never as exit 1", async () => {
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
    try {
      expect(await prober.execute(target, ['printf', 'ok\\377'], 5000)).toMatchObject({
        kind: 'error',
        outcome: 'RuntimeDecodeFailed',
      });
      expect(await prober.execute(target, ['echo', 'x'], 5000)).toMatchObject({
        kind: 'answered',
        value: { exitCode: 0, stdout: 'x\n' },
      });
    } finally {
      await prober.close();
    }
  });
});
