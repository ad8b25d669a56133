/**
 * bin/agentplane.js runs the bundled CLI (lib/bundle, from `npm run build`; `.ci/run` builds before `npm test`): the
 * program's --help, --version and usage errors load no library module (every file resolved is traced by a resolve
 * hook; a bundle file stands for the source modules esbuild marks in it), and synth through bin writes the same files
 * as the sources through tsx, with the environment module sharing the CLI's copy of the library.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLE_DIR, modulesIn } from '../bundle.js';
import { SHARED_MIRROR, tempDir } from '../releases/helpers.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/agentplane.js');
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(() => {
  if (!existsSync(join(BUNDLE_DIR, 'main.js'))) throw new Error('lib/bundle is missing: run `npm run build` first');
});

const BUNDLE = pathToFileURL(`${BUNDLE_DIR}/`).href;

/** The modules a traced run loaded: each bundle file's source modules, and every other file's URL. */
function modulesOf(urls: string[]): string[] {
  return urls.flatMap((u) => (u.startsWith(BUNDLE) ? modulesIn(fileURLToPath(u)) : [u]));
}

/** Runs bin with a resolve hook that writes every resolved URL to a file; returns the run and the modules loaded. */
function traced(
  dir: string,
  args: string[],
): { status: number | null; stdout: string; stderr: string; modules: string[] } {
  const trace = join(dir, 'trace.txt');
  writeFileSync(
    join(dir, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(process.env.TRACE_FILE, r.url + '\\n'); return r; }\n",
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
  );
  writeFileSync(trace, '');
  const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', TRACE_FILE: trace },
  });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    modules: modulesOf(readFileSync(trace, 'utf8').split('\n').filter(Boolean)),
  };
}

// model/package-info.ts (the version for commander's -V; node:fs only) and model/errors.ts (the error base UsageError
// extends; no imports) are the library leaves start-up reads.
const LIBRARY =
  /^src\/(constructs|releases|synth|verify|adapter|diff|model\/(?!package-info\.ts|errors\.ts))|(^|\/)node_modules\/(cdk8s|cdk8s-plus-28|constructs|@kubernetes|@grpc|tsx|zod|ajv|yaml)\//;

test.each([
  [['--help'], 0],
  [['--version'], 0],
  [[], 2],
  [['no-such-command'], 2],
  [['--no-such-flag'], 2],
])('agentplane %j loads no library module (exit %d)', (args, status) => {
  const t = tempDir('bin');
  try {
    const r = traced(t.dir, args);
    // --version is answered by bin/agentplane.js itself, from package.json
    expect(r.modules.includes('src/cli/main.ts')).toBe(args[0] !== '--version');
    expect(r.modules.filter((m) => LIBRARY.test(m))).toEqual([]);
    if (args[0] === '--version') expect(r.stdout).toBe(`${version}\n`);
    if (args[0] === '--help') expect(r.stdout).toContain('mirror');
    expect(r.status).toBe(status);
  } finally {
    t.cleanup();
  }
});

// Commands that never run an environment module load neither the TypeScript loader nor cdk8s (the descriptor's schema
// and the props errors, small modules under constructs/ that import neither, are shared with the verifier). cdk8s and
// its bindings are required by constructs/cdk8s.ts and constructs/k8s.ts, through createRequire, which a resolve hook
// does not trace.
const CONSTRUCTION = /(^|\/)node_modules\/(cdk8s|cdk8s-plus-28|constructs|tsx)\/|^src\/constructs\/(cdk8s|k8s)\.ts$/;

test.each([
  ['verify', ['verify', '--env', 'no-such-dir/env']],
  ['diff', ['diff', 'examples/dev-gvisor', 'examples/dev-gvisor']],
])('agentplane %s loads no construct module and no TypeScript loader', (_name, args) => {
  const t = tempDir('bin-lean');
  try {
    const r = traced(t.dir, args);
    expect(r.modules.some((m) => m.startsWith('src/cli/commands/'))).toBe(true);
    expect(r.modules.filter((m) => CONSTRUCTION.test(m))).toEqual([]);
  } finally {
    t.cleanup();
  }
});

function tree(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) Object.assign(out, tree(p, base));
    else out[relative(base, p)] = readFileSync(p, 'utf8');
  }
  return out;
}

test('synth through bin (bundled, tsx only for the module) writes the same files as the sources through tsx', () => {
  const t = tempDir('bin-synth');
  try {
    const common = [
      '--mirror',
      SHARED_MIRROR,
      '--cache-dir',
      join(t.dir, 'cache'),
      'synth',
      'examples/dev-gvisor/environment.ts',
    ];
    const env = { ...process.env, NODE_OPTIONS: '' };
    const compiled = spawnSync(process.execPath, [BIN, ...common, '--out', join(t.dir, 'compiled')], {
      cwd: ROOT,
      encoding: 'utf8',
      env,
    });
    expect(compiled.stderr).not.toContain('error');
    expect(compiled.status).toBe(0);
    const sources = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...common, '--out', join(t.dir, 'sources')],
      { cwd: ROOT, encoding: 'utf8', env },
    );
    expect(sources.status).toBe(0);
    const fromLib = tree(join(t.dir, 'compiled'));
    expect(Object.keys(fromLib)).toContain(join('dev-gvisor', 'environment.json'));
    expect(fromLib).toEqual(tree(join(t.dir, 'sources')));
  } finally {
    t.cleanup();
  }
});
