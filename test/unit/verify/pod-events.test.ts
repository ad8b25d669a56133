/**
 * Folding a probe pod's events per reason and node (src/verify/probes/pod-events.ts). The events are plain objects in
 * the shapes the API server returns (core/v1 with `source.host` and `count`; events.k8s.io/v1-written ones seen through
 * core/v1 with `reportingInstance` and `series`); the same path on a real API server is
 * test/cluster/verify/verify-pod-events.test.ts.
 */
import { describeWarning, foldPodWarnings } from '../../../src/verify/probes/pod-events.js';

const RUNSC_MISSING = 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured';

const ev = (o: Record<string, unknown>) => ({ type: 'Warning', involvedObject: { kind: 'Pod', name: 'shell-k2x9p' }, ...o });

describe('foldPodWarnings', () => {
  test('one entry per (reason, node): counts summed, newest message kept, Normal events left out', () => {
    const folded = foldPodWarnings([
      ev({ reason: 'FailedCreatePodSandBox', source: { host: 'node-a' }, count: 4, message: 'old message', lastTimestamp: '2026-11-29T10:00:00Z' }),
      ev({ type: 'Normal', reason: 'Scheduled', message: 'Successfully assigned dev-sandboxes/shell-k2x9p to node-a', lastTimestamp: '2026-11-29T09:59:59Z' }),
      ev({ reason: 'FailedCreatePodSandBox', reportingInstance: 'node-c', series: { count: 2, lastObservedTime: '2026-11-29T10:00:30Z' }, message: RUNSC_MISSING, eventTime: '2026-11-29T10:00:20Z' }),
      ev({ reason: 'FailedCreatePodSandBox', source: { host: 'node-a' }, count: 1, message: RUNSC_MISSING, lastTimestamp: '2026-11-29T10:01:00Z' }),
      ev({ reason: 'FailedScheduling', message: '0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.', lastTimestamp: '2026-11-29T09:59:00Z' }),
    ] as never);
    expect(folded).toEqual([
      { reason: 'FailedScheduling', count: 1, message: '0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.' },
      { reason: 'FailedCreatePodSandBox', node: 'node-a', count: 5, message: RUNSC_MISSING },
      { reason: 'FailedCreatePodSandBox', node: 'node-c', count: 2, message: RUNSC_MISSING },
    ]);
    expect(folded.map(describeWarning)).toEqual([
      'FailedScheduling: 0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.',
      `FailedCreatePodSandBox on node-a (5 times): ${RUNSC_MISSING}`,
      `FailedCreatePodSandBox on node-c (2 times): ${RUNSC_MISSING}`,
    ]);
  });

  test('messages are cut at 200 characters; no events, no entries', () => {
    expect(foldPodWarnings([ev({ reason: 'Failed', message: 'x'.repeat(500) })] as never)[0]!.message).toHaveLength(200);
    expect(foldPodWarnings([])).toEqual([]);
  });
});
