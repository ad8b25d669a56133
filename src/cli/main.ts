/**
 * `agentplane` — the command-line entry point. Commands live one per file under `./commands/` and are registered
 * below with one line each (`registerXxx(program)`); they parse flags, call the library and render, nothing more.
 * Errors thrown by the library are mapped to exit codes in `./errors.ts` (table in `--help`).
 */
import { Command, CommanderError, Option } from 'commander';
import { describeError, exitCodeFor } from './errors.js';
import { registerCompat } from './commands/compat.js';
import { registerDiff } from './commands/diff.js';
import { registerPlanUpgrade } from './commands/plan-upgrade.js';
import { registerSynth } from './commands/synth.js';
import { registerVerify } from './commands/verify.js';
import { exitCodeHelp } from './exit-codes.js';

// `agentplane ... | head` closes the pipe early: stop quietly instead of crashing on EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command('agentplane')
  .description('Pinned, checksum-verified Agent Sandbox environments from code: synthesize, verify, diff, upgrade.')
  .addOption(new Option('--mirror <dir>', 'directory with release files as <dir>/<tag>/<path> (default: $AGENTPLANE_MIRROR, else ../shared/agent-sandbox/releases when it exists, else upstream raw files at the pinned commit)'))
  .addOption(new Option('--cache-dir <dir>', 'cache for verified release files (default: $AGENTPLANE_CACHE_DIR, else the user cache dir)'))
  .showHelpAfterError('(run agentplane --help for usage)')
  .addHelpText('after', `\n${exitCodeHelp()}`)
  .exitOverride();

// One line per command (keep sorted):
registerCompat(program);
registerDiff(program);
registerPlanUpgrade(program);
registerSynth(program);
registerVerify(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = exitCodeFor(err);
  } else {
    process.stderr.write(`${describeError(err)}\n`);
    process.exitCode = exitCodeFor(err);
  }
}
