/**
 * Rule: every runtime answer is bound to the pod UID it came from. A real loopback python-runtime stand-in answers
 * every command; the pod reads around each call are the one fake here (a pod replaced under the same name cannot be
 * made without a cluster; test/cluster/cases/client-node-portforward-teardown.real-node.test.ts does it on the real
 * node). A replacement, a terminating pod or a gone pod during the sample leaves runtime-exec below verified with
 * `RuntimePodReplaced`; an over-cap answer is `RuntimeAnswerTooLarge`, not a timeout.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PodView } from '../../../src/adapter/kubernetes/views.js';
import type { Result } from '../../../src/adapter/types.js';
import { errorChannel } from '../../../src/adapter/transports/port-forward.js';
import { Facts } from '../../../src/verify/probes/common.js';
import { proveExecution, runtimeFailureReason } from '../../../src/verify/probes/workload/runtime-proof.js';
import { AdapterRuntimeProber } from '../../../src/verify/runtime-prober.js';
import { settle } from '../../../src/verify/states.js';

async function echoRuntime(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      if (req.method === 'GET') return res.end('{"status":"ok"}');
      const command = (JSON.parse(raw) as { command: string }).command;
      res.setHeader('content-type', 'application/json');
      // `big N`: an answer of N bytes of stdout.
      const big = /^big (\d+)$/.exec(command);
      const stdout = big ? 'a'.repeat(Number(big[1])) : `${command.replace(/^echo /, '')}\n`;
      res.end(JSON.stringify({ stdout, stderr: '', exit_code: 0 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

/** The pod as the API server shows it on the n-th read (1-based): uid `u1` until `changeAt`, then `then`. */
function podReads(changeAt: number, then: 'replaced' | 'terminating' | 'gone') {
  let reads = 0;
  return async (namespace: string, name: string): Promise<Result<PodView | undefined>> => {
    reads += 1;
    if (reads >= changeAt && then === 'gone') return { kind: 'ok', value: undefined };
    const uid = reads >= changeAt && then === 'replaced' ? 'u2' : 'u1';
    const deleting = reads >= changeAt && then === 'terminating';
    return {
      kind: 'ok',
      value: { meta: { namespace, name, uid, labels: {}, deleting } } as unknown as PodView,
    };
  };
}

async function prove(pods: ReturnType<typeof podReads> | undefined, podUid: string | undefined) {
  const rt = await echoRuntime();
  const exec = new Facts('runtime-exec');
  exec
    .proven('discovered', 't', 'RuntimeDeclared', 'd')
    .proven('compatible', 't', 'RuntimeSpoken', 's')
    .proven('configured', 't', 'TransportReachesRuntime', 'c');
  const prober = new AdapterRuntimeProber(pods ? { pods } : {});
  const target = {
    kind: 'python-runtime' as const,
    transport: 'direct' as const,
    namespace: 'sbx',
    sandbox: 's1',
    pod: 's1',
    ...(podUid ? { podUid } : {}),
    podIP: '127.0.0.1',
    restPort: rt.port,
  };
  const ok = await proveExecution(prober, target, { probeTimeoutMs: 2000, runId: 'r1', samples: 5 }, exec, 'pod s1');
  await prober.close();
  await rt.close();
  return { ok, state: settle(exec.list).state, failing: exec.list.filter((e) => e.verdict !== 'proven') };
}

test('the pod stays the same uid around every call: 5 of 5 bound answers verify', async () => {
  expect(await prove(podReads(1000, 'replaced'), 'u1')).toMatchObject({ ok: true, state: 'verified' });
});

test.each([
  // Reads: 2 per call; contact = reads 1-2, sample k = reads 2k+1..2k+2. A change at read 8 lands after sample 3.
  ['replaced', 8, 'sample 3/5'],
  ['terminating', 6, 'sample 2/5'],
  ['gone', 10, 'sample 4/5'],
] as const)('pod %s during the sample: the answer is void, runtime-exec stays configured', async (then, at, value) => {
  const r = await prove(podReads(at, then), 'u1');
  expect(r.ok).toBe(false);
  expect(r.state).toBe('configured');
  expect(r.failing).toHaveLength(1);
  expect(r.failing[0]).toMatchObject({ step: 'verified', verdict: 'unknown', reason: 'RuntimePodReplaced', value });
});

test('a pod already replaced before first contact never counts its health answer', async () => {
  const r = await prove(podReads(1, 'replaced'), 'u1');
  expect(r.failing[0]).toMatchObject({ reason: 'RuntimePodReplaced', field: 'health' });
});

test('an over-cap answer is too large, decided at once, not a timeout', async () => {
  const rt = await echoRuntime();
  const prober = new AdapterRuntimeProber({});
  const target = {
    kind: 'python-runtime' as const,
    transport: 'direct' as const,
    namespace: 'sbx',
    sandbox: 's1',
    pod: 's1',
    podIP: '127.0.0.1',
    restPort: rt.port,
  };
  // 5 MiB of stdout passes the default 4 MiB response cap.
  const r = await prober.execute(target, ['big', String(5 * 1024 * 1024)], 10_000);
  await prober.close();
  await rt.close();
  expect(r.kind).toBe('error');
  if (r.kind === 'answered') return;
  expect(runtimeFailureReason(r)).toBe('RuntimeAnswerTooLarge');
  expect(r.durationMs).toBeLessThan(10_000);
});

test("the kubelet's error-channel text is the failure, classified: refused names the port", () => {
  const text =
    'an error occurred forwarding 8080 -> 8080: error forwarding port 8080 to pod abc, uid : failed to execute portforward in network namespace "/var/run/netns/cni-1": failed to connect to localhost:8080 inside namespace "abc", IPv4: dial tcp4 127.0.0.1:8080: connect: connection refused IPv6 dial tcp6 [::1]:8080: connect: connection refused ';
  expect(errorChannel('sbx/s1:8080', 8080, text)).toMatchObject({ category: 'unreachable', errno: 'ECONNREFUSED' });
  expect(errorChannel('sbx/s1:8080', 8080, 'pod not running')).toMatchObject({ category: 'unreachable' });
  expect(errorChannel('sbx/s1:8080', 8080, 'pod not running').errno).toBeUndefined();
});
