/**
 * `agentplane version`: the package version, the Agent Sandbox releases it is built for (the newest first named) and
 * the Node.js running it. `-o json|yaml` gives `{version, builtFor, releases, node}`; `agentplane --version` prints the
 * version alone.
 */
import type { Command } from 'commander';
import { packageVersion } from '../../model/package-info.js';
import { RELEASE_TAGS } from '../../model/releases.js';
import { outputOption, renderWith, type OutputFormat } from '../output.js';
import { COMMAND_SUMMARIES } from '../summaries.js';

/** What `version -o json` prints. */
export interface VersionInfo {
  /** The cdk8s-agentplane package version. */
  readonly version: string;
  /** The newest pinned Agent Sandbox release. */
  readonly builtFor: string;
  /** Every pinned release, oldest first. */
  readonly releases: readonly string[];
  /** The Node.js version running the CLI (`process.version`). */
  readonly node: string;
}

export function versionInfo(): VersionInfo {
  return {
    version: packageVersion(),
    builtFor: RELEASE_TAGS[RELEASE_TAGS.length - 1]!,
    releases: RELEASE_TAGS,
    node: process.version,
  };
}

/** Registers `version` on the program. */
export function registerVersion(program: Command): void {
  program
    .command('version')
    .description(COMMAND_SUMMARIES['version'])
    .addOption(outputOption('table'))
    .action((flags: { output: OutputFormat }) => {
      const info = versionInfo();
      const lines = [
        `agentplane ${info.version}`,
        `built for Agent Sandbox ${info.builtFor} (pinned releases: ${info.releases.join(', ')})`,
        `node ${info.node}`,
      ];
      process.stdout.write(
        renderWith(flags.output, () => info, {
          table: () => `${lines.join('\n')}\n`,
          markdown: () => `${lines.map((l) => `- ${l}`).join('\n')}\n`,
        }),
      );
    });
}
