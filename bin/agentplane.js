#!/usr/bin/env node
// `agentplane`: runs the bundled CLI, lib/bundle/main.js (`npm run build`, which `npm pack` runs), with no TypeScript
// loader. `--version` is answered here from package.json. The one TypeScript loader is registered when an
// environment module written in TypeScript is first imported (src/synth/environment-module.ts calls the function
// below): tsx, and ./module-hooks.js, which sends the module's imports of this package to the copy running here, so
// a process holds one copy of every class (`instanceof AgentEnvironment` holds).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const ROOT = new URL('../', import.meta.url);
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')).version}\n`);
} else {
  let registered;
  globalThis[Symbol.for('agentplane.registerTypeScript')] = () => (registered ??= registerTypeScript());
  try {
    await import(new URL('lib/bundle/main.js', ROOT).href);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('lib/bundle/main.js')) throw err;
    process.stderr.write(
      'error: the bundled CLI (lib/bundle) is missing\nhint: run `npm run build` in the package directory\n',
    );
    process.exitCode = 1;
  }
}

async function registerTypeScript() {
  const { name } = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8'));
  // The CLI's construct entry (lib/bundle/index.js; the package's `.` is its CommonJS build, lib/cjs/index.cjs) is
  // loaded before the hooks: then the module's imports of it find it loaded, and neither it, its chunks nor its
  // externals (constructs) are resolved through the hooks' worker thread.
  const entry = new URL('lib/bundle/index.js', ROOT).href;
  const entryExports = await import(entry);
  const { register } = await import('tsx/esm/api');
  register();
  const require = createRequire(import.meta.url);
  require('tsx/cjs/api').register();
  const { register: registerHooks } = await import('node:module');
  registerHooks(new URL('module-hooks.js', import.meta.url), { data: { root: ROOT.href, name } });
  // require() of this package from a CommonJS module: the ES module entry running here, not the CommonJS bundle, and
  // not a transpiled copy of lib/bundle (tsx's CommonJS hook would compile it anew): its namespace sits in require's
  // cache under the entry's file name, so require() returns the very module objects the CLI uses.
  const Module = require('node:module');
  const cached = new Module(new URL(entry).pathname);
  cached.filename = cached.id;
  cached.exports = entryExports;
  cached.loaded = true;
  Module._cache[cached.id] = cached;
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    if (request === name) return cached.id;
    if (request.startsWith(`${name}/`)) return new URL(import.meta.resolve(request)).pathname;
    return resolveFilename.call(this, request, ...rest);
  };
}
