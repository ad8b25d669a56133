/**
 * The router probe's hint when no URL answers: a router Service whose pods are all unready (or gone) is named as such
 * (`RouterPodsNotReady`), so `next` points at the router's pods rather than at `--router-url`.
 */
import { unreadyRouter } from '../../../src/verify/probes/router.js';

const VIA = 'pods behind Service agent-sandbox-system/sandbox-router-svc (selector app=sandbox-router)';
const pod = (name: string, ready: boolean) => ({ name, namespace: 'agent-sandbox-system', labels: {}, ready });

test('no ready router pod: how many there are and how they were found; one ready or an unread list: nothing to say', () => {
  expect(unreadyRouter({ kind: 'ok', value: { pods: [pod('a', false), pod('b', false)], via: VIA } })).toBe(
    `0 of 2 ${VIA} ready`,
  );
  expect(unreadyRouter({ kind: 'ok', value: { pods: [], via: VIA } })).toBe(`0 of 0 ${VIA} ready`);
  expect(unreadyRouter({ kind: 'ok', value: { pods: [pod('a', false), pod('b', true)], via: VIA } })).toBeUndefined();
  expect(
    unreadyRouter({ kind: 'failed', error: { category: 'forbidden', message: 'pods is forbidden' } } as never),
  ).toBeUndefined();
});
