/**
 * When the workload probe skips a template: read from the runtime-class probe's evidence for a declared class (no API
 * call is made on this path, so deps carry the plan only). The cluster path (an undeclared class checked by the probe
 * itself, and the whole run creating nothing) is in test/cluster/verify/verify-runtime-class.test.ts.
 */
import { fact, type Evidence } from '../../../src/verify/evidence.js';
import type { ProbeDeps } from '../../../src/verify/probes/common.js';
import { unschedulableClass } from '../../../src/verify/probes/workload/class-gate.js';
import type { ProbeRun } from '../../../src/verify/runner.js';

const deps = { plan: { runtimeClasses: ['kata-qemu'] } } as unknown as ProbeDeps;
const run = (evidence: Evidence[]): ProbeRun => ({
  signal: new AbortController().signal,
  deadlineMs: 1000,
  evidence,
  note: () => undefined,
});
const rc = (
  step: Evidence['step'],
  verdict: Evidence['verdict'],
  reason: Evidence['reason'],
  value?: string,
  capability = 'runtime-class/kata-qemu',
) =>
  fact({
    capability: capability as Evidence['capability'],
    step,
    verdict,
    reason,
    subject: 'RuntimeClass kata-qemu',
    message: 'm',
    ...(value ? { value } : {}),
  });

describe('unschedulableClass', () => {
  test('no Ready node matches its scheduling: skipped, naming the nodes', async () => {
    const ev = [
      rc('discovered', 'proven', 'RuntimeClassFound'),
      rc(
        'compatible',
        'missing',
        'NoNodeMatchesRuntimeClass',
        'node-a lacks label katacontainers.io/kata-runtime=true',
      ),
    ];
    const blocked = await unschedulableClass(deps, 'kata-qemu', run(ev));
    expect(blocked?.reason).toBe('NoNodeMatchesRuntimeClass');
    expect(blocked?.why).toContain('node-a lacks label katacontainers.io/kata-runtime=true');
  });

  test('the class does not exist: skipped', async () => {
    expect(
      (await unschedulableClass(deps, 'kata-qemu', run([rc('discovered', 'missing', 'RuntimeClassNotFound')])))?.reason,
    ).toBe('RuntimeClassNotFound');
  });

  test("a class that could not be read (403) or that fits a node is tried; another class's evidence does not count", async () => {
    expect(
      await unschedulableClass(deps, 'kata-qemu', run([rc('discovered', 'unknown', 'Forbidden')])),
    ).toBeUndefined();
    expect(
      await unschedulableClass(
        deps,
        'kata-qemu',
        run([rc('compatible', 'proven', 'NodesMatchRuntimeClass', 'node-b')]),
      ),
    ).toBeUndefined();
    expect(
      await unschedulableClass(
        deps,
        'kata-qemu',
        run([rc('compatible', 'missing', 'NoNodeMatchesRuntimeClass', 'node-a not Ready', 'runtime-class/gvisor')]),
      ),
    ).toBeUndefined();
    expect(
      await unschedulableClass(deps, 'kata-qemu', run([rc('configured', 'missing', 'NoTemplateUsesRuntimeClass')])),
    ).toBeUndefined();
  });
});
