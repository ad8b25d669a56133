/**
 * `agentplane compat [--env DIR] [--kubeconfig FILE]`: the compatibility worksheet of one cluster. For each of the nine
 * parts of the compatibility tuple (docs/architecture.md, "Vocabulary"): the value read live (verify's tuple reader), what the pinned
 * release of the environment was built for (`go.mod@tag`, `dev/tools/release@tag`), and whether the
 * project's own cluster tests ran with that value for that release (the committed, generated matrix
 * `test/compat/matrix.json`, written by `scripts/gen-compat-matrix.ts`). Output: `-o table` (default, as for every
 * command), markdown, json or yaml.
 * Like is compared with like: the controller by where it runs (in the cluster, or out of it as the test harness's local
 * process) and its release; a part the environment does not deploy (no router, no templates) is `not deployed`, not
 * a coverage gap.
 * Exit codes: 0 every comparable deployed part was covered by a tested combination, 1 some part was not; a failure
 * has the code every command gives it (src/cli/exit-codes.ts): a cluster that could not be used exits 7 (unreachable,
 * no answer in time) or 8 (credentials refused), with the error on stderr and no worksheet; reads it refused give the
 * worksheet of what could be read, each failed read named on stderr, and exit 9 (forbidden), 8 or 7.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { KubeClient } from '../../adapter/kubernetes/client.js';
import { CLIENT_SDKS, releaseFacts, type ReleaseTag } from '../../releases/index.js';
import { Cluster } from '../../adapter/kubernetes/cluster.js';
import { BUILT_FOR, TUPLE_KEYS } from '../../model/compatibility.js';
import { AgentPlaneError, exitCategoryOfFailure, type ExitCategory } from '../../model/errors.js';
import { dataFile } from '../../model/package-info.js';
import { RELEASE_TAGS } from '../../model/releases.js';
import { planFromDescriptor, readEnvironment, type CompatibilityTuple } from '../../verify/index.js';
import { readTuple } from '../../verify/tuple-reader.js';
import type { AdapterError } from '../../adapter/types.js';
import { defaultEnvDir, environmentPath, existingFile } from '../arg-parsers.js';
import { reportFailure } from '../error-document.js';
import { refusedReadsExitCode } from '../errors.js';
import { UsageError } from '../usage-error.js';
import { recordFailedReads, type FailedRead } from '../failed-reads.js';
import { outputOption, renderReport, renderWith, type OutputFormat } from '../output.js';
import { COMMAND_SUMMARIES } from '../summaries.js';
import { kubeOptions } from '../global-options.js';

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
export const MatrixSchema = z.object({ generatedBy: z.string(), rows: z.array(MatrixRowSchema) });
export type Matrix = z.infer<typeof MatrixSchema>;

interface WorksheetRow {
  readonly part: string;
  readonly live: string;
  readonly source: string;
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

/** Joins the live tuple, the release facts and the matrix into worksheet rows. */
export function worksheet(tuple: CompatibilityTuple, release: ReleaseTag, matrix: Matrix): WorksheetRow[] {
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

/** The cluster could not be used at all (unreachable, no answer in time, credentials refused): no worksheet is printed. */
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

const REFUSED_HINT =
  'grant that identity the reads named above (the VerifierAccess construct grants every read compat makes) or use a --context that has them';

/** stderr text for a worksheet with failed reads: the parts they left unknown, each failed read, and their hints. */
function incompleteMessage(tuple: CompatibilityTuple, failed: readonly FailedRead[]): string {
  const unknown = TUPLE_KEYS.filter((k) => tuple[k].readFailed !== undefined);
  // Refused reads share one hint (the adapter's names one grant per read); other failures keep their own.
  const refused = failed.some((f) => f.error.category === 'forbidden') ? [REFUSED_HINT] : [];
  const hints = [
    ...refused,
    ...new Set(
      failed
        .filter((f) => f.error.category !== 'forbidden')
        .map((f) => f.error.hint)
        .filter((h): h is string => h !== undefined && h.length > 0),
    ),
  ];
  return [
    `error [ClusterReadsFailed]: the worksheet is incomplete: ${failed.length} cluster read(s) failed${unknown.length > 0 ? `, leaving ${unknown.join(', ')} unknown` : ''}:`,
    ...failed.map((f) => `  ${f.call}: ${f.error.message}`),
    `hint: ${hints.length > 0 ? hints.join('; ') : 'run compat with an identity that may read these objects'}`,
  ].join('\n');
}

function readMatrix(file: URL | string): Matrix {
  // No matrix is no answer: every part would read "not tested" although nothing was looked up.
  if (!existsSync(file))
    throw new UsageError(
      `no tested-combinations matrix at ${file instanceof URL ? fileURLToPath(file) : file}`,
      'pass --matrix FILE (a test/compat/matrix.json written by scripts/gen-compat-matrix.ts); an installed package ships its own',
    );
  return MatrixSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

function markdown(release: string, env: string, rows: readonly WorksheetRow[], matrix: Matrix): string {
  const md = (s: string): string => s.replace(/\|/g, '\\|');
  const out = [
    `### Compatibility worksheet: environment \`${env}\` (release ${release})`,
    '',
    '| part | live | read from | built for | covered by our tests |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) out.push(`| ${r.part} | ${md(r.live)} | ${md(r.source)} | ${md(r.builtFor)} | ${r.tested} |`);
  out.push(
    '',
    `Tested combinations for ${release}: ${matrix.rows.filter((r) => r.release === release).length} (matrix generated by ${matrix.generatedBy}).`,
  );
  return `${out.join('\n')}\n`;
}

/** The worksheet as a terminal table, with the same columns and footer as {@link markdown}. */
function table(release: string, env: string, rows: readonly WorksheetRow[], matrix: Matrix): string {
  return renderReport('table', {
    title: `Compatibility worksheet: environment ${env} (release ${release})`,
    data: rows,
    columns: ['part', 'live', 'read from', 'built for', 'covered by our tests'],
    rows: rows.map((r) => [r.part, r.live, r.source, r.builtFor, r.tested]),
    notes: [
      `Tested combinations for ${release}: ${matrix.rows.filter((r) => r.release === release).length} (matrix generated by ${matrix.generatedBy}).`,
    ],
  });
}

/** Registers `compat` on the program. */
export function registerCompat(program: Command): void {
  program
    .command('compat')
    .description(COMMAND_SUMMARIES['compat'])
    .option(
      '--env <dir>',
      'synthesized environment directory holding environment.json (default: the only dist/<env>)',
      environmentPath,
    )
    .option(
      '--matrix <file>',
      'tested-combinations matrix (default: test/compat/matrix.json of this package)',
      existingFile,
    )
    .addOption(
      new Option('--controller <mode>', 'where the controller runs')
        .choices(['deployment', 'external'])
        .default('deployment'),
    )
    .addOption(outputOption('table'))
    .addHelpText(
      'after',
      '\nExit codes: 0 every comparable deployed part is covered by a tested combination, 1 some part is not; a failure has the code it has for every command (agentplane --help): 2 usage or unusable kubeconfig, 3 release, 4 invalid environment.json, 7 cluster unreachable, 8 credentials refused, 9 forbidden. Reads the cluster refused leave parts unknown, which is no answer: each is named on stderr and the exit is 9 (forbidden), 8 or 7.',
    )
    .action(
      async (
        flags: {
          env?: string;
          matrix?: string;
          controller: 'deployment' | 'external';
          output: OutputFormat;
        },
        cmd: Command,
      ) => {
        try {
          const { descriptor, file } = readEnvironment(flags.env ?? defaultEnvDir());
          const plan = planFromDescriptor(descriptor, path.dirname(file), { transport: 'port-forward' });
          const client = KubeClient.connect(kubeOptions(cmd));
          const { cluster, failed } = recordFailedReads(new Cluster(client));
          // A cluster that cannot be used at all gives no worksheet: every live part would be unknown.
          const reach = await cluster.version();
          if (reach.kind === 'failed' && UNUSABLE.has(reach.error.category))
            throw new ClusterUnusableError(reach.error);
          const tuple = await readTuple(cluster, plan, flags.controller);
          const matrix = readMatrix(flags.matrix ?? dataFile('test/compat/matrix.json'));
          const rows = worksheet(tuple, plan.release, matrix);
          const failedReads = failed.map((f) => ({
            call: f.call,
            category: f.error.category,
            message: f.error.message,
          }));
          const data = {
            environment: plan.environment,
            release: plan.release,
            context: client.context,
            rows,
            failedReads,
          };
          process.stdout.write(
            renderWith(flags.output, () => data, {
              table: () => table(plan.release, plan.environment, rows, matrix),
              markdown: () => markdown(plan.release, plan.environment, rows, matrix),
            }),
          );
          if (failed.length > 0) {
            // Parts left unknown by a failed call are no answer: naming each failed read, never 0 or 1.
            process.stderr.write(`${incompleteMessage(tuple, failed)}\n`);
            process.exitCode = refusedReadsExitCode(failed.map((f) => f.error.category));
            return;
          }
          process.exitCode = rows.some((r) => r.tested === 'no') ? 1 : 0;
        } catch (err) {
          // a failure has the code every command gives it (unreachable 7, unusable kubeconfig 2, ...)
          reportFailure(err, { command: 'compat', output: flags.output });
        }
      },
    );
}
