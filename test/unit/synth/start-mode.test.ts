/**
 * bin/start-mode.js: when `agentplane` may run the compiled lib/ instead of the sources through tsx. Real files in a
 * temporary package root; mtimes set with utimesSync.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SHARED_MIRROR, tempDir } from '../releases/helpers.js';

const ROOT = resolve(import.meta.dirname, '../../..');
type StartMode = {
  libIsFresh(root: string, dir: string): boolean;
  compiledCliUsable(root: string, argv: string[], env?: Record<string, string | undefined>, cwd?: string): boolean;
};
const { libIsFresh, compiledCliUsable } = (await import(pathToFileURL(join(ROOT, 'bin/start-mode.js')).href)) as StartMode;

function file(path: string, mtimeSec: number): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '//\n');
  utimesSync(path, mtimeSec, mtimeSec);
}

/** A package root with src/cli/main.ts and src/releases/load.ts compiled at time 200 (sources at 100). */
function packageRoot(dir: string): string {
  const root = join(dir, 'pkg');
  for (const rel of ['cli/main', 'releases/load']) {
    file(join(root, 'src', `${rel}.ts`), 100);
    file(join(root, 'lib/src', `${rel}.js`), 200);
  }
  return root;
}

describe('compiled CLI start-up', () => {
  test('lib/ is fresh only when every source has a compiled file at least as new', () => {
    const t = tempDir('start');
    try {
      const root = packageRoot(t.dir);
      expect(libIsFresh(root, 'src')).toBe(true);
      file(join(root, 'src/releases/load.ts'), 300); // edited after the build
      expect(libIsFresh(root, 'src')).toBe(false);
      file(join(root, 'src/releases/load.ts'), 100);
      file(join(root, 'src/synth/new.ts'), 100); // never built
      expect(libIsFresh(root, 'src')).toBe(false);
    } finally {
      t.cleanup();
    }
  });

  test('only `synth` without --all-examples, `diff` and `plan-upgrade`, with lib/ fresh and the default mirror unchanged, runs compiled', () => {
    const t = tempDir('start');
    try {
      const root = packageRoot(t.dir);
      const cwd = join(t.dir, 'elsewhere', 'work');
      mkdirSync(cwd, { recursive: true });
      const env = {};
      expect(compiledCliUsable(root, ['synth', 'env.ts'], env, cwd)).toBe(true);
      expect(compiledCliUsable(root, ['--mirror', '/m', '--cache-dir', '/c', 'synth', 'env.ts'], env, cwd)).toBe(true);
      expect(compiledCliUsable(root, ['synth', 'env.ts'], { AGENTPLANE_NO_LIB: '1' }, cwd)).toBe(false);
      expect(compiledCliUsable(root, ['compat'], env, cwd)).toBe(false);
      expect(compiledCliUsable(root, ['verify'], env, cwd)).toBe(false);
      expect(compiledCliUsable(root, ['verify', 'synth'], env, cwd)).toBe(false);
      expect(compiledCliUsable(root, ['plan-upgrade', '--to', 'v0.5.6', '--from', 'v0.4.6'], env, cwd)).toBe(true);
      expect(compiledCliUsable(root, ['synth', '--all-examples'], env, cwd)).toBe(false);
      expect(compiledCliUsable(root, ['diff', 'dist-a', 'dist-b'], env, cwd)).toBe(true);
      expect(compiledCliUsable(root, ['--cache-dir', '/c', 'diff', '--live', 'dist'], env, cwd)).toBe(true);

      // a mirror next to the package root, found from the sources but not from lib/: tsx, unless a mirror is given
      mkdirSync(join(t.dir, 'shared/agent-sandbox/releases'), { recursive: true });
      expect(compiledCliUsable(root, ['synth', 'env.ts'], env, cwd)).toBe(false);
      expect(compiledCliUsable(root, ['diff', 'a', 'b', '--release', 'v0.5.6'], env, cwd)).toBe(false);
      expect(compiledCliUsable(root, ['--mirror', '/m', 'synth', 'env.ts'], env, cwd)).toBe(true);
      expect(compiledCliUsable(root, ['synth', 'env.ts'], { AGENTPLANE_MIRROR: '/m' }, cwd)).toBe(true);
      expect(compiledCliUsable(root, ['synth', 'env.ts'], env, root)).toBe(true); // found through the cwd either way

      file(join(root, 'src/cli/main.ts'), 300);
      expect(compiledCliUsable(root, ['--mirror', '/m', 'synth', 'env.ts'], env, cwd)).toBe(false);
    } finally {
      t.cleanup();
    }
  });
});

/** Every file under `dir` (relative path -> content). */
function tree(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const r = join(rel, e.name);
    if (e.isDirectory()) Object.assign(out, tree(dir, r));
    else out[r] = readFileSync(join(dir, r), 'utf8');
  }
  return out;
}

// Needs `npm run build` output that is up to date; without it the compiled path is never taken, so there is nothing to compare.
const compiled = compiledCliUsable(ROOT, ['--mirror', SHARED_MIRROR, 'synth']);
(compiled ? test : test.skip)('the compiled CLI writes the same files as the sources through tsx (one copy of each class for the environment module)', () => {
  const t = tempDir('start-e2e');
  try {
    const run = (out: string, env: Record<string, string>): void => {
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/agentplane.js'), '--mirror', SHARED_MIRROR, '--cache-dir', join(t.dir, 'cache'), 'synth', 'examples/dev-gvisor/environment.ts', '--out', join(t.dir, out)], {
        cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env },
      });
      if (r.status !== 0) throw new Error(`agentplane synth (${out}) failed (${r.status}): ${r.stderr}`);
    };
    run('compiled', {});
    run('sources', { AGENTPLANE_NO_LIB: '1' });
    const fromLib = tree(join(t.dir, 'compiled'));
    expect(Object.keys(fromLib)).toContain(join('dev-gvisor', 'environment.json'));
    expect(fromLib).toEqual(tree(join(t.dir, 'sources')));
  } finally {
    t.cleanup();
  }
});
