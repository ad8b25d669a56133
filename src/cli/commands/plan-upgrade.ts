/**
 * `agentplane plan-upgrade --to TAG [--from TAG | --kubeconfig FILE]`: classify a release jump from the pinned CRD
 * schemas and, with a cluster, from live `status.storedVersions`, v1alpha1 claims and warm pools.
 * Exit codes: 0 safe, 1 needs action (needs-migration or blocked), 2 error.
 */
import { Option, type Command } from 'commander';
import { KubeClient } from '../../adapter/kubernetes/client.js';
import { LiveStateError, readUpgradeState } from '../../adapter/kubernetes/upgrade-state.js';
import { renderPlanMarkdown, renderPlanText } from '../../diff/index.js';
import { intermediateTags, loadRelease, planUpgrade, releaseFacts, type LiveUpgradeState } from '../../releases/index.js';
import { existingFile } from '../arg-parsers.js';
import { outputFormat, outputOption, renderWith, type OutputChoice } from '../output.js';
import { RELEASE_CHOICES } from '../release-choices.js';
import { describeError } from '../errors.js';
import { globalOptions } from '../global-options.js';
import { COMMAND_SUMMARIES } from '../summaries.js';

interface PlanFlags {
  to: string;
  from?: string;
  kubeconfig?: string;
  context?: string;
  output: OutputChoice;
}

/** Registers `plan-upgrade` on the program. */
export function registerPlanUpgrade(program: Command): void {
  program
    .command('plan-upgrade')
    .description(COMMAND_SUMMARIES['plan-upgrade'])
    .addOption(new Option('--to <tag>', 'target release').choices(RELEASE_CHOICES).makeOptionMandatory())
    .addOption(new Option('--from <tag>', 'current release (default with --kubeconfig: the live install\'s app.kubernetes.io/version label)').choices(RELEASE_CHOICES))
    .option('--kubeconfig <file>', 'read status.storedVersions, v1alpha1 claims and warm pools from this cluster', existingFile)
    .option('--context <name>', 'kubeconfig context')
    .addOption(outputOption('table', { textAlias: true }))
    .addHelpText('after', '\nExit codes: 0 safe, 1 needs action (needs-migration or blocked), 2 error.')
    .action(async (flags: PlanFlags, cmd: Command) => {
      if (flags.from === undefined && flags.kubeconfig === undefined && flags.context === undefined) cmd.error('error: give --from TAG or --kubeconfig FILE', { exitCode: 2 });
      try {
        const fetchOpts = globalOptions(cmd);
        const to = await loadRelease(flags.to, fetchOpts);
        let live: { state: LiveUpgradeState; tag?: string } | undefined;
        if (flags.kubeconfig !== undefined || flags.context !== undefined) {
          const client = KubeClient.connect({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) });
          live = await readUpgradeState(client, to.facts);
        }
        const fromTag = flags.from ?? live?.tag;
        if (fromTag === undefined) throw new LiveStateError('the live install has no app.kubernetes.io/version label on its Sandbox CRD', 'pass --from with the release that is installed');
        const from = await loadRelease(releaseFacts(fromTag).tag, fetchOpts);
        const intermediates = await Promise.all(intermediateTags(from.facts.tag, to.facts.tag).map((t) => loadRelease(releaseFacts(t).tag, fetchOpts)));
        const plan = planUpgrade(from, to, live?.state, intermediates);
        process.stdout.write(renderWith(outputFormat(flags.output), () => plan, { table: () => renderPlanText(plan), markdown: () => renderPlanMarkdown(plan) }));
        process.exitCode = plan.verdict === 'safe' ? 0 : 1;
      } catch (err) {
        process.stderr.write(`${describeError(err)}\n`);
        process.exitCode = 2;
      }
    });
}
