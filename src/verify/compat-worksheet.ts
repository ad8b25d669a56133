/**
 * The compatibility worksheet of one cluster (`agentplane compat` renders it): for each of the nine parts of the
 * compatibility tuple (docs/architecture.md, "Vocabulary") the value read live (the tuple reader), what the pinned
 * release of the environment was built for (`go.mod@tag`, `dev/tools/release@tag`), and whether the project's own
 * cluster tests ran with that value for that release (the tested-combinations matrix, `test/compat/matrix.json`,
 * written by `scripts/gen-compat-matrix.ts`).
 * Like is compared with like: the controller by where it runs (in the cluster, or out of it as the test harness's local
 * process) and its release; a part the environment does not deploy (no router, no templates) is `not deployed`, not
 * a coverage gap. Reads the cluster refused are returned beside the rows, never hidden in them.
 */
import { z } from 'zod';
import { Cluster } from '../adapter/kubernetes/cluster.js';
import type { KubeClient } from '../adapter/kubernetes/client.js';
import type { AdapterError } from '../adapter/types.js';
import { BUILT_FOR, TUPLE_KEYS, type TuplePart } from '../model/compatibility.js';
import { AgentPlaneError, exitCategoryOfFailure, type ExitCategory } from '../model/errors.js';
import { RELEASE_TAGS } from '../model/releases.js';
import { CLIENT_SDKS, releaseFacts, type ReleaseTag } from '../releases/index.js';
import { recordFailedReads, type FailedRead } from './failed-reads.js';
import type { VerifyPlan } from './plan.js';
import { readTuple } from './tuple-reader.js';
import type { CompatibilityTuple } from './tuple.js';

/** One tested combination: the tuple a cluster test run saw and how the run ended. */
export const MatrixRowSchema = z.object({
  release: z.string(),
  tuple: z.record(z.string(), z.string()),
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  testFiles: z.array(z.string()),
  ranAt: z.string(),
  /** What the run proved live on that tuple (e.g. `runtime-class/gvisor on real pods`), each with the test file proving it. */
  proves: z.array(z.object({ what: z.string(), test: z.string() })).optional(),
});

/** The tested-combinations matrix: every cluster test run's tuple and outcome, and the script that wrote it. */
export const MatrixSchema = z.object({ generatedBy: z.string(), rows: z.array(MatrixRowSchema) });

/** A parsed tested-combinations matrix ({@link MatrixSchema}). */
export type Matrix = z.infer<typeof MatrixSchema>;

/** One part of the worksheet. */
export interface WorksheetRow {
  /** The tuple part, e.g. `kubernetes`, `controller`. */
  readonly part: TuplePart;
  /** The value read live (`unknown` when it could not be read, `not deployed` when the environment has none). */
  readonly live: string;
  /** Where the live value was read, or why it is unknown. */
  readonly source: string;
  /** What the pinned release was built for, or declares for this part. */
  readonly builtFor: string;
  /** `yes` (a tested run had this value for this release), `no`, `n/a` (the value is not comparable), or `not deployed` (the environment has none). */
  readonly tested: 'yes' | 'no' | 'n/a' | 'not deployed';
}

/** Live values meaning the environment deploys no such part (tuple-reader.ts: no router, no templates). */
const NOT_DEPLOYED: ReadonlySet<string> = new Set(['not deployed', 'none']);

/**
 * The comparable form of a tuple value: Kubernetes by minor version; the controller by placement and release version
 * (`in-cluster v0.5.6`; the harness's `... (local process)` and a declared `out-of-cluster` controller, assumed to be of
 * the pinned `release`, are `out-of-cluster v0.5.6`); router and runtime by kind + version; others as read.
 */
function comparable(part: string, value: string, release: ReleaseTag): string | undefined {
  if (value === 'unknown' || value === '') return undefined;
  if (part === 'kubernetes') return /^v?(\d+\.\d+)/.exec(value)?.[1];
  // The application's declared client is compared by SDK, version and mode; AgentPlane as its own client is n/a.
  if (part === 'clientSdk') return CLIENT_SDKS.some((sdk) => value.startsWith(`${sdk} `)) ? value : undefined;
  const version = /v\d+\.\d+\.\d+/.exec(value)?.[0];
  if (part === 'controller') {
    const outside = value === 'out-of-cluster' || value.endsWith('(local process)');
    return `${outside ? 'out-of-cluster' : 'in-cluster'} ${version ?? (outside ? release : value)}`;
  }
  if (part === 'runtimeServer' || part === 'router') {
    const kind = /sandboxd|python-runtime|sandbox-router/.exec(value)?.[0];
    return kind !== undefined && version !== undefined ? `${kind} ${version}` : value;
  }
  return value;
}

/**
 * The container runtime part lists every distinct runtime of the nodes (`containerd://2.2.9, kwok-0.8.0`): it is
 * covered when each of them ran in some passing row, on its own or beside others.
 */
function runtimesCovered(live: string, rows: Matrix['rows']): 'yes' | 'no' {
  const tested = new Set(rows.flatMap((r) => (r.tuple['containerRuntime'] ?? '').split(', ')));
  return live.split(', ').every((v) => tested.has(v)) ? 'yes' : 'no';
}

/**
 * Joins a tuple (read live, or any other), the release facts and the matrix into one row per tuple part, in
 * {@link TUPLE_KEYS} order. Only the matrix's passing runs of `release` count as tested.
 */
export function worksheetRows(tuple: CompatibilityTuple, release: ReleaseTag, matrix: Matrix): WorksheetRow[] {
  const facts = releaseFacts(release);
  const rows = matrix.rows.filter((r) => r.release === release && r.failed === 0);
  return TUPLE_KEYS.map((part) => {
    const entry = tuple[part];
    const builtFor =
      part === 'crdRelease' || part === 'extensions'
        ? release
        : part === 'controller'
          ? facts.controllerImage
          : part === 'clientSdk'
            ? comparable(part, entry.value, release) !== undefined
              ? "the client's own source (facts: src/releases/client-sdk.ts)"
              : `supports ${RELEASE_TAGS.join(', ')}`
            : (BUILT_FOR[release][part] ?? 'not pinned upstream (any)');
    if ((part === 'router' || part === 'runtimeServer') && NOT_DEPLOYED.has(entry.value)) {
      return { part, live: entry.value, source: entry.source, builtFor, tested: 'not deployed' as const };
    }
    const live =
      part === 'controller' && entry.value === 'out-of-cluster'
        ? `out-of-cluster (assumed ${release}, the pinned release)`
        : entry.value;
    const want = comparable(part, entry.value, release);
    const tested =
      want === undefined
        ? 'n/a'
        : part === 'containerRuntime'
          ? runtimesCovered(want, rows)
          : rows.some((r) => comparable(part, r.tuple[part] ?? '', release) === want)
            ? 'yes'
            : 'no';
    return { part, live, source: entry.source, builtFor, tested };
  });
}

/** Failure categories of the first read (`/version`) that make the cluster unusable for every other read. */
const UNUSABLE: ReadonlySet<string> = new Set(['unreachable', 'timeout', 'unauthenticated']);

/** The cluster could not be used at all (unreachable, no answer in time, credentials refused): there is no worksheet. */
export class ClusterUnusableError extends AgentPlaneError {
  readonly reason = 'ClusterUnusable';
  readonly exitCategory: ExitCategory;
  readonly hint: string;
  /** The adapter's category (`unreachable`, `timeout`, `unauthenticated`). */
  readonly category: string;
  constructor(error: AdapterError) {
    super(`cannot use the cluster for the worksheet: ${error.message}`);
    this.category = error.category;
    this.exitCategory = exitCategoryOfFailure(error.category, 'cluster');
    this.hint =
      error.hint ??
      'check that the cluster is running and that the kubeconfig server address and credentials are right';
  }
}

/** How {@link compatWorksheet} reads the cluster and what it compares with. */
export interface CompatWorksheetOptions {
  /** The tested-combinations matrix to compare with (e.g. `MatrixSchema.parse` of the package's `test/compat/matrix.json`). */
  readonly matrix: Matrix;
  /**
   * Where the controller runs: `deployment` (read from its Deployment in the cluster) or `external` (out of the
   * cluster, of the pinned release).
   * @default 'deployment'
   */
  readonly controller?: 'deployment' | 'external';
}

/** The worksheet of one cluster for one environment. */
export interface CompatWorksheet {
  readonly environment: string;
  readonly release: ReleaseTag;
  /** The tuple as read live. */
  readonly tuple: CompatibilityTuple;
  /** One row per tuple part, in {@link TUPLE_KEYS} order. */
  readonly rows: readonly WorksheetRow[];
  /** Every cluster call that failed, sorted by call: when there is one, some parts are unknown and the worksheet is incomplete. */
  readonly failedReads: readonly FailedRead[];
  /** The parts a failed read left unknown, in {@link TUPLE_KEYS} order. */
  readonly unknownParts: readonly TuplePart[];
  /** How many runs of this release the matrix holds (passing or not). */
  readonly testedCombinations: number;
}

/**
 * Reads the compatibility tuple of the cluster `client` connects to for the environment of `plan` and joins it into
 * the worksheet ({@link worksheetRows}). Reads the cluster refused leave their parts unknown and are listed in
 * `failedReads`.
 * @throws ClusterUnusableError when the first read (`/version`) finds the cluster unreachable, silent or refusing the
 * credentials.
 */
export async function compatWorksheet(
  client: KubeClient,
  plan: VerifyPlan,
  options: CompatWorksheetOptions,
): Promise<CompatWorksheet> {
  const { cluster, failed } = recordFailedReads(new Cluster(client));
  // A cluster that cannot be used at all gives no worksheet: every live part would be unknown.
  const reach = await cluster.version();
  if (reach.kind === 'failed' && UNUSABLE.has(reach.error.category)) throw new ClusterUnusableError(reach.error);
  const tuple = await readTuple(cluster, plan, options.controller ?? 'deployment');
  return {
    environment: plan.environment,
    release: plan.release,
    tuple,
    rows: worksheetRows(tuple, plan.release, options.matrix),
    failedReads: [...failed],
    unknownParts: TUPLE_KEYS.filter((k) => tuple[k].readFailed !== undefined),
    testedCombinations: options.matrix.rows.filter((r) => r.release === plan.release).length,
  };
}
