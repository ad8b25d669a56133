/**
 * How the verifier addresses a sandbox through the router: by name unless every declared router-mode client sends
 * `X-Sandbox-Pod-IP` (k8s-agent-sandbox 1.0.8 does, `connector.py@1.0.8`), and with the router token on every router
 * request, the pod-IP control included. The listener stands in for the router only to record what the verifier sends;
 * what a real router does with those headers is proven in test/cluster/client/.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { routerClientsSendPodIP, type ClientPlan } from '../../../src/verify/plan.js';
import { AdapterRuntimeProber, type RuntimeTarget } from '../../../src/verify/runtime-prober.js';

const client = (mode: string, via: 'router' | 'pod', headers: string[]): ClientPlan => ({
  sdk: 'k8s-agent-sandbox',
  version: '1.0.8',
  mode,
  runtimeApi: 'python-runtime',
  via,
  ports: [8888],
  headers,
  warmPools: [],
});
const BY_NAME = ['X-Sandbox-ID', 'X-Sandbox-Namespace', 'X-Sandbox-Port'];

test('routerClientsSendPodIP: only when every router-mode client sends the header', () => {
  expect(routerClientsSendPodIP({})).toBe(false);
  expect(routerClientsSendPodIP({ clients: [client('in-cluster', 'pod', [])] })).toBe(false);
  expect(routerClientsSendPodIP({ clients: [client('tunnel', 'router', [...BY_NAME, 'X-Sandbox-Pod-IP'])] })).toBe(
    true,
  );
  expect(
    routerClientsSendPodIP({
      clients: [client('tunnel', 'router', [...BY_NAME, 'X-Sandbox-Pod-IP']), client('other', 'router', BY_NAME)],
    }),
  ).toBe(false);
});

describe('the router requests of AdapterRuntimeProber', () => {
  let server: http.Server;
  let url: string;
  const seen: http.IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(
          req.method === 'POST' ? JSON.stringify({ stdout: 'x\n', stderr: '', exit_code: 0 }) : '{"status":"ok"}',
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(() => r(undefined))));

  const target: RuntimeTarget = {
    kind: 'python-runtime',
    transport: 'router',
    namespace: 'dev',
    sandbox: 'py-abc',
    pod: 'py-abc',
    podIP: '10.88.0.7',
    restPort: 8888,
  };
  const sent = (h: http.IncomingHttpHeaders) => ({
    id: h['x-sandbox-id'],
    podIP: h['x-sandbox-pod-ip'],
    auth: h['authorization'],
  });

  test.each([
    [false, undefined],
    [true, '10.88.0.7'],
  ])('routerPodIPHeader %s: execute through the router carries X-Sandbox-Pod-IP %s', async (header, podIP) => {
    seen.length = 0;
    const prober = new AdapterRuntimeProber({ routerUrl: url, routerToken: 'tok', routerPodIPHeader: header });
    const r = await prober.execute(target, ['echo', 'x'], 2000);
    await prober.close();
    expect(r.kind).toBe('answered');
    // Two requests: the first call to a runtime asks whether it can stop a command at a deadline, then the command.
    const one = { id: 'py-abc', podIP, auth: 'Bearer tok' };
    expect(seen.map(sent)).toEqual([one, one]);
  });

  test('the pod-IP control request carries the router token too', async () => {
    seen.length = 0;
    const prober = new AdapterRuntimeProber({ routerUrl: url, routerToken: 'tok' });
    const r = await prober.health(target, 2000, 'router-pod-ip');
    await prober.close();
    expect(r.kind).toBe('answered');
    expect(seen.map(sent)).toEqual([{ id: 'py-abc', podIP: '10.88.0.7', auth: 'Bearer tok' }]);
  });
});
