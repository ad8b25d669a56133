/**
 * The verifier's runtime measurement (src/verify/probes/workload/runtime-measure.ts) against the REAL runtimes on
 * this machine: the sandboxd v0.5.6 binary (test/unit/adapter/sandboxd-process.ts) and the upstream python runtime's
 * main.py of each tag (test/unit/adapter/python-runtime-process.ts), over the direct transport through the verifier's
 * own prober. sandboxd returns `printf 'ok\377'` as its 3 bytes and 4 MiB intact; the python runtime cannot decode the
 * byte (`RuntimeDecodeFailed`), so it is not binary-safe. The limits per transport come from layer-limits.ts.
 */
import { routerLimits, syncCallLimits } from '../../../src/adapter/runtime/layer-limits.js';
import { routerLimitFacts } from '../../../src/releases/router-limits.js';
import { DEFAULT_LIMITS } from '../../../src/adapter/runtime/limits.js';
import type { Evidence } from '../../../src/verify/evidence.js';
import { Facts, type ProbeDeps } from '../../../src/verify/probes/common.js';
import type { WorkloadFacts } from '../../../src/verify/probes/workload/facts.js';
import { runtimeMeasureEvidence, startKind } from '../../../src/verify/probes/workload/runtime-measure.js';
import type { ProbeSandbox } from '../../../src/verify/probes/workload/sandbox-ready.js';
import { AdapterRuntimeProber, type RuntimeTarget } from '../../../src/verify/runtime-prober.js';
import { PYTHON_RUNTIME_TAGS } from '../../../test-cluster/python-runtime.js';
import { startPythonRuntime } from '../adapter/python-runtime-process.js';
import { startSandboxd } from '../adapter/sandboxd-process.js';

/** Runs the measurement against `target` and returns the template's evidence. */
async function measure(runtime: 'sandboxd' | 'python-runtime', target: RuntimeTarget): Promise<Evidence[]> {
  const prober = new AdapterRuntimeProber({});
  const template = new Facts('template/sbx/t');
  const deps = {
    runtime: prober,
    plan: { release: 'v0.5.6', transport: 'direct', probeTimeoutMs: 20_000, router: { url: 'http://127.0.0.1:1' } },
  } as unknown as ProbeDeps;
  const sb: ProbeSandbox = { name: 's1', podState: '', target };
  try {
    await runtimeMeasureEvidence(deps, { runtime } as never, { template } as unknown as WorkloadFacts, sb);
  } finally {
    await prober.close();
  }
  return template.list;
}

const byReason = (ev: readonly Evidence[], reason: string) => ev.filter((e) => e.reason === reason);

test('sandboxd v0.5.6: binary-safe, 4 MiB (the cap) intact, 1 h direct, no router row (gRPC)', async () => {
  const sd = await startSandboxd();
  try {
    const ev = await measure('sandboxd', {
      kind: 'sandboxd',
      transport: 'direct',
      namespace: 'sbx',
      sandbox: 's1',
      pod: 's1',
      podIP: '127.0.0.1',
      restPort: sd.restPort,
      grpcPort: sd.grpcPort,
    });
    expect(byReason(ev, 'OutputBinarySafe').map((e) => e.value)).toEqual(['6f6bff']);
    expect(byReason(ev, 'LargestIntactOutput')[0]!.observed).toEqual({ bytes: DEFAULT_LIMITS.maxResponseBytes });
    expect(byReason(ev, 'SyncCallLimit').map((e) => [e.field, e.observed!['ms']])).toEqual([['direct', 3_600_000]]);
    expect(ev.every((e) => e.verdict === 'proven' && e.step === 'verified')).toBe(true);
  } finally {
    await sd.stop();
  }
}, 60_000);

test.each(PYTHON_RUNTIME_TAGS)(
  'python runtime %s: not binary-safe (RuntimeDecodeFailed), output intact, 300 s direct and 30 s via router',
  async (tag) => {
    const rt = await startPythonRuntime(tag);
    try {
      const ev = await measure('python-runtime', {
        kind: 'python-runtime',
        transport: 'direct',
        namespace: 'sbx',
        sandbox: 's1',
        pod: 's1',
        podIP: '127.0.0.1',
        restPort: rt.port,
      });
      expect(byReason(ev, 'OutputNotBinarySafe').map((e) => e.value)).toEqual(['RuntimeDecodeFailed']);
      expect(byReason(ev, 'LargestIntactOutput')[0]!.observed!['bytes']).toBeGreaterThanOrEqual(64 << 10);
      expect(byReason(ev, 'SyncCallLimit').map((e) => [e.field, e.observed!['ms']])).toEqual([
        ['direct', 300_000],
        ['router', 30_000],
      ]);
    } finally {
      await rt.stop();
    }
  },
  120_000,
);

test('the recorded sync limit is the smallest layer of the release defaults', () => {
  const router = routerLimits(routerLimitFacts('v0.5.6')!);
  const limit = (t: 'router' | 'port-forward', kind: 'sandboxd' | 'python-runtime') =>
    syncCallLimits(t, { kind }, 'v0.5.6', t === 'router' ? router : undefined).effective;
  expect(limit('router', 'python-runtime')).toMatchObject({ limitMs: 30_000, layer: 'router' });
  expect(limit('port-forward', 'python-runtime')).toMatchObject({ limitMs: 300_000, layer: 'runtime' });
  expect(limit('port-forward', 'sandboxd')).toMatchObject({ limitMs: 3_600_000, layer: 'adapter' });
});

test('startKind: a claim bound to a Sandbox of another name adopted a warm member; the same name is a cold start', () => {
  const ready = (sandbox: string, claim?: string) =>
    ({
      ready: true,
      why: '',
      waitedMs: 1,
      sandbox: { meta: { name: sandbox } },
      ...(claim ? { claim: { meta: { name: claim } } } : {}),
    }) as never;
  expect(startKind(ready('pool-abcde', 'probe-claim'))).toBe('warm');
  expect(startKind(ready('probe-claim', 'probe-claim'))).toBe('cold');
  expect(startKind(ready('bare'))).toBe('cold');
});
