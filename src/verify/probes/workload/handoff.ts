/**
 * The one hand-off of the probe sandboxes the workload probes made to the probes that run after them on the same
 * sandboxes: the network enforcement test (its dials run inside them) and the suspend-resume round trip. One instance
 * per verify run, filled in by template, read only after the workload probes it needs finished (the runner orders them).
 */
import type { PodView } from '../../../adapter/kubernetes/views.js';
import type { RuntimeTarget } from '../../runtime-prober.js';
import type { ProbeSandbox } from './sandbox-ready.js';

export interface HandedSandbox {
  readonly sandbox: ProbeSandbox;
  /** runtime-exec's sample held over the client's transport. */
  readonly runtimeOk: boolean;
}

/** A Ready probe sandbox whose runtime answered every nonce over the client's transport: later probes may run commands in it. */
export interface ReadyProbeSandbox {
  readonly template: string;
  readonly pod: PodView;
  readonly target: RuntimeTarget;
}

export class ProbeSandboxes {
  private readonly byTemplate = new Map<string, HandedSandbox>();

  set(namespace: string, template: string, handed: HandedSandbox): void {
    this.byTemplate.set(`${namespace}/${template}`, handed);
  }

  get(namespace: string, template: string): HandedSandbox | undefined {
    return this.byTemplate.get(`${namespace}/${template}`);
  }

  /** The sandboxes whose runtime answered and whose pod was read, in the order they were handed over. */
  ready(): ReadyProbeSandbox[] {
    const out: ReadyProbeSandbox[] = [];
    for (const [key, { sandbox, runtimeOk }] of this.byTemplate)
      if (runtimeOk && sandbox.pod)
        out.push({ template: key.slice(key.indexOf('/') + 1), pod: sandbox.pod, target: sandbox.target });
    return out;
  }
}
