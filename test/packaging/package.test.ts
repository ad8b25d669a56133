/**
 * The packed package installed into fresh CommonJS and ESM cdk8s projects (README.md beside this file): `app.synth()`
 * and the installed `agentplane synth` write the same objects; a jest snapshot test and tsc run under the cdk8s
 * template's configuration; `agentplane --version` answers. Needs the npm registry (or a warm npm cache).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jest } from '@jest/globals';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = join(import.meta.dirname, 'fixture');
const TEMPLATE = join(ROOT, 'node_modules/cdk8s-cli/templates/typescript-app');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};
const templatePkg = JSON.parse(readFileSync(join(TEMPLATE, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const cliPkg = JSON.parse(readFileSync(join(ROOT, 'node_modules/cdk8s-cli/package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

jest.setTimeout(20 * 60_000);

function run(cmd: string, args: string[], cwd: string): string {
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

/** Every object of the YAML files, in file order, as JSON text. */
function objectsOf(files: string[]): string[] {
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(f, 'utf8'))
      .map((d) => JSON.stringify(d.toJS()))
      .filter((t) => t !== 'null'),
  );
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(dir, f));
}

let work: string;
let tarball: string;

beforeAll(() => {
  if (!existsSync(join(ROOT, 'lib/bundle/main.js')) || !existsSync(join(ROOT, 'lib/cjs/index.cjs')))
    throw new Error('lib/ is missing: run `npm run build` first');
  work = mkdtempSync(join(tmpdir(), 'agentplane-packaging-'));
  const out = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      cwd: ROOT,
      encoding: 'utf8',
    }),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(work, out[0]!.filename);
  packedFiles = out[0]!.files.map((f) => f.path);
});

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

let packedFiles: string[] = [];

test('the tarball holds the bundle, declarations, run-time data files, bin/ and docs; no sources, tests, test cluster, bench, CI or compiled modules', () => {
  expect(packedFiles).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'bin/agentplane.js',
      'bin/module-hooks.js',
      'lib/bundle/index.js',
      'lib/bundle/adapter.js',
      'lib/bundle/verify.js',
      'lib/bundle/diff.js',
      'lib/bundle/main.js',
      'lib/esm/src/index.d.ts',
      'lib/cjs/index.cjs',
      'lib/cjs/src/index.d.ts',
      'lib/data/src/adapter/runtime/proto/process/v1/process.proto',
      'lib/data/test/compat/matrix.json',
      'docs/output.md',
    ]),
  );
  expect(packedFiles.filter((f) => /^(src|test|test-cluster|bench|\.ci|scripts|examples)\//.test(f))).toEqual([]);
  // the bundle is the only ES module code: tsc writes declarations only
  expect(packedFiles.filter((f) => /^lib\/(esm|cjs)\/.*\.js$/.test(f))).toEqual([]);
});

/** A fresh project with the tarball and the cdk8s packages (versions the current cdk8s template installs). */
function project(name: string, extra: Record<string, unknown>, devDependencies: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name,
        version: '1.0.0',
        private: true,
        ...extra,
        dependencies: {
          cdk8s: cliPkg.dependencies['cdk8s'],
          constructs: cliPkg.dependencies['constructs'],
          'cdk8s-plus-28': pkg.devDependencies['cdk8s-plus-28'] ? `^${pkg.devDependencies['cdk8s-plus-28']}` : '^2',
          [pkg.name]: `file:${tarball}`,
        },
        devDependencies,
      },
      null,
      2,
    ),
  );
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  return dir;
}

/** Both syntheses of one project: `app.synth()` (dist/dev.k8s.yaml) and the installed `agentplane synth` (out/dev/NN-*.yaml). */
function expectSameObjects(dir: string, appCommand: string[], environmentModule: string): void {
  run(appCommand[0]!, appCommand.slice(1), dir);
  run('npx', ['--no-install', 'agentplane', 'synth', environmentModule, '--out', 'out'], dir);
  const fromApp = objectsOf([join(dir, 'dist/dev.k8s.yaml')]);
  const fromCli = objectsOf(yamlFiles(join(dir, 'out/dev')));
  expect(fromApp.length).toBeGreaterThan(10);
  expect(fromApp).toEqual(fromCli);
  const kinds = fromApp.map((o) => (JSON.parse(o) as { kind: string }).kind);
  expect(kinds).toEqual(
    expect.arrayContaining([
      'CustomResourceDefinition',
      'Namespace',
      'ConfigMap',
      'Deployment',
      'RuntimeClass',
      'SandboxTemplate',
    ]),
  );
  expect(run('npx', ['--no-install', 'agentplane', '--version'], dir).trim()).toBe(pkg.version);
}

let cjsDir: string | undefined;

test('CommonJS cdk8s project (template tsconfig, ts-node, jest): app.synth() = agentplane synth, snapshot test', () => {
  const dev = templatePkg.devDependencies;
  const dir = project(
    'cjs-app',
    {},
    {
      typescript: dev['typescript']!,
      'ts-node': dev['ts-node']!,
      jest: dev['jest']!,
      'ts-jest': dev['ts-jest']!,
      '@types/jest': dev['@types/jest']!,
      '@types/node': dev['@types/node']!,
    },
  );
  for (const f of ['tsconfig.json', 'jest.config.js']) copyFileSync(join(TEMPLATE, f), join(dir, f));
  for (const f of ['environment-parts.ts', 'main.ts', 'environment.ts', 'main.test.ts'])
    copyFileSync(join(FIXTURE, f), join(dir, f));
  cjsDir = dir;
  expectSameObjects(dir, ['npx', '--no-install', 'ts-node', 'main.ts'], 'environment.ts');
  run('npx', ['--no-install', 'jest', '--ci=false'], dir); // writes the snapshot (CI=true would forbid that)
  run('npx', ['--no-install', 'jest', '--ci'], dir); // and matches it
  expect(readFileSync(join(dir, '__snapshots__/main.test.ts.snap'), 'utf8')).toContain('argocd.argoproj.io/sync-wave');
});

// The template's old @types/node and its tsconfig without skipLibCheck or esModuleInterop: the published declarations
// of the CommonJS entry must use neither the global fetch type nor zod's types.
test('CommonJS cdk8s project type-checks through the package types under the template tsconfig', () => {
  if (cjsDir === undefined) throw new Error('the CommonJS project was not set up');
  run('npx', ['--no-install', 'tsc', '--noEmit', '-p', 'tsconfig.json'], cjsDir);
});

let esmDir: string | undefined;

test('ES module cdk8s project: app.synth() = agentplane synth', () => {
  const dir = project(
    'esm-app',
    { type: 'module' },
    {
      typescript: templatePkg.devDependencies['typescript']!,
      '@types/node': pkg.devDependencies['@types/node']!,
      // @kubernetes/client-node's declarations (under /adapter, /verify, /diff) import isomorphic-ws, whose types need
      // ws's, which client-node does not depend on: a project without skipLibCheck adds them itself.
      '@types/ws': '^8',
    },
  );
  for (const f of ['main.mjs', 'environment.mjs', 'types.ts']) copyFileSync(join(FIXTURE, f), join(dir, f));
  copyFileSync(join(FIXTURE, 'esm-tsconfig.json'), join(dir, 'tsconfig.json'));
  esmDir = dir;
  expectSameObjects(dir, ['node', 'main.mjs'], 'environment.mjs');
});

test('ES module TypeScript project type-checks every entry point (strict, nodenext, no skipLibCheck)', () => {
  if (esmDir === undefined) throw new Error('the ES module project was not set up');
  run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.json'], esmDir);
});
