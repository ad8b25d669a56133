/**
 * `agentplane synth [FILE...]`: synthesize environment modules (see src/synth/environment-module.ts for the convention)
 * into `<out>/<environment>/` (numbered files per apply phase + environment.json), or to stdout as one YAML stream.
 * Checks each module's lock file (default: `agentplane.lock.json` next to the module): written when absent, a mismatch
 * stops with exit code 5 unless `--update-lock`. The lock's `images` are keyed `<environment>/<role>` (roles: `controller`,
 * `router`, `template/<namespace>/<name>/<container>`); all environments of one module must pin the same release.
 */
import { readdirSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { environmentsLock, type AgentEnvironment } from '../../constructs/index.js';
import { packageRoot } from '../../model/package-info.js';
import {
  capacityNotes,
  EnvironmentModuleError,
  loadEnvironmentModule,
  reconcileLock,
  synthesizeEnvironment,
  writeSynthesis,
  yamlStream,
  type EnvironmentSynthesis,
  type LockOutcome,
} from '../../synth/index.js';
import { directoryOrNew, writableFile } from '../arg-parsers.js';
import { globalOptions } from '../global-options.js';
import { outputOption, renderReport, type OutputFormat } from '../output.js';
import { COMMAND_SUMMARIES } from '../summaries.js';

/** The environment modules under the package's examples/: `examples/<name>/environment.ts`, sorted by name. */
export function exampleModules(): string[] {
  const examples = fileURLToPath(new URL('examples/', packageRoot()));
  if (!existsSync(examples)) return [];
  return readdirSync(examples, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(examples, d.name, 'environment.ts')))
    .map((d) => join(examples, d.name, 'environment.ts'))
    .sort();
}

interface SynthFlags {
  allExamples?: boolean;
  out: string;
  stdout?: boolean;
  updateLock?: boolean;
  lock?: string;
  strict?: boolean;
  output: OutputFormat;
}

interface ModuleResult {
  readonly file: string;
  readonly lockPath: string;
  readonly lock: LockOutcome;
  readonly syntheses: readonly EnvironmentSynthesis[];
}

/** Registers `synth` on the program. */
export function registerSynth(program: Command): void {
  program
    .command('synth')
    .description(COMMAND_SUMMARIES['synth'])
    .argument(
      '[FILE...]',
      'environment modules: files whose default export is defineEnvironments(async (ctx) => { ... })',
    )
    .option(
      '--all-examples',
      'also synthesize every examples/<name>/environment.ts (in a clone of the AgentPlane repository)',
    )
    .option('--out <dir>', 'output directory', directoryOrNew, 'dist')
    .option('--stdout', 'write all manifests to stdout as one YAML stream (-o json: a v1 List) instead of files')
    .option('--update-lock', 'rewrite the lock file when the environment and the lock disagree')
    .option(
      '--lock <file>',
      'lock file to use (only with one module; default: agentplane.lock.json next to the module)',
      writableFile,
    )
    .option('--strict', 'fail instead of warning when an object is too large for client-side apply')
    .addOption(outputOption('table'))
    .addHelpText(
      'after',
      '\nEnvironment module convention:\n' +
        "  export default defineEnvironments(async (ctx) => {\n    const release = await ctx.loadRelease('v1.0.3');\n" +
        "    const env = new AgentEnvironment(ctx.app, 'dev', { release });\n    ...\n  });\n" +
        'Apply the result phase by phase in file order; CRDs marked ServerSideApply=true need kubectl apply --server-side.',
    )
    .action(async (files: string[], flags: SynthFlags, cmd: Command) => {
      const missing = files.filter((f) => !existsSync(f));
      if (missing.length > 0)
        cmd.error(
          `error: no such environment module: ${missing.join(', ')} (give the path of your environment module, e.g. ./environment.ts)`,
          { exitCode: 2 },
        );
      const modules = [...files.map((f) => resolve(f)), ...(flags.allExamples === true ? exampleModules() : [])];
      if (modules.length === 0)
        cmd.error(
          flags.allExamples === true
            ? 'error: --all-examples found no examples/<name>/environment.ts: they ship with a clone of the AgentPlane repository, not with the installed package; give the path of your environment module'
            : 'error: give at least one environment module (e.g. environment.ts) or --all-examples',
          { exitCode: 2 },
        );
      if (flags.lock !== undefined && modules.length !== 1)
        cmd.error('error: --lock needs exactly one environment module', { exitCode: 2 });
      if (
        flags.stdout === true &&
        (flags.output === 'table' || flags.output === 'markdown') &&
        cmd.getOptionValueSource('output') === 'cli'
      ) {
        cmd.error('error: --stdout writes manifests: use -o yaml (default) or -o json', { exitCode: 2 });
      }
      if (flags.stdout === true && cmd.getOptionValueSource('out') === 'cli') {
        cmd.error(
          'error: --stdout writes no files, so --out has no effect: give one of them (--out DIR writes the phase files, which a fresh cluster needs)',
          { exitCode: 2 },
        );
      }
      const fetchOpts = globalOptions(cmd);
      const results: ModuleResult[] = [];
      const names = new Map<string, string>();
      for (const file of modules) {
        const envs: AgentEnvironment[] = await loadEnvironmentModule(file, fetchOpts);
        const syntheses = envs.map((env) => synthesizeEnvironment(env, { strict: flags.strict === true }));
        for (const s of syntheses) {
          const other = names.get(s.name);
          if (other !== undefined)
            throw new EnvironmentModuleError(
              file,
              `environment name ${JSON.stringify(s.name)} is also used by ${other}`,
              'give every environment a unique name: each one owns dist/<name>/',
              'name-clash',
            );
          names.set(s.name, file);
        }
        const tags = [...new Set(syntheses.map((s) => s.release.facts.tag))];
        if (tags.length > 1)
          throw new EnvironmentModuleError(
            file,
            `its environments pin different releases (${tags.join(', ')}) but share one lock file`,
            'split them into one module per release',
            'mixed-releases',
          );
        const lockPath = flags.lock !== undefined ? resolve(flags.lock) : join(dirname(file), 'agentplane.lock.json');
        const lock = reconcileLock(
          lockPath,
          environmentsLock(
            syntheses[0]!.release,
            syntheses.map((s) => s.descriptor),
          ),
          flags.updateLock === true,
        );
        results.push({ file, lockPath, lock, syntheses });
      }
      const all = results.flatMap((r) => r.syntheses);
      if (flags.stdout === true) {
        // stdout holds the manifests only; notes go to stderr, worded for the stream (no files were written)
        const objects = all.flatMap((s) => s.objects.map((o) => o.object));
        process.stdout.write(
          flags.output === 'json'
            ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`
            : yamlStream(objects),
        );
        for (const s of all) for (const n of s.streamNotes) process.stderr.write(`note: ${s.name}: ${n}\n`);
        return;
      }
      const notes = all.flatMap((s) => [...s.notes, ...capacityNotes(s.capacity)].map((n) => `${s.name}: ${n}`));
      const outDir = resolve(flags.out);
      const rows: Array<[string, string, number, number, string, string]> = [];
      const data: Array<Record<string, unknown>> = [];
      for (const r of results) {
        for (const s of r.syntheses) {
          writeSynthesis(outDir, s);
          // as given: an absolute --out stays absolute, a relative one stays relative to the working directory
          const dir = isAbsolute(flags.out)
            ? join(outDir, s.name)
            : relative(process.cwd(), join(outDir, s.name)) || '.';
          rows.push([
            s.name,
            s.release.facts.tag,
            s.objects.length,
            s.files.length,
            dir,
            `${r.lock} ${relative(process.cwd(), r.lockPath)}`,
          ]);
          data.push({
            environment: s.name,
            release: s.release.facts.tag,
            commit: s.release.facts.commit,
            objects: s.objects.length,
            files: s.files.map((f) => join(dir, f.path.slice(s.name.length + 1))),
            lock: { path: r.lockPath, outcome: r.lock },
            notes: s.notes,
            capacity: s.capacity,
          });
        }
      }
      process.stdout.write(
        renderReport(flags.output, {
          title: 'Synthesized environments',
          data: { environments: data },
          columns: ['environment', 'release', 'objects', 'files', 'output', 'lock'],
          rows,
          notes: notes.map((n) => `note: ${n}`),
        }),
      );
    });
}
