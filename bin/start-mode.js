// When bin/agentplane.js may run the compiled CLI (lib/, from `npm run build`) instead of the sources through tsx;
// shared with bench/run.ts. The compiled files sit one folder deeper (lib/src/... instead of src/...), so paths that
// modules compute from their own location differ: only cases where that cannot change the outcome qualify.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Whether every .ts under `<root>/<dir>` has a compiled .js under `<root>/lib/<dir>` at least as new as itself. */
export function libIsFresh(root, dir) {
  if (!existsSync(join(root, dir))) return true;
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!libIsFresh(root, rel)) return false;
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const out = join(root, 'lib', rel.replace(/\.ts$/, '.js'));
      if (!existsSync(out) || statSync(out).mtimeMs < statSync(join(root, rel)).mtimeMs) return false;
    }
  }
  return true;
}

const SHARED_MIRROR = '../shared/agent-sandbox/releases';

/**
 * Whether `agentplane <argv>` can run from lib/ with the same outcome as from the sources:
 * - AGENTPLANE_NO_LIB is not `1`, and lib/ is up to date for src/ and imports/;
 * - the command is `synth` without `--all-examples` (the CLI looks for examples/ next to its own module), `diff` or
 *   `plan-upgrade` (the other commands read files next to their modules: the compat matrix, sandboxd's proto, package.json);
 * - the default mirror comes out the same (src/releases/fetch.ts tries `<cwd>/../shared/agent-sandbox/releases`, then the
 *   same path next to the package root, which from lib/ is one folder off): a mirror is given (--mirror,
 *   AGENTPLANE_MIRROR), or the cwd candidate exists, or neither package-relative candidate exists.
 */
export function compiledCliUsable(root, argv, env = process.env, cwd = process.cwd()) {
  const command = commandOf(argv);
  if (env.AGENTPLANE_NO_LIB === '1' || !(command === 'diff' || command === 'plan-upgrade' || (command === 'synth' && !argv.includes('--all-examples')))) return false;
  const mirrorGiven = argv.some((a) => a === '--mirror' || a.startsWith('--mirror=')) || Boolean(env.AGENTPLANE_MIRROR);
  const sameMirror =
    mirrorGiven || existsSync(resolve(cwd, SHARED_MIRROR)) || (!existsSync(resolve(root, SHARED_MIRROR)) && !existsSync(resolve(root, 'lib', SHARED_MIRROR)));
  if (!sameMirror) return false;
  return existsSync(join(root, 'lib/src/cli/main.js')) && libIsFresh(root, 'src') && libIsFresh(root, 'imports');
}

/** The first argument that is neither an option nor the value of a global option (`--mirror <dir>`, `--cache-dir <dir>`). */
function commandOf(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--mirror' || argv[i] === '--cache-dir') i++;
    else if (!argv[i].startsWith('-')) return argv[i];
  }
  return undefined;
}
