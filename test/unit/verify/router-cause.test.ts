/** The router failure classifier against the v0.5.6 router's real 502 (its body names no cause; case router-warm-nxdomain). */
import { routerCause } from '../../../src/verify/probes/workload/router-cause.js';

// What the real v0.5.6 router answered on the test cluster (test/cluster/cases/router-warm-nxdomain.verify.test.ts).
const real502 = {
  kind: 'error' as const,
  detail:
    'sandboxd GET /v1/health via router http://127.0.0.1:41729 -> ns/sb:8080: answered 502 {"detail":"Could not connect to the backend sandbox: sb"}',
  http: { code: 502, body: '{"detail":"Could not connect to the backend sandbox: sb"}' },
};
/** A refused answer of `status` whose body is `body`; the detail is prose the classifier must not read. */
const refused = (status: number, body: string) => ({
  kind: 'error' as const,
  detail: 'answered 502 no such host',
  http: { code: status, body },
});

test('the bare connect failure is NXDOMAIN only when the pod-IP control answered and no Service exists', () => {
  expect(routerCause(real502, { service: false, byPodIP: 'answered' })).toBe('RouterUpstreamNxdomain');
  expect(routerCause(real502, { service: true, byPodIP: 'answered' })).toBe('RouterUpstream5xx');
  expect(routerCause(real502, { service: false, byPodIP: 'failed' })).toBe('RouterUpstream5xx');
  expect(routerCause(real502, { service: undefined, byPodIP: 'answered' })).toBe('RouterUpstream5xx');
  expect(routerCause(real502, { service: false, byPodIP: undefined })).toBe('RouterUpstream5xx');
});

test('a cause named in the answer is taken; our own timeouts and redirects keep their runtime reasons', () => {
  const ctx = { service: undefined, byPodIP: undefined };
  expect(routerCause(refused(502, 'dial tcp: lookup x: no such host'), ctx)).toBe('RouterUpstreamNxdomain');
  expect(routerCause(refused(503, 'connection refused'), ctx)).toBe('RouterUpstreamRefused');
  expect(routerCause(refused(504, 'upstream timed out'), ctx)).toBe('RouterUpstreamTimeout');
  expect(routerCause(refused(404, 'no such host'), ctx)).toBe('RuntimeError');
  expect(routerCause({ kind: 'error', detail: 'answered 502 no such host' }, ctx)).toBe('RuntimeError');
  expect(routerCause({ kind: 'timeout', detail: 'x' }, ctx)).toBe('RuntimeTimeout');
  expect(routerCause({ kind: 'error', detail: 'answered 307', redirect: true }, ctx)).toBe('RuntimeRedirected');
});
