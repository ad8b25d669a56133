/**
 * Environment modules: how a platform team writes environments for `agentplane synth`.
 *
 * Convention: a TypeScript (or JavaScript) ES module whose default export is made with {@link defineEnvironments}:
 *
 * ```ts
 * import { defineEnvironments, AgentEnvironment } from 'agentplane';
 * export default defineEnvironments(async (ctx) => {
 *   const release = await ctx.loadRelease('v1.0.3');          // verified, with the CLI's --mirror / --cache-dir
 *   const env = new AgentEnvironment(ctx.app, 'dev', { release });
 *   // ... env.addRuntimeClass / addTemplate / addWarmPool ...
 * });
 * ```
 *
 * All I/O (fetching and verifying the release) happens in `ctx.loadRelease` before any construct exists; constructs stay
 * synchronous and I/O-free. Every AgentEnvironment created under `ctx.app` is synthesized into `dist/<name>/`.
 */
import { App } from '../constructs/cdk8s.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AgentEnvironment, ConstructError } from '../constructs/index.js';
import { loadRelease, ReleaseError, type FetchOptions, type LoadedRelease } from '../releases/index.js';
import { EnvironmentModuleError, SynthesisError } from './errors.js';

/** What an environment module's build function gets. */
export interface SynthContext {
  /** The cdk8s App to create AgentEnvironment charts in. */
  readonly app: App;
  /** `loadRelease(tag)` with the caller's fetch options (mirror, cache dir); repeated calls for one tag share one load. */
  loadRelease(tag: string): Promise<LoadedRelease>;
}

/** A build function: creates environments in `ctx.app`; may return nothing. */
export type EnvironmentsBuilder = (ctx: SynthContext) => void | Promise<void>;

const MARK = Symbol.for('agentplane.EnvironmentsDefinition');

/** The value an environment module exports as default. */
export interface EnvironmentsDefinition {
  readonly [MARK]: true;
  readonly build: EnvironmentsBuilder;
}

/** Marks `build` as an environment module's default export. */
export function defineEnvironments(build: EnvironmentsBuilder): EnvironmentsDefinition {
  return { [MARK]: true, build };
}

function isDefinition(value: unknown): value is EnvironmentsDefinition {
  return value !== null && typeof value === 'object' && (value as Record<symbol, unknown>)[MARK] === true;
}

/** Runs a definition with a fresh App and returns the environments it created, in creation order. */
export async function buildEnvironments(
  definition: EnvironmentsDefinition,
  opts: FetchOptions = {},
): Promise<AgentEnvironment[]> {
  const app = new App();
  const loads = new Map<string, Promise<LoadedRelease>>();
  const ctx: SynthContext = {
    app,
    loadRelease: (tag) => {
      let p = loads.get(tag);
      if (p === undefined) {
        p = loadRelease(tag, opts);
        loads.set(tag, p);
      }
      return p;
    },
  };
  await definition.build(ctx);
  return app.node.findAll().filter((c): c is AgentEnvironment => c instanceof AgentEnvironment);
}

/**
 * Imports an environment module and builds its environments.
 * @throws EnvironmentModuleError when the file is missing, cannot be imported, has no `defineEnvironments` default export,
 *   fails with an untyped error, or creates no environment; release, construct and synthesis errors as they are.
 */
export async function loadEnvironmentModule(file: string, opts: FetchOptions = {}): Promise<AgentEnvironment[]> {
  const abs = resolve(file);
  if (!existsSync(abs))
    throw new EnvironmentModuleError(
      file,
      'no such file',
      'pass the path of an environment module (e.g. examples/dev-gvisor/environment.ts)',
      'missing',
    );
  let mod: { default?: unknown };
  try {
    // bin/agentplane.js registers tsx (and its src/ -> lib/bundle/ redirect) only when a module is loaded
    const registerTypeScript = (globalThis as Record<symbol, unknown>)[Symbol.for('agentplane.registerTypeScript')];
    if (typeof registerTypeScript === 'function') await (registerTypeScript as () => Promise<void>)();
    mod = (await import(pathToFileURL(abs).href)) as { default?: unknown };
  } catch (err) {
    throw new EnvironmentModuleError(
      file,
      `cannot be imported: ${err instanceof Error ? err.message : String(err)}`,
      'fix the module so that it loads (run it with `npx tsx <file>` to see the full error)',
      'unimportable',
    );
  }
  // A CommonJS module (a cdk8s app compiled as CommonJS) has module.exports as its default; `export default` is on it.
  const definition = isDefinition(mod.default)
    ? mod.default
    : (mod.default as { default?: unknown } | undefined)?.default;
  if (!isDefinition(definition)) {
    throw new EnvironmentModuleError(
      file,
      'the default export is not made with defineEnvironments(...)',
      'end the module with `export default defineEnvironments(async (ctx) => { ... })`',
      'not-a-definition',
    );
  }
  let envs: AgentEnvironment[];
  try {
    envs = await buildEnvironments(definition, opts);
  } catch (err) {
    if (err instanceof ReleaseError || err instanceof ConstructError || err instanceof SynthesisError) throw err;
    throw new EnvironmentModuleError(
      file,
      `its build function failed: ${err instanceof Error ? err.message : String(err)}`,
      "fix the error in the module's defineEnvironments callback",
      'build-failed',
    );
  }
  if (envs.length === 0)
    throw new EnvironmentModuleError(
      file,
      'the module created no AgentEnvironment',
      'create at least one `new AgentEnvironment(ctx.app, ...)`',
      'no-environment',
    );
  return envs;
}
