/**
 * `agentplane plan-upgrade --to TAG [--from TAG | --kubeconfig FILE] [--accept DEFECT]`: classify a move between
 * pinned releases (upgrade or downgrade) from the pinned CRD schemas and, with a cluster, from live
 * `status.storedVersions`, v1alpha1 claims, warm pools and warm-started claims. Exit codes: plan-upgrade-exit-codes.ts.
 * Imports name modules, not layer barrels, and the cluster client is loaded only with --kubeconfig/--context, so an
 * offline plan loads neither client-node nor the validators.
 */
import { Option, type Command } from 'commander';
import { renderPlanMarkdown, renderPlanText } from '../../diff/render-plan.js';
import { loadRelease } from '../../releases/load.js';
import { releaseFacts } from '../../releases/supported.js';
import { BLOCKING_DEFECTS, intermediateTags, planUpgrade, type LiveUpgradeState } from '../../releases/upgrade-plan.js';
import { existingFile } from '../arg-parsers.js';
import { outputFormat, outputOption, renderWith, type OutputChoice } from '../output.js';
import { RELEASE_CHOICES } from '../release-choices.js';
import { UsageError } from '../errors.js';
import { reportFailure } from '../error-document.js';
import { globalOptions } from '../global-options.js';
import { COMMAND_SUMMARIES } from '../summaries.js';
import { PLAN_EXIT_CODES, planExitCodeHelp } from './plan-upgrade-exit-codes.js';

interface PlanFlags {
  to: string;
  from?: string;
  kubeconfig?: string;
  context?: string;
  accept?: string[];
  output: OutputChoice;
}

/** Registers `plan-upgrade` on the program. */
export function registerPlanUpgrade(program: Command): void {
  program
    .command('plan-upgrade')
    .description(COMMAND_SUMMARIES['plan-upgrade'])
    .addOption(
      new Option('--to <tag>', 'target release (older than the installed one: planned as a downgrade)')
        .choices(RELEASE_CHOICES)
        .makeOptionMandatory(),
    )
    .addOption(
      new Option(
        '--from <tag>',
        "current release (default with --kubeconfig: the live install's app.kubernetes.io/version label)",
      ).choices(RELEASE_CHOICES),
    )
    .option(
      '--kubeconfig <file>',
      'read status.storedVersions, claims and warm pools from this cluster (without it the verdict is at best "unknown")',
      existingFile,
    )
    .option('--context <name>', 'kubeconfig context')
    .addOption(
      new Option(
        '--accept <defect-id...>',
        `accept a blocking defect by id; it is reported but no longer blocks (${BLOCKING_DEFECTS.map((d) => `${d.id}: ${d.source}`).join('; ')})`,
      ).choices(BLOCKING_DEFECTS.map((d) => d.id)),
    )
    .addOption(outputOption('table', { textAlias: true }))
    .addHelpText('after', `\n${planExitCodeHelp()}`)
    .action(async (flags: PlanFlags, cmd: Command) => {
      if (flags.from === undefined && flags.kubeconfig === undefined && flags.context === undefined)
        cmd.error('error: give --from TAG or --kubeconfig FILE', { exitCode: 2 });
      try {
        const fetchOpts = globalOptions(cmd);
        const to = await loadRelease(flags.to, fetchOpts);
        let live: { state: LiveUpgradeState; tag?: string } | undefined;
        if (flags.kubeconfig !== undefined || flags.context !== undefined) {
          const [{ KubeClient }, { LiveStateError, readUpgradeState }] = await Promise.all([
            import('../../adapter/kubernetes/client.js'),
            import('../../adapter/kubernetes/upgrade-state.js'),
          ]);
          const client = KubeClient.connect({
            ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
            ...(flags.context ? { context: flags.context } : {}),
          });
          live = await readUpgradeState(client, to.facts);
          // a plan from a release other than the one installed would answer for another cluster
          if (flags.from !== undefined && live.tag !== undefined && live.tag !== flags.from)
            throw new UsageError(
              `--from ${flags.from}, but the live install is labelled ${live.tag} (app.kubernetes.io/version on its Sandbox CRD)`,
              `pass --from ${live.tag}, or leave --from out to use the label`,
            );
          if (flags.from === undefined && live.tag === undefined)
            throw new LiveStateError(
              'the live install has no app.kubernetes.io/version label on its Sandbox CRD',
              'pass --from with the release that is installed',
            );
        }
        const from = await loadRelease(releaseFacts((flags.from ?? live?.tag)!).tag, fetchOpts);
        // the other releases are searched for a path by their pinned facts only: no need to load their files
        const intermediates = intermediateTags(from.facts.tag, to.facts.tag).map((t) => ({ facts: releaseFacts(t) }));
        const plan = planUpgrade(from, to, live?.state, intermediates, { accept: flags.accept ?? [] });
        const exitCode = PLAN_EXIT_CODES[plan.verdict];
        process.stdout.write(
          renderWith(outputFormat(flags.output), () => ({ ...plan, exitCode }), {
            table: () => renderPlanText(plan),
            markdown: () => renderPlanMarkdown(plan),
          }),
        );
        process.exitCode = exitCode;
      } catch (err) {
        reportFailure(err, { command: 'plan-upgrade', output: flags.output });
      }
    });
}
