/**
 * What a workload probe leaves for the probes that run after it on the same probe sandbox (the suspend-resume round
 * trip): the Ready sandbox it made and whether its runtime answered. One instance per verify run, filled in by
 * template, read only after that template's workload probe finished (the runner orders them).
 */
import type { ProbeSandbox } from './sandbox-ready.js';

export interface HandedSandbox {
  readonly sandbox: ProbeSandbox;
  /** runtime-exec's sample held over the client's transport. */
  readonly runtimeOk: boolean;
}

export class ProbeSandboxes {
  private readonly byTemplate = new Map<string, HandedSandbox>();

  set(namespace: string, template: string, handed: HandedSandbox): void {
    this.byTemplate.set(`${namespace}/${template}`, handed);
  }

  get(namespace: string, template: string): HandedSandbox | undefined {
    return this.byTemplate.get(`${namespace}/${template}`);
  }
}
