/**
 * The router probe's hint when no URL answers: a router Service whose pods are all unready (or gone) is named as such
 * (`RouterPodsNotReady`), so `next` points at the router's pods rather than at `--router-url`; restarting or waiting
 * containers are named with their reason and restart count.
 */
import { podView } from '../../../src/adapter/kubernetes/views.js';
import { unreadyRouter } from '../../../src/verify/probes/router.js';

const VIA = 'pods behind Service agent-sandbox-system/sandbox-router-svc (selector app=sandbox-router)';
const pod = (name: string, ready: boolean, extra: { restarts?: number; waiting?: string } = {}) => ({
  name,
  namespace: 'agent-sandbox-system',
  labels: {},
  ready,
  ...extra,
});

test('no ready router pod: how many there are and how they were found; one ready or an unread list: nothing to say', () => {
  expect(unreadyRouter({ kind: 'ok', value: { pods: [pod('a', false), pod('b', false)], via: VIA } })).toEqual({
    text: `0 of 2 ${VIA} ready`,
    restarting: false,
  });
  expect(unreadyRouter({ kind: 'ok', value: { pods: [], via: VIA } })).toEqual({
    text: `0 of 0 ${VIA} ready`,
    restarting: false,
  });
  expect(unreadyRouter({ kind: 'ok', value: { pods: [pod('a', false), pod('b', true)], via: VIA } })).toBeUndefined();
  expect(
    unreadyRouter({ kind: 'failed', error: { category: 'forbidden', message: 'pods is forbidden' } } as never),
  ).toBeUndefined();
});

test('crash-looping router pods: each named with its waiting reason and restarts, and the result says restarting', () => {
  const pods = [
    pod('r-1', false, { restarts: 4, waiting: 'CrashLoopBackOff' }),
    pod('r-2', false, { restarts: 0, waiting: 'ContainerCreating' }),
    pod('r-3', false, { restarts: 0 }),
  ];
  expect(unreadyRouter({ kind: 'ok', value: { pods, via: VIA } })).toEqual({
    text: `0 of 3 ${VIA} ready (r-1: CrashLoopBackOff, 4 restarts; r-2: ContainerCreating, 0 restarts)`,
    restarting: true,
  });
  expect(unreadyRouter({ kind: 'ok', value: { pods: pods.slice(1), via: VIA } })?.restarting).toBe(false);
});

test('podView reads restartCount and the waiting reason of each container status', () => {
  const view = podView({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'r-1', namespace: 'agent-sandbox-system' },
    status: {
      containerStatuses: [
        { name: 'sandbox-router', restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        { name: 'side', restartCount: 0, state: { running: {} } },
      ],
    },
  });
  expect(view.containerStatuses.map((c) => [c.name, c.restarts, c.waiting, c.started])).toEqual([
    ['sandbox-router', 4, 'CrashLoopBackOff', false],
    ['side', 0, undefined, true],
  ]);
});
