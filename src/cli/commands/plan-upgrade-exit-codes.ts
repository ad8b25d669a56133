/**
 * Exit codes of `agentplane plan-upgrade`, one per verdict, so scripts can branch on the answer. They sit above the
 * CLI-wide table (src/cli/exit-codes.ts, 0-9), which still gives the code of an error (2 usage, 3 release, 7 cluster,
 * 8 unauthenticated, 9 forbidden): a verdict code never means an error and an error code never means a verdict.
 */
import type { UpgradeVerdict } from '../../releases/upgrade-plan.js';

export const PLAN_EXIT_CODES: Readonly<Record<UpgradeVerdict, number>> = {
  safe: 0,
  'needs-migration': 10,
  blocked: 11,
  unknown: 12,
};

/** The exit-code lines of `plan-upgrade --help` (docs/guides/upgrades.md says the same). */
export function planExitCodeHelp(): string {
  return [
    'Exit codes:',
    `  ${PLAN_EXIT_CODES.safe}   safe: nothing to migrate, read from live status.storedVersions`,
    `  ${PLAN_EXIT_CODES['needs-migration']}  needs-migration: follow the path (storage rewrite, field changes, claims whose pools are missing)`,
    `  ${PLAN_EXIT_CODES.blocked}  blocked: the target cannot serve what is stored, or a blocking defect applies (see --accept)`,
    `  ${PLAN_EXIT_CODES.unknown}  unknown: the verdict needs live state that was not read (--from alone, no --kubeconfig, --context or $KUBECONFIG); never "safe" from assumptions`,
    '  2-9 an error, the same code as for every command (`agentplane --help`: 2 usage or unusable kubeconfig, 3 unknown or unusable release, 7 cluster unreachable, 8 credentials refused, 9 forbidden)',
    'The json output carries the same number as "exitCode".',
  ].join('\n');
}
