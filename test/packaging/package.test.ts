/**
 * The packed package installed into fresh CommonJS and ESM cdk8s projects (README.md beside this file): `app.synth()`
 * and the installed `agentplane synth` write the same objects; a jest snapshot test and tsc run under the cdk8s
 * template's configuration; the README's first environment synthesizes as written; `agentplane --version` answers; the
 * subpath entries run offline from both module systems; an esbuild bundle, the lowest peers the ranges allow and a
 * duplicated cdk8s layout synthesize the same objects or fail with the typed error; the types of every entry point and
 * condition pass are-the-types-wrong; the tarball stays within its size budget. Needs the npm registry (or a warm npm
 * cache).
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { FIXTURE, freshProject, jsonOf, NEWEST_PEERS, pack, pkg, ROOT, run } from './project.js';

const TEMPLATE = join(ROOT, 'node_modules/cdk8s-cli/templates/typescript-app');
const templatePkg = JSON.parse(readFileSync(join(TEMPLATE, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

jest.setTimeout(20 * 60_000);

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
  work = mkdtempSync(join(tmpdir(), 'agentplane-packaging-'));
  const p = pack(work);
  tarball = p.tarball;
  packedFiles = [...p.files];
  packed = p;
});

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

let packedFiles: string[] = [];
let packed: { size: number; unpackedSize: number; entryCount: number } | undefined;

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
      'lib/types/package.json',
      'lib/types/src/index.d.ts',
      'lib/types/adapter.d.mts',
      'lib/types/verify.d.mts',
      'lib/types/diff.d.mts',
      'lib/cjs/index.cjs',
      'lib/data/src/adapter/runtime/proto/process/v1/process.proto',
      'lib/data/test/compat/matrix.json',
      'docs/output.md',
    ]),
  );
  expect(packedFiles.filter((f) => /^(src|test|test-cluster|bench|\.ci|scripts|examples)\//.test(f))).toEqual([]);
  // tsc writes declarations only, in one tree
  expect(packedFiles.filter((f) => /^lib\/types\/.*\.js$/.test(f))).toEqual([]);
  expect(packedFiles.filter((f) => /\.d\.ts$/.test(f) && !f.startsWith('lib/types/'))).toEqual([]);
});

// Measured when the budget was set: 1.28 MB packed, 12.1 MB unpacked, 312 files (before: 15.8 MB unpacked, 509
// files, with a second declaration tree and dependencies both bundled and declared). The bundled Kubernetes client is
// most of it (its generated models, ~6.7 MB). Raised once the user docs moved into docs/ (guides, reference: about 30
// more files): measured 1.41 MB packed, 12.58 MB unpacked, 342 files.
test('the tarball stays within its size budget', () => {
  if (packed === undefined) throw new Error('npm pack did not run');
  process.stdout.write(
    `tarball: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${packed.entryCount} files\n`,
  );
  expect(packed.size).toBeLessThanOrEqual(1_450_000);
  expect(packed.unpackedSize).toBeLessThanOrEqual(12_800_000);
  expect(packed.entryCount).toBeLessThanOrEqual(350);
});

test('a dependency is bundled or declared, not both; cdk8s and constructs are peers only', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };
  // optional peers are the types the declarations name (never installed by npm, never loaded)
  const typesOnly = Object.keys(manifest.peerDependenciesMeta).filter(
    (p) => manifest.peerDependenciesMeta[p]!.optional,
  );
  expect(typesOnly.sort()).toEqual(['@kubernetes/client-node', 'jsondiffpatch']);
  const bundled = readdirSync(join(ROOT, 'lib/bundle/chunks'))
    .map((f) => readFileSync(join(ROOT, 'lib/bundle/chunks', f), 'utf8'))
    .concat(readFileSync(join(ROOT, 'lib/cjs/index.cjs'), 'utf8'))
    .flatMap((text) => [...text.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]!));
  expect(bundled).toContain('@kubernetes/client-node');
  expect(
    [...new Set(bundled)].filter(
      (p) => p in manifest.dependencies || (p in manifest.peerDependencies && !typesOnly.includes(p)),
    ),
  ).toEqual([]);
  for (const peer of ['cdk8s', 'constructs']) expect(manifest.dependencies[peer]).toBeUndefined();
});

// are-the-types-wrong on the packed tarball: `.` under every resolution (node10, node16 from CommonJS and from ES
// modules, bundler); the subpaths, ES module only, under every ES module resolution.
test('are-the-types-wrong: every entry point and condition', () => {
  const attw = join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js');
  run(process.execPath, [attw, tarball, '--profile', 'strict', '--entrypoints', '.', '--format', 'ascii'], work);
  run(
    process.execPath,
    [attw, tarball, '--profile', 'esm-only', '--entrypoints', './adapter', './verify', './diff', '--format', 'ascii'],
    work,
  );
});

/**
 * A fresh project with the tarball and the cdk8s packages (`peers`, else the newest), and `more` dependencies; `files`
 * are written before the install (a local package it depends on).
 */
function project(
  name: string,
  extra: Record<string, unknown>,
  devDependencies: Record<string, string>,
  peers: Record<string, string> = NEWEST_PEERS,
  more: Record<string, string> = {},
  files: Record<string, string> = {},
): string {
  return freshProject(work, tarball, { name, extra, devDependencies, peers, more, files });
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
  const snapshot = readFileSync(join(dir, '__snapshots__/main.test.ts.snap'), 'utf8');
  expect(snapshot).toContain('argocd.argoproj.io/sync-wave');
  expect(snapshot).not.toContain('CustomResourceDefinition');
  expect(Buffer.byteLength(snapshot)).toBeLessThan(200_000); // with the CRDs: about 1.4 MB
});

// The template's old @types/node and its tsconfig without skipLibCheck or esModuleInterop: the published declarations
// of the CommonJS entry must use neither the global fetch type nor zod's types.
test('CommonJS cdk8s project type-checks through the package types under the template tsconfig', () => {
  if (cjsDir === undefined) throw new Error('the CommonJS project was not set up');
  run('npx', ['--no-install', 'tsc', '--noEmit', '-p', 'tsconfig.json'], cjsDir);
});

/** The README's "A first environment" block, as a user copies it. */
function readmeEnvironment(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split('## A first environment')[1] ?? '';
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('README.md has no ```ts block under "A first environment"');
  return block;
}

// What a new user does first: the README's environment, pasted into a project, synthesized and type-checked.
test("the README's first environment synthesizes and type-checks as written in a CommonJS project", () => {
  if (cjsDir === undefined) throw new Error('the CommonJS project was not set up');
  // A directory of its own: the lock is written beside the environment module, and the project's own is another's.
  const dir = join(cjsDir, 'readme');
  mkdirSync(dir);
  writeFileSync(join(dir, 'environment.ts'), readmeEnvironment());
  run('npx', ['--no-install', 'agentplane', 'synth', 'environment.ts', '--out', 'out'], dir);
  const kinds = objectsOf(yamlFiles(join(dir, 'out/dev'))).map((o) => (JSON.parse(o) as { kind: string }).kind);
  expect(kinds).toEqual(expect.arrayContaining(['RuntimeClass', 'SandboxTemplate', 'SandboxWarmPool']));
  expect(existsSync(join(dir, 'agentplane.lock.json'))).toBe(true);
  run(
    'npx',
    ['--no-install', 'tsc', '--noEmit', '--strict', '--esModuleInterop', '--skipLibCheck', 'environment.ts'],
    dir,
  );
});

let esmDir: string | undefined;

test('ES module cdk8s project: app.synth() = agentplane synth', () => {
  const dir = project(
    'esm-app',
    { type: 'module' },
    {
      typescript: templatePkg.devDependencies['typescript']!,
      '@types/node': pkg.devDependencies['@types/node']!,
      // The declarations of /adapter, /verify and /diff name @kubernetes/client-node's and jsondiffpatch's types
      // (optional peers: the code is bundled); client-node's import isomorphic-ws, whose types need ws's, which
      // client-node does not depend on. A project type-checking without skipLibCheck adds them itself.
      '@kubernetes/client-node': pkg.devDependencies['@kubernetes/client-node']!,
      jsondiffpatch: pkg.devDependencies['jsondiffpatch']!,
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

const SUBPATHS_OFFLINE = {
  adapter: true,
  client: true,
  sameClientClass: true,
  unknownContext: { reason: 'KubeconfigUnusable', problem: 'context-unknown', isKubeconfigError: true },
  meets: [true, false],
  counts: { added: 0, removed: 0, changed: 1 },
};

test('CommonJS project: /adapter, /verify and /diff loaded with import() and used offline', () => {
  if (cjsDir === undefined) throw new Error('the CommonJS project was not set up');
  for (const f of ['subpaths.cjs', 'subpaths-run.mjs']) copyFileSync(join(FIXTURE, f), join(cjsDir, f));
  expect(jsonOf(cjsDir, ['subpaths.cjs'])).toMatchObject(SUBPATHS_OFFLINE);
});

// Case package-esm-only-client-in-cjs-consumers (bundled variant): esbuild bundles the CommonJS app with the package
// and cdk8s into one file; it starts (no import.meta) and writes the objects app.synth() wrote.
test('CommonJS project bundled by esbuild: the bundle writes the same objects', () => {
  if (cjsDir === undefined) throw new Error('the CommonJS project was not set up');
  const expected = objectsOf([join(cjsDir, 'dist/dev.k8s.yaml')]);
  const esbuild = join(ROOT, 'node_modules/esbuild/bin/esbuild');
  run(
    esbuild,
    ['main.ts', '--bundle', '--platform=node', '--format=cjs', '--outfile=bundle/main.cjs', '--log-level=error'],
    cjsDir,
  );
  rmSync(join(cjsDir, 'dist'), { recursive: true });
  run('node', ['bundle/main.cjs'], cjsDir);
  expect(objectsOf([join(cjsDir, 'dist/dev.k8s.yaml')])).toEqual(expected);
});

test('ES module project: /adapter, /verify and /diff used offline', () => {
  if (esmDir === undefined) throw new Error('the ES module project was not set up');
  copyFileSync(join(FIXTURE, 'subpaths.mjs'), join(esmDir, 'subpaths.mjs'));
  copyFileSync(join(FIXTURE, 'subpaths-run.mjs'), join(esmDir, 'subpaths-run.mjs'));
  expect(jsonOf(esmDir, ['subpaths.mjs'])).toMatchObject(SUBPATHS_OFFLINE);
});

// Case package-esm-only-client-in-cjs-consumers: require() and import of the package meet one class.
test('ES module app with a CommonJS helper: require() and import give the same construct classes', () => {
  if (esmDir === undefined) throw new Error('the ES module project was not set up');
  for (const f of ['identity.mjs', 'identity-helper.cjs']) copyFileSync(join(FIXTURE, f), join(esmDir, f));
  expect(jsonOf(esmDir, ['identity.mjs'])).toEqual({
    sameClass: true,
    instance: true,
    templates: 1,
    kinds: expect.arrayContaining(['RuntimeClass', 'SandboxTemplate', 'CustomResourceDefinition']),
  });
});

/** The lowest published version of `name` inside `range` (the registry's list, compared numerically). */
function lowest(name: string, range: string): string {
  const out = JSON.parse(run('npm', ['view', `${name}@${range}`, 'version', '--json'], work)) as string | string[];
  const versions = (Array.isArray(out) ? out : [out]).filter((v) => !v.includes('-'));
  const key = (v: string): number[] => v.split('.').map(Number);
  versions.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  });
  return versions[0]!;
}

let lowestCdk8s: string | undefined;

test('lowest peers the ranges allow (installable together): the same objects as the newest', () => {
  if (esmDir === undefined) throw new Error('the ES module project was not set up');
  const ranges = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
  ).peerDependencies;
  const peers = Object.fromEntries(Object.entries(ranges).map(([name, range]) => [name, lowest(name, range)]));
  lowestCdk8s = peers['cdk8s'];
  process.stdout.write(`lowest peers: ${JSON.stringify(peers)}\n`);
  const dir = project('lowest-peers', { type: 'module' }, {}, peers);
  copyFileSync(join(FIXTURE, 'main.mjs'), join(dir, 'main.mjs'));
  const installed = (name: string): string =>
    (JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  expect(Object.fromEntries(Object.keys(peers).map((name) => [name, installed(name)]))).toEqual(peers);
  run('node', ['main.mjs'], dir);
  expect(objectsOf([join(dir, 'dist/dev.k8s.yaml')])).toEqual(objectsOf([join(esmDir, 'dist/dev.k8s.yaml')]));
});

// Case package-duplicate-cdk8s-copies: npm nests a second cdk8s under a chart library.
test('duplicated layout: the app synthesizes beside a library with its own cdk8s; an App of that copy is refused', () => {
  if (esmDir === undefined || lowestCdk8s === undefined) throw new Error('the earlier projects were not set up');
  const dir = project(
    'duplicated',
    { type: 'module' },
    {},
    NEWEST_PEERS,
    { 'chart-lib': 'file:./chart-lib' },
    {
      'chart-lib/package.json': readFileSync(join(FIXTURE, 'chart-lib-package.json'), 'utf8').replace(
        'CDK8S_VERSION',
        lowestCdk8s,
      ),
      'chart-lib/index.js': readFileSync(join(FIXTURE, 'chart-lib.cjs'), 'utf8'),
    },
  );
  const nested = join(dir, 'node_modules/chart-lib/node_modules/cdk8s');
  expect(existsSync(nested)).toBe(true); // the layout is duplicated
  for (const f of ['main.mjs', 'duplicated.mjs']) copyFileSync(join(FIXTURE, f), join(dir, f));
  const out = jsonOf(dir, ['duplicated.mjs']);
  expect(out['refused']).toEqual({
    isTyped: true,
    reason: 'DuplicatePackageCopy',
    packageName: 'cdk8s',
    ours: realpathSync(join(dir, 'node_modules/cdk8s/lib/index.js')),
    theirs: realpathSync(join(nested, 'lib/index.js')),
  });
  const objects = yamlFiles(join(dir, 'dist')).flatMap((f) => objectsOf([f]));
  expect(objects).toEqual(expect.arrayContaining(objectsOf([join(esmDir, 'dist/dev.k8s.yaml')])));
  expect(objects.map((o) => (JSON.parse(o) as { metadata: { name: string } }).metadata.name)).toContain('lib');
});
