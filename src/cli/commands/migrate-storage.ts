/**
 * `agentplane migrate-storage [--apply] [--resume MARKER] [--kubeconfig FILE] [--context NAME]`: rewrite every Agent
 * Sandbox object at its CRD's storage version, then prune `status.storedVersions` kind by kind once a re-list confirms
 * every object was rewritten (src/adapter/kubernetes/storage-migration.ts). Dry-run unless --apply. Progress on
 * stderr; the result on stdout (`-o table|json|yaml|markdown`). Exit codes: migrate-storage-exit-codes.ts.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { StorageMigrationResult } from '../../adapter/kubernetes/storage-migration.js';
import { SUPPORTED_RELEASES, releaseFacts } from '../../releases/supported.js';
import { kubeOptions } from '../global-options.js';
import { reportFailure } from '../error-document.js';
import { outputFormat, outputOption, renderReport, type OutputChoice, type Report } from '../output.js';
import { progressSink } from '../progress.js';
import { COMMAND_SUMMARIES } from '../summaries.js';
import { MIGRATE_EXIT_CODES, migrateExitCode, migrateExitCodeHelp } from './migrate-storage-exit-codes.js';

interface MigrateFlags {
  apply?: boolean;
  resume?: string;
  qps?: number;
  concurrency?: number;
  output: OutputChoice;
}

const ISO_MARKER = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function marker(text: string): string {
  if (!ISO_MARKER.test(text))
    throw new InvalidArgumentError(
      `"${text}" is not a marker: give the one a run printed, e.g. 2026-12-05T05:30:00.000Z`,
    );
  return text;
}

function positive(text: string): number {
  const n = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || n < 1 || n > 10_000)
    throw new InvalidArgumentError(`"${text}" is not a whole number from 1 to 10000`);
  return n;
}

/** The result as a table: one row per kind. */
export function migrationReport(r: StorageMigrationResult): Report {
  const dry = r.mode === 'dry-run';
  return {
    title: dry ? 'migrate-storage (dry-run: nothing written; --apply writes)' : 'migrate-storage',
    data: r,
    columns: [
      'Kind',
      'Storage',
      'Objects',
      dry ? 'Would rewrite' : 'Rewritten',
      'Skipped',
      'Gone',
      'storedVersions',
      'Outcome',
    ],
    rows: r.kinds.map((k) => [
      k.kind,
      k.storageVersion ?? '-',
      k.listed,
      k.rewritten,
      k.skipped,
      k.gone,
      dry
        ? `[${k.storedVersionsBefore.join(', ')}]${k.wouldPrune === true ? ` -> [${k.storageVersion ?? ''}]` : ''}`
        : `[${k.storedVersionsBefore.join(', ')}] -> [${k.storedVersionsAfter.join(', ')}]`,
      k.outcome,
    ]),
    notes: [
      `marker ${r.marker} (resume with --apply --resume ${r.marker})`,
      `${r.rewritten} object(s) ${dry ? 'to rewrite' : 'rewritten'} in ${(r.elapsedMs / 1000).toFixed(1)} s${dry ? '' : ` (${r.objectsPerSecond}/s)`}; ${r.source}`,
    ],
  };
}

/** Registers `migrate-storage` on the program. */
export function registerMigrateStorage(program: Command): void {
  program
    .command('migrate-storage')
    .description(COMMAND_SUMMARIES['migrate-storage'])
    .option('--apply', 'write (default: a dry-run that only lists and counts)')
    .option(
      '--resume <marker>',
      'the marker of an interrupted run: objects carrying it (or a later one) are skipped',
      marker,
    )
    .addOption(new Option('--qps <n>', 'API requests per second (client-side limit)').argParser(positive).default(100))
    .addOption(new Option('--concurrency <n>', 'writes in flight').argParser(positive).default(8))
    .addOption(outputOption('table'))
    .addHelpText('after', `\n${migrateExitCodeHelp()}`)
    .action(async (flags: MigrateFlags, cmd: Command) => {
      let exitCode: number | undefined;
      try {
        const [{ KubeClient }, { kubeStorageApi, migrateStorage, storageKinds, StorageMigrationError }] =
          await Promise.all([
            import('../../adapter/kubernetes/client.js'),
            import('../../adapter/kubernetes/storage-migration.js'),
          ]);
        const client = KubeClient.connect({
          ...kubeOptions(cmd),
          qps: flags.qps ?? 100,
          burst: 2 * (flags.qps ?? 100),
        });
        // CRD names, groups and plurals are the same in every supported release
        const kinds = storageKinds(releaseFacts(SUPPORTED_RELEASES[SUPPORTED_RELEASES.length - 1]!));
        const format = outputFormat(flags.output);
        try {
          const result = await migrateStorage(kubeStorageApi(client), kinds, {
            apply: flags.apply === true,
            ...(flags.resume !== undefined ? { marker: flags.resume } : {}),
            concurrency: flags.concurrency ?? 8,
            progress: progressSink(process.stderr),
          });
          process.stdout.write(
            renderReport(format, { ...migrationReport(result), data: { ...result, exitCode: MIGRATE_EXIT_CODES.ok } }),
          );
          process.exitCode = MIGRATE_EXIT_CODES.ok;
        } catch (err) {
          if (err instanceof StorageMigrationError) {
            exitCode = migrateExitCode(err.reason, err.failure?.category);
            // what was done before the stop, for people, on stderr (stdout stays empty on failure, as for every
            // command); json/yaml carry it in the error document's details
            if ((format === 'table' || format === 'markdown') && err.result.kinds.length > 0)
              process.stderr.write(renderReport(format, migrationReport(err.result)));
          }
          throw err;
        }
      } catch (err) {
        reportFailure(err, {
          command: 'migrate-storage',
          output: flags.output,
          ...(exitCode !== undefined ? { exitCode } : {}),
        });
      }
    });
}
