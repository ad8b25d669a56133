/**
 * Folding a probe pod's events per reason and node (src/verify/probes/pod-events.ts). The events are plain objects in
 * the shapes the API server returns (core/v1 with `source.host` and `count`; events.k8s.io/v1-written ones seen through
 * core/v1 with `reportingInstance` and `series`); the same path on a real API server is
 * test/cluster/verify/verify-pod-events.test.ts.
 */
import { eventView } from '../../../src/adapter/kubernetes/views.js';
import { describeWarning, foldPodWarnings, sandboxFailuresByNode } from '../../../src/verify/probes/pod-events.js';

const RUNSC_MISSING =
  'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured';

const ev = (o: Record<string, unknown>) =>
  eventView({ type: 'Warning', involvedObject: { kind: 'Pod', name: 'shell-k2x9p' }, ...o });

describe('foldPodWarnings', () => {
  test('one entry per (reason, node): counts summed, newest message kept, Normal events left out', () => {
    const folded = foldPodWarnings([
      ev({
        reason: 'FailedCreatePodSandBox',
        source: { host: 'node-a' },
        count: 4,
        message: 'old message',
        lastTimestamp: '2026-11-29T10:00:00Z',
      }),
      ev({
        type: 'Normal',
        reason: 'Scheduled',
        message: 'Successfully assigned dev-sandboxes/shell-k2x9p to node-a',
        lastTimestamp: '2026-11-29T09:59:59Z',
      }),
      ev({
        reason: 'FailedCreatePodSandBox',
        reportingComponent: 'kubelet',
        reportingInstance: 'node-c',
        series: { count: 2, lastObservedTime: '2026-11-29T10:00:30Z' },
        message: RUNSC_MISSING,
        eventTime: '2026-11-29T10:00:20Z',
      }),
      ev({
        reason: 'FailedCreatePodSandBox',
        source: { host: 'node-a' },
        count: 1,
        message: RUNSC_MISSING,
        lastTimestamp: '2026-11-29T10:01:00Z',
      }),
      // The scheduler's reportingInstance is `default-scheduler-<host>`: no node.
      ev({
        reason: 'FailedScheduling',
        reportingComponent: 'default-scheduler',
        reportingInstance: 'default-scheduler-vm',
        message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
        lastTimestamp: '2026-11-29T09:59:00Z',
      }),
    ]);
    // prose: the scheduler's own event message (upstream words) is carried as it was sent
    expect(folded).toEqual([
      {
        reason: 'FailedScheduling',
        count: 1,
        message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
      },
      { reason: 'FailedCreatePodSandBox', node: 'node-a', count: 5, message: RUNSC_MISSING },
      { reason: 'FailedCreatePodSandBox', node: 'node-c', count: 2, message: RUNSC_MISSING },
    ]);
    expect(folded.map(describeWarning)).toEqual([
      "FailedScheduling: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
      `FailedCreatePodSandBox on node-a (5 times): ${RUNSC_MISSING}`,
      `FailedCreatePodSandBox on node-c (2 times): ${RUNSC_MISSING}`,
    ]);
  });

  test('a message over 320 characters keeps its start and its end (the cause); no events, no entries', () => {
    const long = `Failed to create pod sandbox: ${'layer '.repeat(80)}exec: "runsc": executable file not found in $PATH`;
    const cut = foldPodWarnings([ev({ reason: 'FailedCreatePodSandBox', message: long })])[0]!.message;
    expect(cut).toHaveLength(320);
    expect(cut.startsWith('Failed to create pod sandbox: layer')).toBe(true);
    expect(cut).toContain(' … ');
    expect(cut.endsWith('exec: "runsc": executable file not found in $PATH')).toBe(true);
    expect(foldPodWarnings([])).toEqual([]);
  });
});

describe('sandboxFailuresByNode', () => {
  const on = (pod: string, node: string, count: number, at: string, message = RUNSC_MISSING) =>
    ev({
      involvedObject: { kind: 'Pod', name: pod },
      reason: 'FailedCreatePodSandBox',
      source: { component: 'kubelet', host: node },
      count,
      message,
      lastTimestamp: at,
    });

  test('the case: pool pods on node-a and node-c fail, node-b runs; one entry per failing node with its pods, only the pods asked about', () => {
    const failures = sandboxFailuresByNode(
      [
        on('shell-pool-a1', 'node-a', 3, '2026-11-29T10:00:01Z'),
        on('shell-pool-c1', 'node-c', 2, '2026-11-29T10:00:02Z'),
        on('shell-pool-a2', 'node-a', 1, '2026-11-29T10:00:03Z', 'newest on node-a'),
        on('other-template-x', 'node-a', 9, '2026-11-29T10:00:04Z'),
        ev({
          involvedObject: { kind: 'Pod', name: 'shell-pool-c1' },
          reason: 'BackOff',
          source: { host: 'node-c' },
          message: 'Back-off restarting failed container',
        }),
      ],
      new Set(['shell-pool-a1', 'shell-pool-a2', 'shell-pool-b1', 'shell-pool-c1']),
    );
    // prose: the kubelet's own event messages (upstream words) are carried as they were sent
    expect(failures).toEqual([
      { node: 'node-a', pods: ['shell-pool-a1', 'shell-pool-a2'], count: 4, message: 'newest on node-a' },
      { node: 'node-c', pods: ['shell-pool-c1'], count: 2, message: RUNSC_MISSING },
    ]);
  });

  test('an event naming no node is kept under "?"', () => {
    const e = ev({
      involvedObject: { kind: 'Pod', name: 'p' },
      reason: 'FailedCreatePodSandBox',
      reportingComponent: 'some-controller',
      reportingInstance: 'ctl-0',
      message: 'm',
    });
    // prose: the event's own message (upstream words) is carried as it was sent
    expect(sandboxFailuresByNode([e], new Set(['p']))).toEqual([{ node: '?', pods: ['p'], count: 1, message: 'm' }]);
  });
});
