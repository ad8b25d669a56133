#!/usr/bin/env node
// Entry point for `npx agentplane`. Two ways to run the TypeScript CLI:
// - compiled: for `synth` and `diff` when `lib/` (from `npm run build`) holds an up-to-date .js for every .ts under src/ and
//   imports/ (and the other conditions of start-mode.js hold), run lib/src/cli/main.js with no loader (about half the
//   start-up time). Environment modules are loaded
//   through tsx, registered only when the first one is imported (see src/synth/environment-module.ts), together with
//   lib-redirect.js, which sends their imports of src/ and imports/ to the same compiled files, so there is one copy of
//   each class (`instanceof AgentEnvironment` holds);
// - otherwise (no build, or a source newer than its build): through tsx, so no build step is needed after `npm ci`.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledCliUsable } from './start-mode.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const LIB = join(ROOT, 'lib');
if (compiledCliUsable(ROOT, process.argv.slice(2))) {
  let registered;
  // Called by loadEnvironmentModule before importing a .ts module.
  globalThis[Symbol.for('agentplane.registerTypeScript')] = () => {
    registered ??= (async () => {
      const { register } = await import('tsx/esm/api');
      register();
      const { register: registerHooks } = await import('node:module');
      registerHooks(pathToFileURL(join(ROOT, 'bin/lib-redirect.js')), { data: { root: pathToFileURL(`${ROOT}/`).href } });
    })();
    return registered;
  };
  await import(pathToFileURL(join(LIB, 'src/cli/main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
