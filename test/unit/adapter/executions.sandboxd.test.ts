/**
 * startExecution/queryExecution gating and registry, running commands in the REAL sandboxd v0.5.6 binary on 127.0.0.1
 * over the direct transport.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Executions, type RuntimeBinding } from '../../../src/adapter/runtime/executions.js';
import { DirectTransport } from '../../../src/adapter/transports/direct.js';
import type { ExecutionRequest, ExecutionStatus, SessionRef, SupportState } from '../../../src/adapter/types.js';
import { startSandboxd, type SandboxdProcess } from './sandboxd-process.js';

let sd: SandboxdProcess;
let binding: RuntimeBinding;
const session: SessionRef = { namespace: 'sbx', name: 'c1', via: 'claim', operationId: 'op-1', uid: 'uid-1' };
const states = new Map<string, SupportState>();
const lookups: string[] = [];
const supportStates = (capability: string, template: string): SupportState | undefined => {
  lookups.push(`${capability} ${template}`);
  return states.get(template);
};

beforeAll(async () => {
  sd = await startSandboxd();
  binding = {
    template: 'template/sbx/py',
    runtime: { kind: 'sandboxd', restPort: sd.restPort, grpcPort: sd.grpcPort },
    target: { namespace: 'sbx', sandboxName: 's1', podIP: '127.0.0.1' },
  };
}, 20_000);
afterAll(async () => sd?.stop());
beforeEach(() => states.clear());

const req = (argv: string[], timeoutMs = 5000): ExecutionRequest => ({ session, argv, timeoutMs });

async function settle(ex: Executions, id: string): Promise<ExecutionStatus> {
  for (let i = 0; i < 200; i++) {
    const q = ex.query(id);
    if (q.kind === 'ok' && q.value.state !== 'running') return q.value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`execution ${id} still running after 10 s`);
}

test.each<[SupportState | undefined]>([[undefined], ['configured'], ['compatible'], ['failed']])(
  'runtime-exec %s for the template: unsupported, nothing runs',
  async (state) => {
    if (state) states.set('template/sbx/py', state);
    const ex = new Executions({ transport: new DirectTransport(), supportStates });
    const r = await ex.start('e-gate', req(['touch', 'gate-marker']), binding);
    expect(r).toMatchObject({
      kind: 'unsupported',
      capability: 'runtime-exec',
      state: state ?? 'absent',
      reason: 'RuntimeExecNotVerified',
    });
    expect(lookups.at(-1)).toBe('runtime-exec template/sbx/py');
    expect(ex.query('e-gate').kind).toBe('rejected');
    expect(existsSync(path.join(sd.rootDir, 'gate-marker'))).toBe(false);
  },
);

test('verified: runs, query shows running then succeeded with output; the same id is idempotent', async () => {
  states.set('template/sbx/py', 'verified');
  const ex = new Executions({ transport: new DirectTransport(), supportStates });
  const r = await ex.start('e-1', req(['sh', '-c', 'echo started; sleep 2; echo done']), binding);
  expect(r).toEqual({ kind: 'ok', value: { executionId: 'e-1', session } });
  let mid = ex.query('e-1');
  for (let i = 0; i < 30 && !(mid.kind === 'ok' && mid.value.stdout); i++) {
    await new Promise((res) => setTimeout(res, 50));
    mid = ex.query('e-1');
  }
  expect(mid).toMatchObject({ kind: 'ok', value: { state: 'running', stdout: 'started\n' } });
  // while running: no outcome yet, the bytes so far
  expect(mid.kind === 'ok' && mid.value.outcome).toBeUndefined();
  expect(mid.kind === 'ok' && mid.value.output?.stdout).toMatchObject({ bytes: 8, totalBytes: 8, text: 'started\n' });
  expect(await ex.start('e-1', req(['sh', '-c', 'echo again']), binding)).toEqual(r);
  const fin = await settle(ex, 'e-1');
  expect(fin).toMatchObject({ executionId: 'e-1', state: 'succeeded', exitCode: 0, stdout: 'started\ndone\n' });
  expect(fin.outcome).toMatchObject({ kind: 'completed', exitCode: 0, success: true, reason: 'CommandSucceeded' });
  const other = await ex.start('e-1', { ...req(['true']), session: { ...session, name: 'c2', uid: 'uid-2' } }, binding);
  expect(other.kind).toBe('rejected');
}, 20_000);

test('a non-zero exit is failed with its code; a deadline is timed-out with the output so far', async () => {
  states.set('template/sbx/py', 'verified');
  const ex = new Executions({ transport: new DirectTransport(), supportStates });
  await ex.start('e-fail', req(['sh', '-c', 'echo bad >&2; exit 4']), binding);
  expect(await settle(ex, 'e-fail')).toMatchObject({ state: 'failed', exitCode: 4, stderr: 'bad\n' });
  await ex.start('e-slow', req(['sh', '-c', 'echo partial; sleep 30'], 500), binding);
  const slow = await settle(ex, 'e-slow');
  expect(slow).toMatchObject({ state: 'timed-out', stdout: 'partial\n' });
  expect(slow.durationMs).toBeLessThan(3000);
}, 20_000);

test('limits are checked before sending: bad deadline, oversized request, empty argv', async () => {
  states.set('template/sbx/py', 'verified');
  const ex = new Executions({ transport: new DirectTransport(), supportStates, limits: { maxRequestBytes: 1024 } });
  expect((await ex.start('e-d', req(['true'], 0), binding)).kind).toBe('rejected');
  const big = await ex.start('e-big', req(['touch', 'x'.repeat(2000)]), binding);
  expect(big.kind === 'rejected' && big.reason).toBe('RequestTooLarge');
  expect((await ex.start('e-empty', req([]), binding)).kind).toBe('rejected');
});

test('the registry is bounded: oldest finished executions are evicted; when all slots run, new ones are refused', async () => {
  states.set('template/sbx/py', 'verified');
  const ex = new Executions({ transport: new DirectTransport(), supportStates, capacity: 2 });
  await ex.start('r-1', req(['true']), binding);
  await settle(ex, 'r-1');
  await ex.start('r-2', req(['sleep', '2']), binding);
  await ex.start('r-3', req(['sleep', '2']), binding);
  expect(ex.query('r-1').kind).toBe('rejected');
  const refused = await ex.start('r-4', req(['true']), binding);
  expect(refused.kind === 'rejected' && refused.reason).toBe('TooManyExecutions');
  await settle(ex, 'r-2');
  await settle(ex, 'r-3');
}, 15_000);
