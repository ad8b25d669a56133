/**
 * Regenerates test/compat/matrix.json: for each release, runs the cluster tests (jest project `cluster`) on the real
 * test cluster at that release, reads the compatibility tuple of the cluster they ran on, and records it with the
 * pass/fail counts. `agentplane compat` reads the file to say which live combinations our tests covered.
 *
 *   npx tsx scripts/gen-compat-matrix.ts [--release v0.5.6] [--release v0.4.6] [--tests test/cluster/x.test.ts ...]
 *
 * Each release runs on its own cluster (run dir test-cluster/.run-matrix-<release>, pod net 60+) so a shared cluster of
 * other runs is neither reused nor stopped. `--tests` limits the run to some test files (default: every cluster test).
 * Needs the test cluster (test-cluster/README.md); exits 2 with the reason when it cannot be started.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../src/adapter/kubernetes/client.js';
import { MatrixSchema, type Matrix } from '../src/cli/commands/compat.js';
import { Cluster } from '../src/adapter/kubernetes/cluster.js';
import { DEFAULT_CONTROLLER, TUPLE_KEYS, type VerifyPlan } from '../src/verify/index.js';
import { readTuple } from '../src/verify/tuple-reader.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'test/compat/matrix.json');
const args = process.argv.slice(2);
const releases = args.flatMap((a, i) => (args[i - 1] === '--release' ? [a] : []));
const tests = args.flatMap((a, i) => (args[i - 1] === '--tests' ? [a] : []));
if (releases.length === 0) releases.push('v0.5.6', 'v0.4.6');

/** What the harness runs besides the controller (test-cluster/README.md): declared here, the API cannot tell. */
const HARNESS: Readonly<Record<string, { router: string; runtimeServer: string }>> = {
  'v0.5.6': { router: 'sandbox-router v0.5.6 (Go)', runtimeServer: 'sandboxd v0.5.6' },
  'v0.4.6': { router: 'not deployed', runtimeServer: 'none' },
};

/** The clients test/cluster/client/ drives, as `compat` prints them (tuple-reader's clientSdkEntry). */
const CLIENT_ROWS = [
  { clientSdk: 'k8s-agent-sandbox 1.0.8 (router)', runtimeServer: 'python-runtime v0.5.6 (upstream main.py)' },
] as const;

const matrix: Matrix = existsSync(OUT)
  ? MatrixSchema.parse(JSON.parse(readFileSync(OUT, 'utf8')))
  : { generatedBy: 'scripts/gen-compat-matrix.ts', rows: [] };

for (const [i, release] of releases.entries()) {
  const runDir = path.join(ROOT, 'test-cluster', `.run-matrix-${release}`);
  const env = {
    ...process.env,
    AGENTPLANE_TEST_CLUSTER_RELEASE: release,
    AGENTPLANE_TEST_CLUSTER_KEEP: '1',
    AGENTPLANE_TEST_CLUSTER_RUN: runDir,
    AGENTPLANE_TEST_CLUSTER_POD_NET: String(60 + i),
    NODE_OPTIONS: '--experimental-vm-modules',
  };
  const resultFile = path.join(ROOT, 'bench/.out', `jest-cluster-${release}.json`);
  mkdirSync(path.dirname(resultFile), { recursive: true });
  rmSync(resultFile, { force: true });
  const up = spawnSync('bash', [path.join(ROOT, 'test-cluster/scripts/up.sh'), '--release', release], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (up.status !== 0) {
    process.stderr.write(
      `gen-compat-matrix: the ${release} test cluster did not start (exit ${up.status}); see test-cluster/README.md\n`,
    );
    process.exit(2);
  }
  spawnSync(
    'npx',
    [
      'jest',
      '--selectProjects',
      'cluster',
      '--json',
      '--outputFile',
      resultFile,
      ...(tests.length ? ['--runTestsByPath', ...tests] : []),
    ],
    { cwd: ROOT, env, stdio: 'inherit' },
  );
  if (!existsSync(resultFile)) {
    process.stderr.write(
      `gen-compat-matrix: the cluster tests for ${release} wrote no result (is the test cluster buildable? see test-cluster/README.md)\n`,
    );
    process.exit(2);
  }
  const result = JSON.parse(readFileSync(resultFile, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    testResults: Array<{ name: string; assertionResults: Array<{ status: string }> }>;
  };
  const kubeconfig = path.join(runDir, 'kubeconfig');
  const plan: VerifyPlan = {
    environment: `test-cluster-${release}`,
    release: release as VerifyPlan['release'],
    source: 'test-cluster',
    controller: DEFAULT_CONTROLLER,
    runtimeClasses: [],
    templates: [],
    warmPools: [],
    networkPolicies: [],
    transport: 'direct',
    requirements: [],
    probeTimeoutMs: 5000,
    readyTimeoutMs: 120_000,
  };
  const tuple = await readTuple(new Cluster(KubeClient.connect({ kubeconfig })), plan, 'external');
  const values: Record<string, string> = Object.fromEntries(TUPLE_KEYS.map((k) => [k, tuple[k].value]));
  values.controller = `agent-sandbox-controller ${release} (local process)`;
  Object.assign(values, HARNESS[release]);
  execFileSync('bash', [path.join(ROOT, 'test-cluster/scripts/down.sh')], { cwd: ROOT, env, stdio: 'inherit' });
  matrix.rows = matrix.rows.filter((r) => r.release !== release);
  matrix.rows.push({
    release,
    tuple: values,
    passed: result.numPassedTests,
    failed: result.numFailedTests,
    testFiles: result.testResults.map((t) => path.relative(ROOT, t.name)).sort(),
    ranAt: new Date().toISOString(),
  });
  // The client contract files run an application's client against the upstream python runtime: one row per client.
  const clientFiles = result.testResults.filter((t) => path.relative(ROOT, t.name).startsWith('test/cluster/client/'));
  for (const client of clientFiles.length > 0 ? CLIENT_ROWS : []) {
    const counted = clientFiles.flatMap((t) => t.assertionResults);
    matrix.rows.push({
      release,
      tuple: { ...values, runtimeServer: client.runtimeServer, clientSdk: client.clientSdk },
      passed: counted.filter((a) => a.status === 'passed').length,
      failed: counted.filter((a) => a.status === 'failed').length,
      testFiles: clientFiles.map((t) => path.relative(ROOT, t.name)).sort(),
      ranAt: new Date().toISOString(),
    });
  }
}
matrix.rows.sort((a, b) => a.release.localeCompare(b.release));
mkdirSync(path.dirname(OUT), { recursive: true });
writeFileSync(OUT, `${JSON.stringify({ generatedBy: 'scripts/gen-compat-matrix.ts', rows: matrix.rows }, null, 2)}\n`);
process.stdout.write(`wrote ${path.relative(ROOT, OUT)} (${matrix.rows.length} row(s))\n`);
