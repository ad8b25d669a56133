/**
 * `agentplane` — the command-line entry point. Commands live one per file under `./commands/` and are registered
 * below with one line each; they parse flags, call the library and render, nothing more. Errors thrown by the library
 * are mapped to exit codes in `./errors.ts` (table in `--help`).
 *
 * Start-up loads only commander and this folder's small modules until a command runs: `--help`, `--version` and usage
 * errors of the program answer from the summaries below, and a command's module (which pulls in its whole layer:
 * verify loads client-node and gRPC) is imported only when that command is named.
 */
import { Command, CommanderError, Option } from 'commander';
import { directoryOrNew, existingDirectory } from './arg-parsers.js';
import { exitCodeHelp } from './exit-codes.js';
import { packageVersion } from '../model/package-info.js';
import { COMMAND_SUMMARIES, type CommandName } from './summaries.js';
import { UsageError } from './usage-error.js';

// `agentplane ... | head` closes the pipe early: drop the rest of the output quietly and let the command finish, so
// its own exit code (e.g. diff's 1 for changes) still reaches `${PIPESTATUS[0]}` / `set -o pipefail`.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.stdout.write = () => true;
});

/** Commander's own error lines carry the reason code of the error document, as every other error line does. */
const USAGE_OUTPUT = {
  outputError: (str: string, write: (s: string) => void): void =>
    write(str.replace(/^error: /, 'error [InvalidUsage]: ')),
};

const program = new Command('agentplane')
  .description('Pinned, checksum-verified Agent Sandbox environments from code: synthesize, verify, diff, upgrade.')
  .version(packageVersion(), '-V, --version', 'print the version of agentplane')
  .addOption(
    new Option(
      '--mirror <dir>',
      'directory with release files as <dir>/<tag>/<path>, e.g. filled by `agentplane mirror pull` (default: $AGENTPLANE_MIRROR, else the upstream files at the pinned commit); must exist',
    ).argParser(existingDirectory),
  )
  .addOption(
    new Option(
      '--kubeconfig <file>',
      'kubeconfig file for the commands that talk to a cluster (default: $KUBECONFIG, a list merged as kubectl merges it, then ~/.kube/config); before or after the command',
    ),
  )
  .option('--context <name>', 'kubeconfig context (default: its current-context); before or after the command')
  .addOption(
    new Option(
      '--cache-dir <dir>',
      'cache for verified release files (default: $AGENTPLANE_CACHE_DIR, else the user cache dir)',
    ).argParser(directoryOrNew),
  )
  .showHelpAfterError('(run agentplane --help for usage)')
  .configureOutput(USAGE_OUTPUT)
  // each command's --help also lists the global options: --mirror and --cache-dir (the offline switches), --kubeconfig
  // and --context (before or after the command)
  .configureHelp({ showGlobalOptions: true })
  .addHelpText('after', `\n${exitCodeHelp()}`)
  .exitOverride();

/** One line per command (keep sorted), each imported on demand. */
const COMMANDS: Readonly<Record<CommandName, () => Promise<(program: Command) => void>>> = {
  compat: async () => (await import('./commands/compat.js')).registerCompat,
  diff: async () => (await import('./commands/diff.js')).registerDiff,
  'migrate-storage': async () => (await import('./commands/migrate-storage.js')).registerMigrateStorage,
  mirror: async () => (await import('./commands/mirror.js')).registerMirror,
  'plan-upgrade': async () => (await import('./commands/plan-upgrade.js')).registerPlanUpgrade,
  synth: async () => (await import('./commands/synth.js')).registerSynth,
  verify: async () => (await import('./commands/verify.js')).registerVerify,
  version: async () => (await import('./commands/version.js')).registerVersion,
};

/** The command named on the command line (the first operand after the global options), if it is a known one. */
function requestedCommand(argv: readonly string[]): CommandName | undefined {
  const withValue = new Set(['--mirror', '--cache-dir', '--kubeconfig', '--context']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (withValue.has(arg)) i++;
    else if (!arg.startsWith('-'))
      return arg in COMMANDS
        ? (arg as CommandName)
        : arg === 'help' && argv[i + 1] !== undefined && argv[i + 1]! in COMMANDS
          ? (argv[i + 1] as CommandName)
          : undefined;
  }
  return undefined;
}

/** The command and subcommand named on the command line, e.g. `verify` or `mirror pull` (for error documents). */
function commandLabel(argv: readonly string[]): string | undefined {
  if (requested === undefined) return undefined;
  const sub = program.commands.find((c) => c.name() === requested)?.commands.map((c) => c.name()) ?? [];
  const next = argv[argv.indexOf(requested) + 1];
  return next !== undefined && sub.includes(next) ? `${requested} ${next}` : requested;
}

// Only the requested command is loaded; without one (`--help`, a typo) every command is listed from its summary, so
// help and suggestions stay whole without loading any layer.
const requested = requestedCommand(process.argv.slice(2));
if (requested !== undefined) (await COMMANDS[requested]())(program);
else for (const [name, summary] of Object.entries(COMMAND_SUMMARIES)) program.command(name).description(summary);
// A usage error of a command points at that command's help (subcommands inherit the program's pointer otherwise).
for (const cmd of program.commands) {
  cmd.showHelpAfterError(`(run agentplane ${cmd.name()} --help for usage)`).configureOutput(USAGE_OUTPUT);
  for (const sub of cmd.commands)
    sub
      .showHelpAfterError(`(run agentplane ${cmd.name()} ${sub.name()} --help for usage)`)
      .configureOutput(USAGE_OUTPUT);
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (requested === undefined && err instanceof CommanderError) {
    // a usage error of the program itself (no command named): commander has printed it; nothing else is loaded
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else if (err instanceof CommanderError && err.exitCode === 0) {
    process.exitCode = 0; // --help, --version
  } else {
    const { reportFailure, requestedOutput } = await import('./error-document.js');
    const output = requestedOutput(process.argv.slice(2));
    reportFailure(err, {
      command: commandLabel(process.argv.slice(2)) ?? 'agentplane',
      output: output === 'json' || output === 'yaml' ? output : undefined,
      ...(err instanceof CommanderError ? { exitCode: 2 } : {}),
      usageHint: err instanceof UsageError,
    });
  }
}

// Every command's outcome is written and its exit code set. A request the API server accepted but never answered
// (past its deadline, so already reported) keeps its socket open and would keep the process alive without end: the
// process ends once what it wrote to stdout and stderr has been handed on (a write callback runs after every earlier
// write; an error, e.g. a reader that closed the pipe, ends the wait too).
const flushed = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => {
    stream.once('error', () => resolve());
    stream.write('', () => resolve());
  });
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit();
