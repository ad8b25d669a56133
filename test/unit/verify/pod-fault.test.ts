/**
 * Permanent pod errors end a wait (src/verify/probes/pod-fault.ts, case test-node-runsc-registration). The event
 * messages are containerd 2.x's for an unknown handler, as the real node records them (test/cluster/verify/
 * verify-real-node.test.ts asserts the live one); the cluster is a FAKE answering only the event list, because the
 * unit project has no API server.
 */
import type { Cluster } from '../../../src/adapter/kubernetes/cluster.js';
import { eventView } from '../../../src/adapter/kubernetes/views.js';
import { releaseFacts } from '../../../src/releases/supported.js';
import type { ProbeDeps } from '../../../src/verify/probes/common.js';
import { permanentPodFault, permanentSandboxCause, watchPodFaults } from '../../../src/verify/probes/pod-fault.js';

const UNKNOWN =
  'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured';
const CNI =
  'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="bridge" failed (add): failed to allocate for range 0';
const event = (pod: string, message: string) => ({
  type: 'Warning',
  reason: 'FailedCreatePodSandBox',
  involvedObject: { kind: 'Pod', name: pod },
  source: { component: 'kubelet', host: 'agentplane-node' },
  count: 3,
  message,
  lastTimestamp: '2026-12-05T10:00:00Z',
});

describe('permanent pod faults', () => {
  test('an unknown handler is permanent; a CNI failure is not', () => {
    expect(permanentSandboxCause(UNKNOWN)).toBe(true);
    expect(permanentSandboxCause(CNI)).toBe(false);
    const events = [event('p1', CNI), event('p2', UNKNOWN), event('other', UNKNOWN)].map(eventView);
    expect(permanentPodFault(events, new Set(['p1']))).toBeUndefined();
    expect(permanentPodFault(events, new Set(['p1', 'p2']))).toEqual({
      node: 'agentplane-node',
      pods: ['p2'],
      count: 3,
      message: UNKNOWN,
    });
  });

  test('the watch aborts its signal at the first permanent fault and hands it over', async () => {
    let calls = 0;
    const deps = {
      cluster: {
        events: async () => {
          calls += 1;
          return { kind: 'ok', value: calls < 3 ? [event('p2', CNI)] : [event('p2', CNI), event('p2', UNKNOWN)] };
        },
      } as unknown as Cluster,
      facts: releaseFacts('v0.5.6'),
    } as unknown as ProbeDeps;
    const parent = new AbortController();
    const w = watchPodFaults(deps, 'ns', () => ['p2'], parent.signal, 5);
    await new Promise<void>((resolve) => w.signal.addEventListener('abort', () => resolve()));
    expect(parent.signal.aborted).toBe(false);
    expect((await w.stop())?.pods).toEqual(['p2']);
    expect(calls).toBe(3);
  });

  test('stopped before any fault: no fault, and the signal is not aborted', async () => {
    const deps = {
      cluster: { events: async () => ({ kind: 'ok', value: [event('p2', CNI)] }) } as unknown as Cluster,
      facts: releaseFacts('v0.5.6'),
    } as unknown as ProbeDeps;
    const w = watchPodFaults(deps, 'ns', () => ['p2'], new AbortController().signal, 5);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await w.stop()).toBeUndefined();
    expect(w.signal.aborted).toBe(false);
  });
});
