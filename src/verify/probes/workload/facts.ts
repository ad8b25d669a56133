/**
 * The evidence recorders of one workload probe: one per capability it covers. The optional ones exist only when the
 * template declares a warm pool (`wp`), the release has the extensions (`ext`) or the template names a RuntimeClass (`rc`).
 */
import { isBetaFamily } from '../../../model/releases.js';
import type { ReleaseFamily } from '../../../releases/index.js';
import type { Evidence } from '../../evidence.js';
import type { TemplatePlan, WarmPoolPlan } from '../../plan.js';
import { Facts } from '../common.js';

export interface WorkloadFacts {
  readonly template: Facts;
  readonly exec: Facts;
  readonly files: Facts;
  readonly api: Facts;
  readonly ctrl: Facts;
  readonly conv: Facts;
  readonly router: Facts;
  readonly wp?: Facts;
  readonly ext?: Facts;
  readonly rc?: Facts;
}

export function workloadFacts(
  family: ReleaseFamily,
  template: TemplatePlan,
  pool: WarmPoolPlan | undefined,
): WorkloadFacts {
  return {
    template: new Facts(`template/${template.namespace}/${template.name}`),
    exec: new Facts('runtime-exec'),
    files: new Facts('runtime-files'),
    api: new Facts('sandbox-api'),
    ctrl: new Facts('controller'),
    conv: new Facts('conversion'),
    router: new Facts('router'),
    ...(pool ? { wp: new Facts(`warm-pool/${pool.namespace}/${pool.name}`) } : {}),
    ...(isBetaFamily(family) ? { ext: new Facts('extensions-api') } : {}),
    ...(template.runtimeClassName ? { rc: new Facts(`runtime-class/${template.runtimeClassName}`) } : {}),
  };
}

/** Every piece of evidence recorded, in capability order. */
export function allEvidence(f: WorkloadFacts): Evidence[] {
  return [f.template, f.exec, f.files, f.api, f.ctrl, f.conv, f.router, f.wp, f.ext, f.rc].flatMap(
    (x) => x?.list ?? [],
  );
}

/** The recorders whose `verified` step needs a Ready probe sandbox (all but conversion and router). */
export function needingReady(f: WorkloadFacts): Facts[] {
  return [f.template, f.exec, f.files, f.api, f.ctrl, f.wp, f.ext, f.rc].filter((x): x is Facts => x !== undefined);
}
