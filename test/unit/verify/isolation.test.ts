/**
 * The gVisor isolation check (src/verify/probes/isolation.ts). The runtime here is a FAKE RuntimeProber: no runtime that
 * can run on this machine or the test cluster (sandboxd runs natively there, no runsc) answers `dmesg` with a gVisor
 * Sentry's kernel log, and an ordinary kernel whose log mentions gVisor paths is equally out of reach. The outputs below
 * are written for these tests in the shape each kernel prints (boot line at time 0 for gVisor; `Linux version` at time 0
 * for a host kernel), not copied from a real machine.
 */
import { gvisorBootLine, promisedIsolation, readInside } from '../../../src/verify/probes/isolation.js';
import type { ExecOutput, RuntimeCall, RuntimeProber, RuntimeTarget } from '../../../src/verify/runtime-prober.js';
import { insideRuntime } from './fake-inside.js';
import { RUNSC_DMESG } from './fixtures.js';

/** An ordinary Linux kernel's log on a node that has gVisor installed: it names gvisor, but the kernel is the host's. */
const HOST_DMESG_MENTIONING_GVISOR = [
  '[    0.000000] Linux version 6.8.0-45-generic (buildd@builder) (gcc 13.2.0) #45-Ubuntu SMP PREEMPT_DYNAMIC',
  '[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/sda1 ro',
  '[ 8123.558102] overlayfs: upper fs does not support tmpfile (path /var/lib/gvisor/overlay)',
  '[ 9120.004417] audit: apparmor="DENIED" operation="open" profile="runsc-sandbox" comm="runsc-gofer" (gVisor gofer)',
  '',
].join('\n');

const target: RuntimeTarget = {
  kind: 'sandboxd',
  transport: 'direct',
  namespace: 'dev-sandboxes',
  sandbox: 'shell-x1',
  pod: 'shell-x1',
  podIP: '127.10.0.7',
  restPort: 8080,
  grpcPort: 9090,
};

/** A runtime that answers only `dmesg`, with `out`; records the argv it was asked. */
function fakeRuntime(out: ExecOutput | RuntimeCall<ExecOutput>): RuntimeProber & { asked: string[][] } {
  const asked: string[][] = [];
  const never = async (): Promise<RuntimeCall<string>> => ({
    kind: 'error',
    durationMs: 0,
    detail: 'not part of this test',
  });
  return {
    asked,
    health: never,
    fileRoundTrip: never,
    readFile: never,
    async execute(t, argv) {
      asked.push([...argv]);
      expect(t).toBe(target);
      if ('kind' in out) return out;
      return argv.join(' ') === 'dmesg'
        ? { kind: 'answered', value: out, durationMs: 12 }
        : { kind: 'error', durationMs: 0, detail: `unexpected ${argv.join(' ')}` };
    },
    async close() {},
  };
}

describe('gvisorBootLine', () => {
  test('a Sentry log: the boot line at time 0 is found, with or without the syslog priority prefix', () => {
    expect(gvisorBootLine(RUNSC_DMESG)).toBe('[    0.000000] Starting gVisor...');
    expect(gvisorBootLine(`\n<6>[    0.000000] Starting gVisor...\n<6>[    0.512000] Ready!\n`)).toBe(
      '<6>[    0.000000] Starting gVisor...',
    );
  });

  test('a host kernel whose log mentions gvisor paths and processes is not gVisor (a bare /gvisor/i would say it is)', () => {
    expect(/gvisor/i.test(HOST_DMESG_MENTIONING_GVISOR)).toBe(true);
    expect(gvisorBootLine(HOST_DMESG_MENTIONING_GVISOR)).toBeUndefined();
  });

  test('the boot line written later into a host log (e.g. /dev/kmsg) has a non-zero time or is not first: refused', () => {
    expect(gvisorBootLine(`${HOST_DMESG_MENTIONING_GVISOR}[ 9533.120004] Starting gVisor...\n`)).toBeUndefined();
    // A wrapped ring buffer whose oldest surviving line is such a forged line.
    expect(gvisorBootLine('[12034.000000] Starting gVisor...\n[12034.100000] Ready!\n')).toBeUndefined();
    expect(gvisorBootLine('')).toBeUndefined();
  });
});

describe('readInside', () => {
  test('tries the readers in order and returns the first non-empty answer, trimmed', async () => {
    const runtime = insideRuntime({ files: { '/proc/version': 'Linux version 4.4.0 #1' }, tools: ['head'] });
    expect(await readInside(runtime, target, '/proc/version', 2_000)).toBe('Linux version 4.4.0 #1');
    expect(runtime.asked.map((a) => a[0])).toEqual(['cat', 'head']);
  });

  test('a file missing everywhere, or no reader at all: undefined after every reader was tried', async () => {
    const none = insideRuntime({ files: {}, tools: ['cat', 'sh'] });
    expect(await readInside(none, target, '/proc/sys/kernel/osrelease', 2_000)).toBeUndefined();
    expect(none.asked.map((a) => a[0])).toEqual(['cat', 'head', 'sh', 'python3']);
  });

  test('a runtime that does not answer stops the readers at once', async () => {
    const hung = fakeRuntime({ kind: 'timeout', durationMs: 2_000, detail: 'Execute deadline exceeded after 2000 ms' });
    expect(await readInside(hung, target, '/proc/version', 2_000)).toBeUndefined();
    expect(hung.asked).toHaveLength(1);
  });
});

describe('promisedIsolation', () => {
  test('the declared preset wins over the handler; undeclared, the handler, then the name decides', () => {
    expect(promisedIsolation('sandboxed', 'runc', 'gvisor')).toBe('gvisor');
    expect(promisedIsolation('gvisor', 'runsc', undefined)).toBe('gvisor');
    expect(promisedIsolation('kata-qemu', 'kata-qemu', undefined)).toBe('kata');
    // a class named gvisor (or kata) whose handler is runc still promises that isolation: it must be proven
    expect(promisedIsolation('gvisor', 'runc', undefined)).toBe('gvisor');
    expect(promisedIsolation('my-Kata', 'runc', undefined)).toBe('kata');
    expect(promisedIsolation('standin', 'runc', undefined)).toBe('none');
  });
});
