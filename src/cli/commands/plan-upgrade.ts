/**
 * `agentplane plan-upgrade --to TAG [--from TAG] [--kubeconfig FILE] [--accept DEFECT]`: classify a move between
 * pinned releases (upgrade or downgrade) from the pinned CRD schemas and, with a cluster, from live
 * `status.storedVersions`, v1alpha1 claims, warm pools and warm-started claims. Exit codes: plan-upgrade-exit-codes.ts.
 * The cluster is read as every command reads it (`--kubeconfig`, else `$KUBECONFIG`, else ~/.kube/config) when
 * `--kubeconfig`, `--context` or `$KUBECONFIG` is set or `--from` is left out; `--from` alone plans offline.
 * Imports name modules, not layer barrels, and the cluster client is loaded only for a live read, so an offline plan
 * loads neither client-node nor the validators.
 */
import { Option, type Command } from 'commander';
import type { KubeClient as KubeClientType } from '../../adapter/kubernetes/client.js';
import { renderPlanMarkdown, renderPlanText } from '../../diff/render-plan.js';
import { loadRelease } from '../../releases/load.js';
import { releaseFacts } from '../../releases/supported.js';
import { BLOCKING_DEFECTS, intermediateTags, planUpgrade, type LiveUpgradeState } from '../../releases/upgrade-plan.js';
import { outputFormat, outputOption, renderWith, type OutputChoice } from '../output.js';
import { RELEASE_CHOICES, releaseTag } from '../release-choices.js';
import { UsageError } from '../errors.js';
import { reportFailure } from '../error-document.js';
import { globalOptions, kubeOptions } from '../global-options.js';
import { COMMAND_SUMMARIES } from '../summaries.js';
import { PLAN_EXIT_CODES, planExitCodeHelp } from './plan-upgrade-exit-codes.js';

interface PlanFlags {
  to: string;
  from?: string;
  accept?: string[];
  output: OutputChoice;
}

/** Registers `plan-upgrade` on the program. */
export function registerPlanUpgrade(program: Command): void {
  program
    .command('plan-upgrade')
    .description(COMMAND_SUMMARIES['plan-upgrade'])
    .addOption(
      new Option(
        '--to <tag>',
        `target release (older than the installed one: planned as a downgrade): ${RELEASE_CHOICES.join(', ')}`,
      )
        .argParser(releaseTag)
        .makeOptionMandatory(),
    )
    .addOption(
      new Option(
        '--from <tag>',
        `current release: ${RELEASE_CHOICES.join(', ')} (default: the live install's app.kubernetes.io/version label, read from the cluster of --kubeconfig/$KUBECONFIG/~/.kube/config); with --from alone and no --kubeconfig, --context or $KUBECONFIG the plan is offline and its verdict at best "unknown"`,
      ).argParser(releaseTag),
    )
    .addOption(
      new Option(
        '--accept <defect-id...>',
        `accept a blocking defect by id; it is reported but no longer blocks (${BLOCKING_DEFECTS.map((d) => `${d.id}: ${d.source}`).join('; ')})`,
      ).choices(BLOCKING_DEFECTS.map((d) => d.id)),
    )
    .addOption(outputOption('table', { textAlias: true }))
    .addHelpText('after', `\n${planExitCodeHelp()}`)
    .action(async (flags: PlanFlags, cmd: Command) => {
      const kube = kubeOptions(cmd);
      // the live state is read as every command reads a cluster; only --from alone, with no kubeconfig named, is offline
      const readLive =
        flags.from === undefined ||
        kube.kubeconfig !== undefined ||
        kube.context !== undefined ||
        (process.env.KUBECONFIG ?? '') !== '';
      try {
        const fetchOpts = globalOptions(cmd);
        const to = await loadRelease(flags.to, fetchOpts);
        let live: { state: LiveUpgradeState; tag?: string } | undefined;
        if (readLive) {
          const [{ KubeClient }, { KubeconfigError }, { LiveStateError, readUpgradeState }] = await Promise.all([
            import('../../adapter/kubernetes/client.js'),
            import('../../adapter/kubernetes/errors.js'),
            import('../../adapter/kubernetes/upgrade-state.js'),
          ]);
          let client: KubeClientType;
          try {
            client = KubeClient.connect(kube);
          } catch (err) {
            // no --from and no kubeconfig anywhere: say both ways out
            if (flags.from === undefined && err instanceof KubeconfigError && err.details.problem === 'none-found')
              throw new UsageError(
                'give --from TAG, or a cluster to read the installed release from',
                'pass --from with the installed release, or --kubeconfig FILE (or set KUBECONFIG)',
              );
            throw err;
          }
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
