/**
 * Isolation seen from inside a sandbox (cases gvisor-runtimeclass-unschedulable, gvisor-evidence-markers): the
 * `verified` step of `runtime-class/<name>` rests on independent signals, each recorded verbatim as its own fact:
 *
 * 1. the pod's `runtimeClassName` and the class's handler;
 * 2. the kernel identity inside (`/proc/sys/kernel/osrelease`, `/proc/version`) against the node's
 *    `status.nodeInfo.kernelVersion` — for gVisor and Kata it must differ, and when it equals the node's the workload
 *    runs on the host kernel (`HostKernel`);
 * 3. a runtime marker, any one of several: gVisor's fixed synthetic build line in `/proc/version`
 *    (`#1 SMP Sun Jan 10 15:06:54 PST 2016`, `pkg/sentry/kernel/version/version.go` of the pinned gVisor), `gvisor` in
 *    the release string (`4.19.0-gvisor` from 2026 on), or the Sentry's boot line first in its kernel log (`dmesg`).
 *    No single version string decides: older runsc answers `4.4.0`, and a genuine 4.4.0 host kernel does too — but that
 *    one equals its node's kernel and prints a real build line (compiler, builder).
 *
 * gVisor is `verified` only with 1 + 2 + 3; Kata with 1 + 2 plus a guest kernel build line that is not gVisor's.
 * Files are read through the runtime's command API with the first reader the image has (`cat`, `head`, `sh`'s `read`,
 * `python3`), so an image without one tool still answers; `dmesg` is only one marker among three.
 */
import type { PodView } from '../../adapter/kubernetes/views.js';
import type { Step, Verdict } from '../evidence.js';
import type { EvidenceReason } from '../reasons.js';
import type { ExecOutput, RuntimeCall, RuntimeProber, RuntimeTarget } from '../runtime-prober.js';
import { reads, shared, type Facts, type ProbeDeps } from './common.js';

/** The gVisor boot line: optional syslog priority, time 0, `Starting gVisor...`. */
const GVISOR_BOOT_LINE = /^(?:<\d+>)?\[\s*0\.0+\]\s+Starting gVisor\.\.\.\s*$/;

/** gVisor's `/proc/version`: `Linux version <release> ` + its fixed build line, nothing else (no builder, no compiler). */
const GVISOR_VERSION_LINE = /^Linux version \S+ #1 SMP Sun Jan 10 15:06:54 PST 2016$/;

/** A real Linux kernel's `/proc/version`: release, then the builder and compiler in parentheses. */
const LINUX_BUILD_LINE = /^Linux version \S+ \(.+\)/;

/**
 * The gVisor boot line when `dmesg` output is a gVisor Sentry's log, else undefined. Pure.
 * @param dmesg stdout of `dmesg` run inside the sandbox (no options; util-linux or busybox, priority prefix or not).
 * @returns the first non-empty line, trimmed, when it is `[    0.000000] Starting gVisor...`; undefined otherwise
 *   (including an ordinary kernel log that merely mentions gVisor).
 */
export function gvisorBootLine(dmesg: string): string | undefined {
  const first = dmesg
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return first !== undefined && GVISOR_BOOT_LINE.test(first) ? first : undefined;
}

/** What was read inside the sandbox and about its node, verbatim (trimmed); undefined = not readable. */
export interface IsolationSignals {
  readonly runtimeClassName: string;
  readonly handler: string;
  /** `status.nodeInfo.kernelVersion` of the pod's node. */
  readonly nodeKernel?: string;
  /** `/proc/sys/kernel/osrelease` inside (gVisor may lack it: google/gvisor#12487). */
  readonly osrelease?: string;
  /** `/proc/version` inside. */
  readonly procVersion?: string;
  /** stdout of `dmesg` inside, when the image has it. */
  readonly dmesg?: string;
}

/** One fact of the classification: what {@link isolationEvidence} records. */
export interface IsolationFinding {
  readonly verdict: Verdict;
  readonly reason: EvidenceReason;
  readonly field: string;
  /** The signal, verbatim. */
  readonly value?: string;
  readonly message: string;
}

/** The release inside: osrelease, else the second word of `/proc/version`. Pure. */
export function insideRelease(s: Pick<IsolationSignals, 'osrelease' | 'procVersion'>): string | undefined {
  if (s.osrelease) return s.osrelease;
  const m = /^Linux version (\S+)/.exec(s.procVersion ?? '');
  return m?.[1];
}

/** The first gVisor marker seen: which file (or `dmesg`) and the line, verbatim. Pure. */
export function gvisorMarker(s: IsolationSignals): { field: string; value: string } | undefined {
  if (s.procVersion && GVISOR_VERSION_LINE.test(s.procVersion)) return { field: '/proc/version', value: s.procVersion };
  if (s.osrelease && /gvisor/i.test(s.osrelease)) return { field: '/proc/sys/kernel/osrelease', value: s.osrelease };
  const boot = s.dmesg === undefined ? undefined : gvisorBootLine(s.dmesg);
  return boot === undefined ? undefined : { field: 'Execute(dmesg)', value: boot };
}

/**
 * Signal 2: the kernel inside against the node's. `HostKernel` when they are equal (the class is requested but the
 * workload runs on the host kernel), `KernelDiffersFromNode` when they differ, `KernelIdentityUnknown` when either
 * side could not be read. Pure.
 */
export function kernelFinding(s: IsolationSignals): IsolationFinding {
  const inside = insideRelease(s);
  const field = '/proc/sys/kernel/osrelease vs Node.status.nodeInfo.kernelVersion';
  if (inside === undefined || !s.nodeKernel)
    return {
      verdict: 'unknown',
      reason: 'KernelIdentityUnknown',
      field,
      ...(inside ? { value: inside } : {}),
      message: `kernel identity not compared: inside "${inside ?? '?'}" (/proc/version "${s.procVersion ?? '?'}"), node kernelVersion "${s.nodeKernel ?? '?'}"`,
    };
  if (inside === s.nodeKernel)
    return {
      verdict: 'missing',
      reason: 'HostKernel',
      field,
      value: inside,
      message: `RuntimeClass ${s.runtimeClassName} (handler ${s.handler}) requested but the workload runs on the host kernel: release ${inside} inside equals the node's kernelVersion (/proc/version "${s.procVersion ?? '?'}")`,
    };
  return {
    verdict: 'proven',
    reason: 'KernelDiffersFromNode',
    field,
    value: inside,
    message: `kernel inside ${inside} differs from the node's kernelVersion ${s.nodeKernel} (/proc/version "${s.procVersion ?? '?'}")`,
  };
}

/**
 * Signals 2 and 3 for what the class promises: gVisor needs the kernel to differ from the node's and one gVisor
 * marker; Kata needs it to differ and a real Linux build line in `/proc/version` that is not gVisor's (a guest kernel).
 * Pure: the table-driven tests of case gvisor-evidence-markers call it with each fixture.
 */
export function classifyIsolation(promised: 'gvisor' | 'kata', s: IsolationSignals): IsolationFinding[] {
  const kernel = kernelFinding(s);
  if (promised === 'gvisor') {
    const marker = gvisorMarker(s);
    const seen = `/proc/version "${s.procVersion ?? '?'}", osrelease "${s.osrelease ?? '?'}", first dmesg line "${firstLine(s.dmesg) ?? '?'}"`;
    return [
      kernel,
      marker
        ? {
            verdict: 'proven',
            reason: 'GvisorKernel',
            field: marker.field,
            value: marker.value,
            message: `gVisor marker inside the sandbox: ${marker.field} reads "${marker.value}"`,
          }
        : {
            verdict: 'missing',
            reason: 'NotGvisorKernel',
            field: '/proc/version, /proc/sys/kernel/osrelease, dmesg',
            ...(s.procVersion ? { value: s.procVersion } : {}),
            message: `isolation not proven: no gVisor marker inside the sandbox (${seen})`,
          },
    ];
  }
  const guest = s.procVersion !== undefined && LINUX_BUILD_LINE.test(s.procVersion);
  return [
    kernel,
    kernel.verdict === 'proven' && guest
      ? {
          verdict: 'proven',
          reason: 'GuestKernelDiffers',
          field: '/proc/version',
          value: s.procVersion!,
          message: `guest kernel ${kernel.value ?? '?'} with its own build line differs from node kernel ${s.nodeKernel ?? '?'} (VM isolation)`,
        }
      : {
          verdict: 'missing',
          reason: 'GuestKernelNotDistinct',
          field: '/proc/version',
          ...(s.procVersion ? { value: s.procVersion } : {}),
          message: `isolation not proven: guest kernel "${insideRelease(s) ?? '?'}" (/proc/version "${s.procVersion ?? '?'}") vs node kernel "${s.nodeKernel ?? '?'}"`,
        },
  ];
}

function firstLine(text: string | undefined): string | undefined {
  return text
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
}

/** Readers tried in order for one file: the first the image has wins (no single tool is assumed). */
const READERS: ReadonlyArray<(path: string) => readonly string[]> = [
  (p) => ['cat', p],
  (p) => ['head', '-c', '4096', p],
  (p) => ['sh', '-c', 'while IFS= read -r l; do printf "%s\\n" "$l"; done < "$1"', 'sh', p],
  (p) => ['python3', '-c', 'import sys; sys.stdout.write(open(sys.argv[1]).read())', p],
];

/**
 * Reads one small text file inside the sandbox through the runtime's command API, trying each reader until one
 * exits 0; the content trimmed, or undefined when none could. Stops early when the runtime does not answer at all.
 */
export async function readInside(
  runtime: RuntimeProber,
  target: RuntimeTarget,
  path: string,
  deadlineMs: number,
): Promise<string | undefined> {
  for (const reader of READERS) {
    const r: RuntimeCall<ExecOutput> = await runtime.execute(target, reader(path), deadlineMs);
    if (r.kind === 'answered' && r.value.exitCode === 0 && r.value.stdout.trim() !== '') return r.value.stdout.trim();
    if (r.kind === 'timeout' || r.kind === 'silent') return undefined;
  }
  return undefined;
}

/** Gathers the signals for a pod: the files inside, `dmesg` (gVisor only), the node's kernelVersion. Never throws. */
async function gatherSignals(
  deps: ProbeDeps,
  target: RuntimeTarget,
  base: Pick<IsolationSignals, 'runtimeClassName' | 'handler'>,
  nodeName: string | undefined,
  promised: 'gvisor' | 'kata',
): Promise<IsolationSignals> {
  const deadline = deps.plan.probeTimeoutMs;
  const osrelease = await readInside(deps.runtime, target, '/proc/sys/kernel/osrelease', deadline);
  const procVersion = await readInside(deps.runtime, target, '/proc/version', deadline);
  let dmesg: string | undefined;
  if (promised === 'gvisor') {
    const r = await deps.runtime.execute(target, ['dmesg'], deadline);
    if (r.kind === 'answered' && r.value.exitCode === 0) dmesg = r.value.stdout;
  }
  const nodes = nodeName ? await reads(deps).nodes() : undefined;
  const nodeKernel =
    nodes?.kind === 'ok' ? nodes.value.find((n) => n.meta.name === nodeName)?.kernelVersion : undefined;
  return {
    ...base,
    ...(nodeKernel ? { nodeKernel } : {}),
    ...(osrelease ? { osrelease } : {}),
    ...(procVersion ? { procVersion } : {}),
    ...(dmesg !== undefined ? { dmesg } : {}),
  };
}

/**
 * The isolation RuntimeClass `name` promises (pure): the environment's declared preset, else what its handler or its
 * name says (`runsc` / a name with `gvisor`: gVisor; `kata*` / a name with `kata`: a VM), else none. The name counts
 * because a class named `gvisor` whose handler runs runc must not pass as "no extra isolation claimed".
 */
export function promisedIsolation(
  name: string,
  handler: string,
  declared: 'gvisor' | 'kata' | undefined,
): 'gvisor' | 'kata' | 'none' {
  if (declared !== undefined) return declared;
  if (handler === 'runsc') return 'gvisor';
  if (handler.startsWith('kata')) return 'kata';
  if (/gvisor/i.test(name)) return 'gvisor';
  if (/kata/i.test(name)) return 'kata';
  return 'none';
}

/**
 * The `verified` evidence of RuntimeClass `name` for the probe pod: the pod ran under it (signal 1: class and handler),
 * then, by what the class promises ({@link promisedIsolation}), the kernel comparison and the runtime marker
 * ({@link classifyIsolation}) as separate facts; none: no extra isolation claimed (proven once the runtime answered).
 * `runtimeOk` false = the runtime never answered: isolation stays `unknown`. Never throws.
 */
export async function isolationEvidence(
  deps: ProbeDeps,
  rc: Facts,
  name: string,
  pod: PodView | undefined,
  target: RuntimeTarget,
  runtimeOk: boolean,
): Promise<void> {
  const subject = `pod ${target.namespace}/${target.pod}`;
  const spec = { runtimeClassName: pod?.runtimeClassName, nodeName: pod?.nodeName };
  if (spec.runtimeClassName !== name) {
    rc.add(
      'verified',
      'missing',
      subject,
      'RuntimeClassNotApplied',
      `pod runs with runtimeClassName ${spec.runtimeClassName ?? 'unset'}, not ${name}`,
    );
    return;
  }
  const handler = await shared(deps).runtimeClass(name);
  const h = handler.kind === 'ok' && handler.value ? handler.value.handler : '';
  rc.proven(
    'verified',
    subject,
    'RanUnderRuntimeClass',
    `pod ran under RuntimeClass ${name} (handler ${h || '?'}) on node ${spec.nodeName ?? '?'}`,
    { field: 'spec.runtimeClassName', value: name },
  );
  if (!runtimeOk) {
    rc.add('verified', 'unknown', subject, 'IsolationNotChecked', 'isolation not checked: the runtime did not answer');
    return;
  }
  const promised = promisedIsolation(name, h, deps.plan.runtimeClassIsolation?.[name]);
  if (promised === 'none') {
    rc.proven(
      'verified',
      subject,
      'NoExtraIsolation',
      `handler ${h || '?'} claims no extra isolation; the pod ran and its runtime answered`,
    );
    return;
  }
  const signals = await gatherSignals(deps, target, { runtimeClassName: name, handler: h }, spec.nodeName, promised);
  const step: Step = 'verified';
  for (const x of classifyIsolation(promised, signals))
    rc.add(step, x.verdict, subject, x.reason, x.message, {
      field: x.field,
      ...(x.value !== undefined ? { value: x.value } : {}),
      ...(x.verdict === 'proven' || x.verdict === 'unknown'
        ? {}
        : { missingTest: `isolation/${name}: a pod under handler ${h || '?'} whose kernel is ${promised}'s` }),
    });
}
