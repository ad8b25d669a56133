/**
 * Process exit codes of the `agentplane` CLI, one per kind of outcome, so scripts and CI can branch on them. A kind of
 * failure has the same code (and the same error-document reason) in every command: an unreachable cluster is 7 for
 * verify, diff --live, compat, plan-upgrade and migrate-storage alike; an unknown release 3 for synth, mirror pull,
 * plan-upgrade and diff --release. Only answers are command-specific (diff and compat 1, plan-upgrade 10-12,
 * migrate-storage 13-14). The table is printed at the end of `agentplane --help` and in docs/reference/exit-codes.md.
 */
export const ExitCode = {
  /** Everything asked for was done (for `verify`: every required capability reached its required state). */
  ok: 0,
  /** An unexpected internal error (a bug in AgentPlane): please report it with the printed stack. */
  internal: 1,
  /** Bad command line: unknown flag or command, missing argument, a value of the wrong form, a named file or directory that does not exist, a kubeconfig or context that cannot be used. */
  usage: 2,
  /** A pinned release could not be used: unknown tag (in a module, `--to`, `--from`, `--release`, `mirror pull`), checksum mismatch, missing file, unreachable source (a mirror directory set by AGENTPLANE_MIRROR that does not exist). */
  release: 3,
  /** The environment is invalid: bad construct props, schema violations, duplicate or unpinned objects, an environment module or descriptor that exists but cannot be used. */
  invalid: 4,
  /** The environment and `agentplane.lock.json` disagree (re-run with `--update-lock` after review). */
  lockMismatch: 5,
  /** Verification ran but a required capability did not reach its required state. */
  notVerified: 6,
  /** The cluster could not be reached: connection refused, DNS, TLS, or no answer before the deadline; or it failed reads a command needs (diff --live, compat). */
  cluster: 7,
  /** The cluster did not accept the credentials (HTTP 401), or the kubeconfig's exec plugin produced none. */
  unauthenticated: 8,
  /** The identity was refused (HTTP 403) a read or write the command needs: for `verify`, a required capability stayed below its state because the verifier was not allowed to look (grant the VerifierAccess rights). */
  forbidden: 9,
  /** `verify --wait-ready`: the environment was not ready (CRDs, controller, pool members) before the wait's deadline; nothing was probed. */
  notReady: 15,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit-code table shown in `--help`. */
export function exitCodeHelp(): string {
  const lines: Array<[number, string]> = [
    [ExitCode.ok, 'success (verify: every required capability reached its required state)'],
    [ExitCode.internal, 'internal error (a bug: please report it with the printed stack)'],
    [
      ExitCode.usage,
      'usage error: unknown command or flag, missing or invalid argument, a named file or directory that does not exist, an unusable kubeconfig or context',
    ],
    [
      ExitCode.release,
      'release error: unknown release (also --to, --from, --release, mirror pull), checksum mismatch, missing file, unreachable mirror/upstream (incl. a missing $AGENTPLANE_MIRROR)',
    ],
    [
      ExitCode.invalid,
      'invalid input: construct props, CRD schema violations, duplicates, unpinned images, a module, environment.json or manifest that exists but is unusable',
    ],
    [ExitCode.lockMismatch, 'environment and agentplane.lock.json disagree (review, then --update-lock)'],
    [ExitCode.notVerified, 'verification finished but a required capability is below its required state'],
    [
      ExitCode.cluster,
      'cluster unreachable (connection, DNS, TLS) or no answer in time, or it failed reads the answer needs (diff --live, compat)',
    ],
    [ExitCode.unauthenticated, 'credentials refused (HTTP 401) or not produced by the kubeconfig exec plugin'],
    [
      ExitCode.forbidden,
      'refused (HTTP 403): a read or write the command needs (verify: something a required capability needs; grant the VerifierAccess rights)',
    ],
    [
      ExitCode.notReady,
      'verify --wait-ready: CRDs, controller or warm pools not ready before the deadline (nothing probed)',
    ],
  ];
  return [
    'Exit codes, the same failure the same code in every command (answers: diff 1 changes, compat 1 not covered, plan-upgrade 10/11/12 per verdict, migrate-storage 13/14 when it stops; see their --help):',
    ...lines.map(([code, text]) => `  ${String(code).padEnd(3)} ${text}`),
  ].join('\n');
}
