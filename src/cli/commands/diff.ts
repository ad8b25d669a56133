/**
 * `agentplane diff [BASE] [HEAD]`: compare two synthesized directories or git refs of this repository (synthesized on
 * the fly), or, with `--live`, the cluster against HEAD through server-side dry-run. The answer like diff(1): 0 no
 * change, 1 changes; a failure exits with the code every command gives it (src/cli/exit-codes.ts: 2 usage, 3 release,
 * 4 invalid manifests, 7 cluster, 8 credentials, 9 forbidden), also when the cluster refused some objects.
 */
import { Option, type Command } from 'commander';
// The diff layer's modules, not its barrel: the renderers (and picocolors) load only for table and markdown output,
// the live reader only with --live.
import { diffManifests, type ManifestSet } from '../../diff/compare.js';
import type { UnreadableObject } from '../../diff/live.js';
import { schemaLookupFromRelease } from '../../diff/schema-lookup.js';
import { scopeLookupFromRelease } from '../../diff/scope.js';
import { readManifestSource, useParseCache } from '../../diff/sources.js';
import { defaultCacheDir } from '../../releases/cache.js';
import { outputFormat, outputOption, renderWith, type OutputChoice } from '../output.js';
import { RELEASE_CHOICES, releaseTag } from '../release-choices.js';
import { globalOptions, kubeOptions } from '../global-options.js';
import { COMMAND_SUMMARIES } from '../summaries.js';

interface DiffFlags {
  live?: boolean;
  release?: string;
  synthCommand?: string;
  output: OutputChoice;
}

/** Registers `diff` on the program. */
export function registerDiff(program: Command): void {
  program
    .command('diff')
    .description(COMMAND_SUMMARIES['diff'])
    .argument('[BASE]', 'synthesized directory or git ref (omit with --live)')
    .argument('[HEAD]', 'synthesized directory or git ref', 'dist')
    .option('--live', 'BASE is the cluster: compare live objects with a server-side dry run of HEAD')
    .addOption(
      new Option(
        '--release <tag>',
        `also take CRD defaults from this pinned release, ${RELEASE_CHOICES.join(', ')} (default: the CRDs found in BASE and HEAD)`,
      ).argParser(releaseTag),
    )
    .option(
      '--synth-command <argv>',
      'command synthesizing a git ref in its worktree, {out} = output dir, e.g. "npx --no-install agentplane synth environment.ts --out {out}" (default, in an AgentPlane checkout only: node bin/agentplane.js synth --all-examples --out {out})',
    )
    .addOption(outputOption('table', { textAlias: true }))
    .addHelpText(
      'after',
      '\nExit codes: 0 no change, 1 changes (like diff(1)); a failure has the code it has for every command (agentplane --help): 2 usage, 3 unknown or unusable release, 4 unparsable manifests, 7 cluster unreachable, 8 credentials refused, 9 forbidden. With --live, objects the cluster refused to read or dry-run are named on stderr, the others still compared and shown, and the exit is 8 (credentials), 9 (forbidden), 7 (a read failed), else 4 (the refused objects cannot be applied as they are: 422, namespace or kind missing).',
    )
    .action(async (baseArg: string | undefined, headArg: string, flags: DiffFlags, cmd: Command) => {
      if (flags.live !== true && baseArg === undefined)
        cmd.error('error: give BASE and HEAD, or --live', { exitCode: 2 });
      try {
        // Large documents (CRDs) parsed once per cache: a later diff reads their values as JSON (useParseCache).
        useParseCache(globalOptions(cmd).cacheDir ?? defaultCacheDir());
        // One document cache for both sides: a document unchanged between BASE and HEAD is parsed once (DocumentCache).
        const gitOpts = {
          documents: new Map(),
          ...(flags.synthCommand !== undefined
            ? { synthCommand: flags.synthCommand.split(/\s+/).filter(Boolean) }
            : {}),
        };
        let base: ManifestSet;
        let head: ManifestSet;
        let unreadable: readonly UnreadableObject[] = [];
        if (flags.live === true) {
          const desired = await readManifestSource(baseArg ?? headArg, gitOpts);
          // Loaded only here: client-node is most of the start-up time of a local diff.
          const { kubeLiveReader } = await import('../live-reader.js');
          const { readLiveSets } = await import('../../diff/live.js');
          ({ base, head, unreadable } = await readLiveSets(desired, kubeLiveReader(kubeOptions(cmd))));
        } else {
          [base, head] = await Promise.all([
            readManifestSource(baseArg!, gitOpts),
            readManifestSource(headArg, gitOpts),
          ]);
        }
        // The pinned release's CRDs add defaults and scopes for kinds whose CRD is in neither set.
        const release =
          flags.release !== undefined
            ? await (await import('../../releases/load.js')).loadRelease(flags.release, globalOptions(cmd))
            : undefined;
        const report = diffManifests(
          base,
          head,
          release ? { schemaFor: schemaLookupFromRelease(release), scopeFor: scopeLookupFromRelease(release) } : {},
        );
        const format = outputFormat(flags.output);
        const render = format === 'table' || format === 'markdown' ? await import('../../diff/render.js') : undefined;
        process.stdout.write(
          renderWith(format, () => report, {
            table: () => render!.renderText(report),
            markdown: () => render!.renderMarkdown(report),
          }),
        );
        for (const u of unreadable)
          process.stderr.write(`error [LiveObjectRefused]: not compared: ${u.message}\nhint: ${u.hint}\n`);
        // Objects left out make the answer incomplete: an error, after showing what could be compared.
        process.exitCode =
          unreadable.length > 0
            ? (await import('../errors.js')).refusedReadsExitCode(unreadable.map((u) => u.category))
            : report.objects.length === 0
              ? 0
              : 1;
      } catch (err) {
        // a failure has the code every command gives it; the error document's modules load only for a failure
        const { reportFailure } = await import('../error-document.js');
        reportFailure(err, { command: 'diff', output: flags.output });
      }
    });
}
