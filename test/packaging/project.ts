/**
 * Packing the package and installing the tarball into fresh projects: shared by the packaging test and the cluster
 * test that runs the installed entry points against the test cluster (test/cluster/packaged-entry-points.test.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const FIXTURE = join(import.meta.dirname, 'fixture');

export const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};
const cliPkg = JSON.parse(readFileSync(join(ROOT, 'node_modules/cdk8s-cli/package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

/** The newest peers: the versions the current cdk8s template installs. */
export const NEWEST_PEERS = {
  cdk8s: cliPkg.dependencies['cdk8s']!,
  constructs: cliPkg.dependencies['constructs']!,
  'cdk8s-plus-28': `^${pkg.devDependencies['cdk8s-plus-28']}`,
};

/** Runs `cmd` in `cwd` without the test's NODE_OPTIONS; its stdout, or an error with both streams. */
export function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} in ${cwd} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The newest modification time under `dir`, ms. */
function newest(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((t, e) => Math.max(t, statSync(join(e.parentPath, e.name)).mtimeMs), 0);
}

/** Runs `npm run build` when lib/ is missing or older than a file under src/ (a lane that did not build first). */
export function buildIfStale(): void {
  const built = join(ROOT, 'lib/bundle/adapter.js');
  if (
    existsSync(built) &&
    existsSync(join(ROOT, 'lib/cjs/index.cjs')) &&
    statSync(built).mtimeMs >= newest(join(ROOT, 'src'))
  )
    return;
  run('npm', ['run', 'build'], ROOT);
}

/** What `npm pack --json` reports of the tarball. */
export interface Packed {
  readonly tarball: string;
  readonly files: readonly string[];
  readonly size: number;
  readonly unpackedSize: number;
  readonly entryCount: number;
}

/** `npm pack` of the built repository into `work` (lib/ must exist: prepack is skipped). */
export function pack(work: string): Packed {
  if (!existsSync(join(ROOT, 'lib/bundle/main.js')) || !existsSync(join(ROOT, 'lib/cjs/index.cjs')))
    throw new Error('lib/ is missing: run `npm run build` first');
  const out = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      cwd: ROOT,
      encoding: 'utf8',
    }),
  ) as Array<{
    filename: string;
    files: Array<{ path: string }>;
    size: number;
    unpackedSize: number;
    entryCount: number;
  }>;
  const p = out[0]!;
  return {
    tarball: join(work, p.filename),
    files: p.files.map((f) => f.path),
    size: p.size,
    unpackedSize: p.unpackedSize,
    entryCount: p.entryCount,
  };
}

/** A project to install: its name, package.json fields, dependencies, and files written before the install. */
export interface ProjectSpec {
  readonly name: string;
  /** More package.json fields (`type`). */
  readonly extra?: Record<string, unknown>;
  readonly devDependencies?: Record<string, string>;
  /** The cdk8s packages; default the newest. */
  readonly peers?: Record<string, string>;
  /** More dependencies. */
  readonly more?: Record<string, string>;
  /** Files written before the install (a local package it depends on). */
  readonly files?: Record<string, string>;
}

/** A fresh project in `work/<name>` depending on `tarball`, installed from the (warm) npm cache. */
export function freshProject(work: string, tarball: string, spec: ProjectSpec): string {
  const dir = join(work, spec.name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: spec.name,
        version: '1.0.0',
        private: true,
        ...spec.extra,
        dependencies: { ...(spec.peers ?? NEWEST_PEERS), ...spec.more, [pkg.name]: `file:${tarball}` },
        devDependencies: spec.devDependencies ?? {},
      },
      null,
      2,
    ),
  );
  for (const [file, text] of Object.entries(spec.files ?? {})) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  return dir;
}

/** The JSON line a fixture script prints last. */
export function jsonOf(dir: string, args: string[]): Record<string, unknown> {
  return JSON.parse(run('node', args, dir).trim().split('\n').pop()!) as Record<string, unknown>;
}
