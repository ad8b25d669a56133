/**
 * Case gvisor-evidence-markers: gVisor and Kata are judged from independent signals — class and handler, the kernel
 * inside against the node's `kernelVersion`, and one runtime marker among several read from files — never from one
 * version string or one tool. The five fixtures of the case, table-driven: p1 (2026 runsc, `4.19.0-gvisor`), p2 (older
 * runsc, `4.4.0`), p3 (class `gvisor` whose handler containerd maps to runc: the host kernel), p4 (Kata, guest `6.1.x`),
 * p5 (runc on a genuine 4.4.0 host kernel). The pure classifier is called with the signals; the probe
 * (`isolationEvidence`) is run against a FAKE runtime (test/unit/verify/fake-inside.ts says why) and a FAKE cluster that
 * answers only the node and RuntimeClass reads (the unit project has no API server). The live runsc and runc pods are
 * in test/cluster/cases/gvisor-evidence-markers.real-node.test.ts.
 */
import type { Cluster } from '../../src/adapter/kubernetes/cluster.js';
import { podView } from '../../src/adapter/kubernetes/views.js';
import { releaseFacts } from '../../src/releases/supported.js';
import { Facts, type ProbeDeps } from '../../src/verify/probes/common.js';
import { classifyIsolation, isolationEvidence, type IsolationSignals } from '../../src/verify/probes/isolation.js';
import type { RuntimeTarget } from '../../src/verify/runtime-prober.js';
import { settle } from '../../src/verify/states.js';
import { insideRuntime, type Inside } from '../unit/verify/fake-inside.js';

const NODE_KERNEL = '6.8.0-45-generic';
/** gVisor's /proc/version: its release, then its fixed build line (pkg/sentry/kernel/version/version.go). */
const gvisorVersion = (release: string) => `Linux version ${release} #1 SMP Sun Jan 10 15:06:54 PST 2016`;
const HOST_VERSION = `Linux version ${NODE_KERNEL} (buildd@lcy02-amd64-075) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0, GNU ld 2.42) #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024`;
const KATA_VERSION =
  'Linux version 6.1.62 (root@kata-builder) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld 2.38) #1 SMP Tue Jan 16 12:00:00 UTC 2024';
const OLD_HOST_VERSION =
  'Linux version 4.4.0 (buildd@lgw01-amd64-046) (gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.12)) #1 SMP Mon Aug 1 00:00:00 UTC 2016';
const BOOT = '[    0.000000] Starting gVisor...\n[    0.402313] Ready!\n';

interface Fixture {
  readonly pod: string;
  readonly promised: 'gvisor' | 'kata';
  readonly signals: IsolationSignals;
  /** Per fact: [reason, verdict, value]. */
  readonly facts: ReadonlyArray<readonly [string, string, string | undefined]>;
}

const gv = { runtimeClassName: 'gvisor', handler: 'runsc' };
const FIXTURES: readonly Fixture[] = [
  {
    pod: 'p1',
    promised: 'gvisor',
    // 2026 runsc: release names gvisor, no dmesg in the image.
    signals: {
      ...gv,
      nodeKernel: NODE_KERNEL,
      osrelease: '4.19.0-gvisor',
      procVersion: gvisorVersion('4.19.0-gvisor'),
    },
    facts: [
      ['KernelDiffersFromNode', 'proven', '4.19.0-gvisor'],
      ['GvisorKernel', 'proven', gvisorVersion('4.19.0-gvisor')],
    ],
  },
  {
    pod: 'p2',
    promised: 'gvisor',
    // Older runsc: `4.4.0` and no osrelease file (google/gvisor#12487); the build line and the boot log still name it.
    signals: { ...gv, nodeKernel: NODE_KERNEL, procVersion: gvisorVersion('4.4.0'), dmesg: BOOT },
    facts: [
      ['KernelDiffersFromNode', 'proven', '4.4.0'],
      ['GvisorKernel', 'proven', gvisorVersion('4.4.0')],
    ],
  },
  {
    pod: 'p3',
    promised: 'gvisor',
    signals: { ...gv, nodeKernel: NODE_KERNEL, osrelease: NODE_KERNEL, procVersion: HOST_VERSION },
    facts: [
      ['HostKernel', 'missing', NODE_KERNEL],
      ['NotGvisorKernel', 'missing', HOST_VERSION],
    ],
  },
  {
    pod: 'p4',
    promised: 'kata',
    signals: {
      runtimeClassName: 'kata-qemu',
      handler: 'kata-qemu',
      nodeKernel: NODE_KERNEL,
      osrelease: '6.1.62',
      procVersion: KATA_VERSION,
    },
    facts: [
      ['KernelDiffersFromNode', 'proven', '6.1.62'],
      ['GuestKernelDiffers', 'proven', KATA_VERSION],
    ],
  },
  {
    pod: 'p5',
    promised: 'gvisor',
    // A runc pod on a genuine 4.4.0 host, judged as if its class promised gVisor: `4.4.0` alone proves nothing.
    signals: { ...gv, nodeKernel: '4.4.0', osrelease: '4.4.0', procVersion: OLD_HOST_VERSION },
    facts: [
      ['HostKernel', 'missing', '4.4.0'],
      ['NotGvisorKernel', 'missing', OLD_HOST_VERSION],
    ],
  },
];

describe('case gvisor-evidence-markers: the five fixtures, classified from independent signals', () => {
  test.each(FIXTURES.map((f) => [f.pod, f] as const))('%s', (_pod, f) => {
    const got = classifyIsolation(f.promised, f.signals);
    expect(got.map((x) => [x.reason, x.verdict, x.value])).toEqual(f.facts);
  });

  test('p5 is not gVisor even with a 4.4.0 release; p4 (Kata) is not gVisor either; p1 is not Kata', () => {
    const p4 = FIXTURES[3]!.signals;
    expect(classifyIsolation('gvisor', p4).map((x) => x.reason)).toEqual(['KernelDiffersFromNode', 'NotGvisorKernel']);
    expect(classifyIsolation('kata', FIXTURES[0]!.signals).map((x) => x.reason)).toEqual([
      'KernelDiffersFromNode',
      'GuestKernelNotDistinct',
    ]);
  });

  test('a gVisor marker without a kernel that differs from the node is not enough; an unread node kernel is unknown', () => {
    const marker = { ...gv, osrelease: '4.19.0-gvisor', procVersion: gvisorVersion('4.19.0-gvisor') };
    expect(classifyIsolation('gvisor', marker).map((x) => [x.reason, x.verdict])).toEqual([
      ['KernelIdentityUnknown', 'unknown'],
      ['GvisorKernel', 'proven'],
    ]);
  });
});

/** The probe end to end: the facts it records, and the state they settle to. */
describe('case gvisor-evidence-markers: isolationEvidence records each signal verbatim', () => {
  const target: RuntimeTarget = {
    kind: 'sandboxd',
    transport: 'direct',
    namespace: 'dev-sandboxes',
    sandbox: 'p',
    pod: 'p',
    podIP: '127.10.1.4',
    restPort: 8080,
    grpcPort: 9090,
  };
  const deps = (inside: Inside, nodeKernel: string, handler = 'runsc') =>
    ({
      cluster: {
        runtimeClass: async (n: string) => ({ kind: 'ok', value: { metadata: { name: n }, handler } }),
        nodes: async () => ({
          kind: 'ok',
          value: [
            {
              metadata: { name: 'node-a' },
              status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kernelVersion: nodeKernel } },
            },
          ],
        }),
      } as unknown as Cluster,
      runtime: insideRuntime(inside),
      facts: releaseFacts('v0.5.6'),
      plan: { probeTimeoutMs: 2_000, templates: [] },
    }) as unknown as ProbeDeps;
  const pod = podView({
    metadata: { name: 'p', namespace: 'dev-sandboxes' },
    spec: { runtimeClassName: 'gvisor', nodeName: 'node-a' },
  });

  async function run(inside: Inside, nodeKernel: string, handler?: string) {
    const d = deps(inside, nodeKernel, handler);
    // The steps below verified as the runtime-class probe records them when the class exists, fits and is used.
    const rc = new Facts('runtime-class/gvisor')
      .proven('discovered', 'RuntimeClass gvisor', 'RuntimeClassFound', 'exists')
      .proven('compatible', 'RuntimeClass gvisor', 'NodesMatchRuntimeClass', 'node-a')
      .proven('configured', 'RuntimeClass gvisor', 'TemplateUsesRuntimeClass', 'used');
    await isolationEvidence(d, rc, 'gvisor', pod, target, true);
    const facts = rc.list.filter((e) => e.step === 'verified');
    return { facts, asked: (d.runtime as ReturnType<typeof insideRuntime>).asked, state: settle(rc.list) };
  }

  test('p1 in an image with neither cat nor dmesg: the files are read with sh, and the class is verified', async () => {
    const { facts, asked, state } = await run(
      {
        files: { '/proc/sys/kernel/osrelease': '4.19.0-gvisor', '/proc/version': gvisorVersion('4.19.0-gvisor') },
        tools: ['sh'],
      },
      NODE_KERNEL,
    );
    expect(facts.map((e) => [e.reason, e.verdict, e.field, e.value])).toEqual([
      ['RanUnderRuntimeClass', 'proven', 'spec.runtimeClassName', 'gvisor'],
      [
        'KernelDiffersFromNode',
        'proven',
        '/proc/sys/kernel/osrelease vs Node.status.nodeInfo.kernelVersion',
        '4.19.0-gvisor',
      ],
      ['GvisorKernel', 'proven', '/proc/version', gvisorVersion('4.19.0-gvisor')],
    ]);
    expect(asked.filter((a) => a.at(-1) === '/proc/version').map((a) => a[0])).toEqual(['cat', 'head', 'sh']);
    expect(state.state).toBe('verified');
  });

  test('p3: class gvisor, handler runsc mapped to runc: HostKernel, not verified', async () => {
    const { facts, state } = await run(
      {
        files: { '/proc/sys/kernel/osrelease': NODE_KERNEL, '/proc/version': HOST_VERSION },
        tools: ['cat', 'dmesg'],
        dmesg: `[    0.000000] Linux version ${NODE_KERNEL}\n`,
      },
      NODE_KERNEL,
    );
    expect(facts.filter((e) => e.verdict !== 'proven').map((e) => [e.reason, e.value])).toEqual([
      ['HostKernel', NODE_KERNEL],
      ['NotGvisorKernel', HOST_VERSION],
    ]);
    expect({ state: state.state, next: state.nextReason }).toEqual({ state: 'configured', next: 'HostKernel' });
  });

  test('an image with no reader at all: the kernel identity is unknown and nothing is verified', async () => {
    const { facts, state } = await run({ files: { '/proc/version': gvisorVersion('4.4.0') }, tools: [] }, NODE_KERNEL);
    expect(facts.slice(1).map((e) => [e.reason, e.verdict])).toEqual([
      ['KernelIdentityUnknown', 'unknown'],
      ['NotGvisorKernel', 'missing'],
    ]);
    expect(state.state).not.toBe('verified');
  });
});
