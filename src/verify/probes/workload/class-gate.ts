/**
 * Whether a template's RuntimeClass can run a pod at all. A class that does not exist, or that no Ready node matches,
 * would only make the probe object wait out the ready timeout, so the workload probe creates nothing then.
 */
import type { Evidence } from '../../evidence.js';
import type { ProbeRun } from '../../runner.js';
import type { ProbeDeps } from '../common.js';
import { runtimeClassProbe } from '../runtime-class.js';

/** Why no pod can run under a RuntimeClass: the runtime-class probe's reason, and the sentence saying so. */
export interface ClassBlock {
  readonly reason: 'RuntimeClassNotFound' | 'NoNodeMatchesRuntimeClass';
  readonly why: string;
}

/**
 * Why no pod can run under RuntimeClass `name`, or undefined when nothing says so. Read from the runtime-class probe's
 * evidence (runtime-class.ts) by reason: `RuntimeClassNotFound`, or `NoNodeMatchesRuntimeClass` (whose `value` lists
 * each node and why). A class the plan does not declare has no such probe, so the same check runs here. A class that
 * could not be read (403, timeout) is `unknown` there, not a reason to skip.
 */
export async function unschedulableClass(
  deps: ProbeDeps,
  name: string,
  ctx: ProbeRun,
): Promise<ClassBlock | undefined> {
  const capability = `runtime-class/${name}`;
  const evidence = deps.plan.runtimeClasses.includes(name)
    ? ctx.evidence
    : await runtimeClassProbe(deps, name).run(ctx);
  const mine = (e: Evidence): boolean => e.capability === capability && e.verdict === 'missing';
  if (evidence.some((e) => mine(e) && e.reason === 'RuntimeClassNotFound'))
    return { reason: 'RuntimeClassNotFound', why: `RuntimeClass ${name} does not exist` };
  const noNode = evidence.find((e) => mine(e) && e.reason === 'NoNodeMatchesRuntimeClass');
  if (noNode === undefined) return undefined;
  return {
    reason: 'NoNodeMatchesRuntimeClass',
    why: `RuntimeClass ${name} has no Ready node matching its scheduling (${noNode.value ?? 'no nodes'})`,
  };
}
