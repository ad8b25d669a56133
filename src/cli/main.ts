/**
 * `agentplane` — the command-line entry point. Commands live one per file under `./commands/` and are registered
 * below with one line each (`registerXxx(program)`); they parse flags, call the library and render, nothing more.
 * Errors thrown by the library are mapped to exit codes in `./errors.ts` (table in `--help`).
 */
import { Command, CommanderError, Option } from 'commander';
import { directoryOrNew, existingDirectory } from './arg-parsers.js';
import { describeError, exitCodeFor, UsageError } from './errors.js';
import { exitCodeHelp } from './exit-codes.js';

// `agentplane ... | head` closes the pipe early: drop the rest of the output quietly and let the command finish, so
// its own exit code (e.g. diff's 1 for changes) still reaches `${PIPESTATUS[0]}` / `set -o pipefail`.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.stdout.write = () => true;
});

const program = new Command('agentplane')
  .description('Pinned, checksum-verified Agent Sandbox environments from code: synthesize, verify, diff, upgrade.')
  .addOption(new Option('--mirror <dir>', 'directory with release files as <dir>/<tag>/<path> (default: $AGENTPLANE_MIRROR, else ../shared/agent-sandbox/releases when it exists, else upstream raw files at the pinned commit); must exist').argParser(existingDirectory))
  .addOption(new Option('--cache-dir <dir>', 'cache for verified release files (default: $AGENTPLANE_CACHE_DIR, else the user cache dir)').argParser(directoryOrNew))
  .showHelpAfterError('(run agentplane --help for usage)')
  .addHelpText('after', `\n${exitCodeHelp()}`)
  .exitOverride();

/**
 * One line per command (keep sorted). Each is imported on demand: a command's module pulls in its whole layer
 * (verify loads client-node and gRPC), so `agentplane synth` loads only what synth needs.
 */
const COMMANDS: Readonly<Record<string, () => Promise<(program: Command) => void>>> = {
  compat: async () => (await import('./commands/compat.js')).registerCompat,
  diff: async () => (await import('./commands/diff.js')).registerDiff,
  'plan-upgrade': async () => (await import('./commands/plan-upgrade.js')).registerPlanUpgrade,
  synth: async () => (await import('./commands/synth.js')).registerSynth,
  verify: async () => (await import('./commands/verify.js')).registerVerify,
};

/** The command named on the command line (the first operand after the global options), if it is a known one. */
function requestedCommand(argv: readonly string[]): string | undefined {
  const withValue = new Set(['--mirror', '--cache-dir']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (withValue.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg in COMMANDS ? arg : undefined;
  }
  return undefined;
}

// Only the requested command is registered; without one (`--help`, a typo) all are, so help and suggestions stay whole.
const requested = requestedCommand(process.argv.slice(2));
for (const name of requested ? [requested] : Object.keys(COMMANDS)) (await COMMANDS[name]!())(program);
// A usage error of a command points at that command's help (subcommands inherit the program's pointer otherwise).
for (const cmd of program.commands) cmd.showHelpAfterError(`(run agentplane ${cmd.name()} --help for usage)`);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = exitCodeFor(err);
  } else {
    process.stderr.write(`${describeError(err)}\n`);
    if (err instanceof UsageError) process.stderr.write(`(run agentplane ${requested ?? ''}${requested ? ' ' : ''}--help for usage)\n`);
    process.exitCode = exitCodeFor(err);
  }
}
