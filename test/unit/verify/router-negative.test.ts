/**
 * The router's negative probes (case router-podip-ssrf), the pure judgements and the verifier's listener: a refusal counts
 * only with a listener that proves no connection; a connection or a 2xx/5xx answer is a finding; a router that lets a
 * credential-less request through is a finding unless the environment acknowledged allow-all.
 */
import { connect } from 'node:net';
import {
  Canary,
  healthListenerPort,
  isLoopback,
  judgeControl,
  witnessAnswered,
} from '../../../src/verify/probes/router-canary.js';
import { judgeAuthorization, judgeNegative } from '../../../src/verify/probes/router-negative.js';

test('negative probes: refused + owned listener untouched = proven; refused without a listener = unproven', () => {
  expect(judgeNegative({ code: 400 }, true, 0)).toEqual({ verdict: 'proven', reason: 'RouterRefusedNegative' });
  expect(judgeNegative({ code: 401 }, false, 0)).toEqual({
    verdict: 'unknown',
    reason: 'RouterNoConnectionUnproven',
  });
  // A connection to the listener outweighs any answer, a 4xx relayed from upstream included.
  expect(judgeNegative({ code: 400 }, true, 1)).toEqual({ verdict: 'missing', reason: 'RouterDialedCanary' });
  expect(judgeNegative({ code: 200 }, true, 0)).toEqual({ verdict: 'missing', reason: 'RouterAcceptedNegative' });
  expect(judgeNegative({ code: 502 }, false, 0)).toEqual({ verdict: 'missing', reason: 'RouterAcceptedNegative' });
  expect(judgeNegative({ failure: { category: 'timeout', message: 'no answer within 2000 ms' } }, true, 0)).toEqual({
    verdict: 'unknown',
    reason: 'RouterNegativeUnanswered',
  });
});

test('authorization: 401/403 proven; passed through = finding unless acknowledged; other 4xx tells nothing', () => {
  expect(judgeAuthorization({ code: 401 }, false).reason).toBe('RouterRequiresCredentials');
  expect(judgeAuthorization({ code: 403 }, true).reason).toBe('RouterRequiresCredentials');
  expect(judgeAuthorization({ code: 200 }, false)).toEqual({ verdict: 'missing', reason: 'RouterUnauthenticated' });
  expect(judgeAuthorization({ code: 502 }, true)).toEqual({
    verdict: 'proven',
    reason: 'RouterUnauthenticatedAcknowledged',
  });
  expect(judgeAuthorization({ code: 400 }, true).verdict).toBe('unknown');
  expect(judgeAuthorization({ failure: { category: 'unreachable', message: 'ECONNREFUSED' } }, true).reason).toBe(
    'RouterAuthorizationUnknown',
  );
});

test('the listener counts connections and records the first request line', async () => {
  const c = await Canary.open('127.0.0.1');
  if (typeof c === 'string') throw new Error(c);
  expect(c.connections).toBe(0);
  const reply = await new Promise<string>((resolve, reject) => {
    const s = connect(c.port, '127.0.0.1', () => s.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n'));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
  expect(reply).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*agentplane-canary$/);
  expect(c.connections).toBe(1);
  expect(c.request).toBe('GET /v1/health HTTP/1.1');
  await c.close();
  expect(typeof (await Canary.open('192.0.2.1'))).toBe('string'); // not an address of this machine
  expect([isLoopback('127.0.0.2'), isLoopback('::1'), isLoopback('10.0.0.1')]).toEqual([true, true, false]);
});

test('the control request: a connection proves the canary reachable; none leaves it unproven', () => {
  expect(judgeControl(1)).toEqual({ verdict: 'proven', reason: 'RouterCanaryReached' });
  expect(judgeControl(0)).toEqual({ verdict: 'unknown', reason: 'RouterCanaryUnreachable' });
});

test("the router's health listener is a loopback witness only when bound on every address", () => {
  expect(healthListenerPort(['--http-bind-address=:8080', '--health-probe-bind-address=:8081'])).toBe(8081);
  expect(healthListenerPort(['--health-probe-bind-address=0.0.0.0:9000'])).toBe(9000);
  // one address (the pod IP) or the flag left to its default: not known to listen on the pod's loopback
  expect(healthListenerPort(['--health-probe-bind-address=10.0.0.7:8081'])).toBeUndefined();
  expect(healthListenerPort(['--http-bind-address=:8080'])).toBeUndefined();
  expect([witnessAnswered({ code: 200 }), witnessAnswered({ code: 503 })]).toEqual([true, false]);
  expect(witnessAnswered({ failure: { category: 'timeout', message: 'no answer' } })).toBe(false);
});

test('the canary binds the first port it can, else an ephemeral one', async () => {
  const held = await Canary.open('127.0.0.1');
  if (typeof held === 'string') throw new Error(held);
  const next = await Canary.open('127.0.0.1', [held.port]);
  if (typeof next === 'string') throw new Error(next);
  expect(next.port).not.toBe(held.port); // taken: fell back to an ephemeral port
  await next.close();
  const again = await Canary.open('127.0.0.1', [next.port]);
  if (typeof again === 'string') throw new Error(again);
  expect(again.port).toBe(next.port);
  await Promise.all([again.close(), held.close()]);
});
