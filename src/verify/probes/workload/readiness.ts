/** What waiting for a probe object ended with: a Sandbox Ready at its current generation, or why not. */
import type { ClaimView, SandboxView } from '../../../adapter/kubernetes/views.js';
import type { ReadinessReason } from '../../reasons.js';

export type Readiness =
  | { readonly ready: true; readonly why: string; readonly sandbox: SandboxView; readonly claim?: ClaimView; readonly waitedMs: number }
  | { readonly ready: false; readonly reason: ReadinessReason; readonly why: string; readonly sandbox?: SandboxView; readonly claim?: ClaimView; readonly waitedMs: number };

/** Ended waiting: a terminal phase is Ready, Failed or Finished. */
export function settled(phase: string): boolean {
  return phase === 'Ready' || phase === 'Failed' || phase === 'Finished';
}
