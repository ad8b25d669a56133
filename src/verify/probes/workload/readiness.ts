/** What waiting for a probe object ended with: a Sandbox Ready at its current generation, or why not. */
import type { ClaimView, SandboxView } from '../../../adapter/kubernetes/views.js';
import type { WaitFaults } from '../../../adapter/kubernetes/cluster.js';
import type { ReadinessReason } from '../../reasons.js';

export type Readiness =
  | {
      readonly ready: true;
      readonly why: string;
      readonly sandbox: SandboxView;
      readonly claim?: ClaimView;
      readonly waitedMs: number;
    }
  | {
      readonly ready: false;
      readonly reason: ReadinessReason;
      readonly why: string;
      readonly sandbox?: SandboxView;
      readonly claim?: ClaimView;
      readonly waitedMs: number;
    };

/** Ended waiting: a terminal phase is Ready, Failed or Finished. */
export function settled(phase: string): boolean {
  return phase === 'Ready' || phase === 'Failed' || phase === 'Finished';
}

/** A note for the evidence of a wait that had to reconnect (case client-node-watch-reconnect): `; watch reconnected 2 time(s), 1 × 410`, else empty. */
export function reconnected(w: WaitFaults): string {
  if (w.reconnects === 0) return '';
  return `; watch reconnected ${w.reconnects} time(s)${w.gone ? `, ${w.gone} × 410 Gone` : ''}${w.errors ? `, ${w.errors} error(s)` : ''}`;
}
