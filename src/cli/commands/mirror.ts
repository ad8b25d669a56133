/**
 * `agentplane mirror pull <release...> --to DIR`: fill a release mirror (`DIR/<tag>/<path>`) with the pinned files of
 * each release, every byte checked against its pinned sha256, so CI without network can run `--mirror DIR` (or
 * `AGENTPLANE_MIRROR=DIR`). The files come from `--mirror` / the cache / upstream, like synth's.
 */
import { Command } from 'commander';
import { pullRelease } from '../../releases/index.js';
import { directoryOrNew } from '../arg-parsers.js';
import { globalOptions } from '../global-options.js';
import { outputOption, renderReport, type OutputFormat } from '../output.js';
import { RELEASE_CHOICES, releaseTag } from '../release-choices.js';
import { COMMAND_SUMMARIES } from '../summaries.js';

/** Registers `mirror` (with its one subcommand, `pull`) on the program. */
export function registerMirror(program: Command): void {
  const mirror = program.command('mirror').description(COMMAND_SUMMARIES['mirror']);
  mirror
    .command('pull')
    .description('fetch and verify the pinned files of each release into DIR/<release>/, the layout --mirror reads')
    .argument('<release...>', `pinned releases (${RELEASE_CHOICES.join(', ')})`)
    .requiredOption('--to <dir>', 'mirror directory to fill (created when missing)', directoryOrNew)
    .addOption(outputOption('table'))
    .addHelpText(
      'after',
      '\nExample (air-gapped CI):\n  agentplane mirror pull v0.5.6 --to vendor/agent-sandbox\n  AGENTPLANE_MIRROR=vendor/agent-sandbox agentplane synth environment.ts\n' +
        'Without GitHub, from a copy of another mirror (read only, every byte checked):\n  agentplane --mirror /media/agent-sandbox mirror pull v0.5.6 --to vendor/agent-sandbox',
    )
    .action(async (releases: string[], flags: { to: string; output: OutputFormat }, cmd: Command) => {
      // an unknown release is exit 3 (UnknownRelease), as everywhere; checked before anything is pulled
      releases.forEach((r) => releaseTag(r));
      const rows: Array<[string, string, number, number]> = [];
      const data: Array<Record<string, unknown>> = [];
      for (const tag of [...new Set(releases)]) {
        process.stderr.write(`pulling ${tag} ...\n`);
        const pulled = await pullRelease(tag, flags.to, globalOptions(cmd));
        rows.push([pulled.tag, pulled.commit, pulled.files, pulled.bytes]);
        data.push({ ...pulled, directory: `${flags.to}/${pulled.tag}` });
      }
      process.stdout.write(
        renderReport(flags.output, {
          title: `Mirror ${flags.to}`,
          data: { mirror: flags.to, releases: data },
          columns: ['release', 'commit', 'files', 'bytes'],
          rows,
        }),
      );
    });
}
