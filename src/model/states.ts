/** Support states of a capability (docs/architecture.md, "Vocabulary"). */

/** The ordered support states, lowest first; a requirement is always one of these. */
export const SUPPORT_STATES = ['absent', 'discovered', 'compatible', 'configured', 'verified'] as const;

/** An ordered state: what a requirement names (`failed` and `unsupported` are outcomes, never requirements). */
export type RequiredState = (typeof SUPPORT_STATES)[number];

/** Every support state; `failed` (a probe contradicted it) and `unsupported` (the release/cluster cannot offer it) stand outside the order. */
export type SupportState = RequiredState | 'failed' | 'unsupported';
