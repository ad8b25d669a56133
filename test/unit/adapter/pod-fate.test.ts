/**
 * Which pod states make a lost call an OOM kill (src/adapter/runtime/pod-fate.ts): only an `OOMKilled` termination of
 * the pod the call went to (same UID), ended after the call started, in `state` or, after a restart, `lastState`.
 * The pod objects are shaped as the kubelet writes them (test/cluster/cases/runtime-oom-killed.real-node.test.ts
 * reads the same fields from a real one).
 */
import { podView } from '../../../src/adapter/kubernetes/views.js';
import { mayHideOomKill, oomKillOf } from '../../../src/adapter/runtime/pod-fate.js';

const START = Date.parse('2026-12-05T10:00:00Z');
const pod = (uid: string, status: object, limit: string | null = '64Mi') =>
  podView({
    metadata: { name: 'hog', namespace: 'sbx', uid },
    spec: {
      containers: [
        { name: 'sandboxd', image: 'sandboxd', ...(limit ? { resources: { limits: { memory: limit } } } : {}) },
      ],
    },
    status: { containerStatuses: [{ name: 'sandboxd', image: 'sandboxd', imageID: 'x', restartCount: 0, ...status }] },
  } as never);
const oom = (finishedAt: string, exitCode = 137) => ({ terminated: { reason: 'OOMKilled', exitCode, finishedAt } });

test('an OOMKilled termination of the same pod after the call started: oom-killed with the exit code and the limit in bytes', () => {
  expect(oomKillOf(pod('u1', { state: oom('2026-12-05T10:00:03Z') }), 'u1', START)).toMatchObject({
    kind: 'oom-killed',
    reason: 'RuntimeOOMKilled',
    layer: 'node',
    exitCode: 137,
    container: 'sandboxd',
    podUid: 'u1',
    memoryLimitBytes: 64 * 2 ** 20,
  });
});

test('after a restart the kubelet keeps it in lastState: still found', () => {
  const p = pod('u1', { state: { running: {} }, restartCount: 1, lastState: oom('2026-12-05T10:00:02Z', 128) });
  expect(oomKillOf(p, 'u1', START)).toMatchObject({ kind: 'oom-killed', exitCode: 128 });
});

test('another pod UID, an OOM kill before the call, another reason, or no memory limit', () => {
  expect(oomKillOf(pod('u2', { state: oom('2026-12-05T10:00:03Z') }), 'u1', START)).toBeUndefined();
  expect(oomKillOf(pod('u1', { lastState: oom('2026-12-05T09:59:00Z') }), 'u1', START)).toBeUndefined();
  const error = { state: { terminated: { reason: 'Error', exitCode: 143, finishedAt: '2026-12-05T10:00:03Z' } } };
  expect(oomKillOf(pod('u1', error), 'u1', START)).toBeUndefined();
  const noLimit = oomKillOf(pod('u1', { state: oom('2026-12-05T10:00:03Z') }, null), 'u1', START);
  expect(noLimit?.kind).toBe('oom-killed');
  expect(noLimit).not.toHaveProperty('memoryLimitBytes');
});

test("the kubelet's whole-second finishedAt just before the call's start still counts (2 s slack), not earlier", () => {
  expect(oomKillOf(pod('u1', { state: oom('2026-12-05T09:59:59Z') }), 'u1', START)?.kind).toBe('oom-killed');
  expect(oomKillOf(pod('u1', { state: oom('2026-12-05T09:59:57Z') }), 'u1', START)).toBeUndefined();
});

test('only a closed connection or a failed runtime call can hide an OOM kill', () => {
  expect(mayHideOomKill({ kind: 'transport-closed', reason: 'TransportClosed', layer: 'transport', message: '' })).toBe(
    true,
  );
  expect(mayHideOomKill({ kind: 'runtime-error', reason: 'RuntimeCallFailed', layer: 'router', message: '' })).toBe(
    true,
  );
  expect(mayHideOomKill({ kind: 'runtime-error', reason: 'RuntimeNoExitStatus', layer: 'runtime', message: '' })).toBe(
    false,
  );
  expect(
    mayHideOomKill({
      kind: 'completed',
      exitCode: 137,
      success: false,
      signal: 9,
      reason: 'CommandKilledBySignal',
      layer: 'command',
      message: '',
    }),
  ).toBe(false);
});
