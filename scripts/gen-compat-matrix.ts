/**
 * Regenerates test/compat/matrix.json: for each release, runs the cluster tests (jest project `cluster`) on the real
 * test cluster at that release, reads the compatibility tuple of the cluster they ran on, and records it with the
 * pass/fail counts. `agentplane compat` reads the file to say which live combinations our tests covered.
 *
 *   npx tsx scripts/gen-compat-matrix.ts [--release v0.5.6] [--release v0.4.6] [--tests test/cluster/x.test.ts ...]
 *   npx tsx scripts/gen-compat-matrix.ts --release v1.0.3 --tests <files>   (v1.0.3: not in the default set; most
 *     cluster tests assume the global v0.5.6 cluster, so its rows come from the release-agnostic files named)
 *
 * Each release runs on its own cluster (run dir test-cluster/.run-matrix-<release>, pod net 60+) so a shared cluster of
 * other runs is neither reused nor stopped; v0.5.6 with the real node beside the kwok nodes (its images carry v0.5.6),
 * the others kwok-only. `--tests` limits the run to some test files and records one row per file, replacing only the
 * rows of the same release, tuple and file (default: every cluster test, one row replacing all rows of the release).
 * Needs the test cluster (test-cluster/README.md); exits 2 with the reason when it cannot be started.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../src/adapter/kubernetes/client.js';
import { MatrixSchema, type Matrix } from '../src/verify/index.js';
import { Cluster } from '../src/adapter/kubernetes/cluster.js';
import { DEFAULT_CONTROLLER, TUPLE_KEYS, type VerifyPlan } from '../src/verify/index.js';
import { readTuple } from '../src/verify/tuple-reader.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'test/compat/matrix.json');
const args = process.argv.slice(2);
const releases = args.flatMap((a, i) => (args[i - 1] === '--release' ? [a] : []));
/** `--tests a b …`: every argument after `--tests` up to the next option. */
const tests = args.flatMap((a, i) => {
  const at = args.lastIndexOf('--tests', i - 1);
  return at >= 0 && !a.startsWith('--') && args.slice(at + 1, i).every((x) => !x.startsWith('--')) ? [a] : [];
});
if (releases.length === 0) releases.push('v0.5.6', 'v0.4.6');

/** What the harness runs besides the controller (test-cluster/README.md): declared here, the API cannot tell. */
const HARNESS: Readonly<Record<string, { router: string; runtimeServer: string }>> = {
  'v0.5.6': { router: 'sandbox-router v0.5.6 (Go)', runtimeServer: 'sandboxd v0.5.6' },
  'v0.4.6': { router: 'not deployed', runtimeServer: 'none' },
  'v1.0.3': { router: 'sandbox-router v1.0.3 (Go)', runtimeServer: 'sandboxd v1.0.3 (--listen-host, pod IP)' },
};

const PY = 'python-runtime v0.5.6 (upstream main.py)';
const REAL_CLIENT = 'test/cluster/client/k8s-agent-sandbox-real-node.test.ts';
/**
 * The clients test/cluster/client/ drives, as `compat` prints them (tuple-reader's clientSdkEntry), with the files
 * that drive each and what differs from the cluster's tuple: the real-node file runs on a real-node-only cluster of its
 * own, and its in-cluster environment declares no router (the client dials the pod).
 */
const CLIENT_ROWS: ReadonlyArray<{
  clientSdk: string;
  files: readonly string[];
  tuple: Readonly<Record<string, string>>;
}> = [
  {
    clientSdk: 'k8s-agent-sandbox 1.0.8 (router)',
    files: ['test/cluster/client/k8s-agent-sandbox.test.ts'],
    tuple: {},
  },
  {
    clientSdk: 'k8s-agent-sandbox 1.0.8 (tunnel)',
    files: [REAL_CLIENT],
    tuple: { containerRuntime: 'containerd://2.2.9' },
  },
  {
    clientSdk: 'k8s-agent-sandbox 1.0.8 (in-cluster)',
    files: [REAL_CLIENT],
    tuple: { containerRuntime: 'containerd://2.2.9', router: 'not deployed' },
  },
];

/**
 * What a real-node test file proves live (its row's `proves`): declared here, recorded only when the file ran with
 * the real node and every test in it passed.
 */
const PROVES: Readonly<Record<string, readonly string[]>> = {
  'test/cluster/real-node-runtimes.test.ts': [
    'RuntimeClass handler runsc boots gVisor in a real pod; the default handler runc runs on the host kernel',
  ],
  'test/cluster/verify/verify-real-node.test.ts': [
    'runtime-exec verified over the port-forward transport (API server, kubelet, containerd)',
    'runtime-class (handler runsc) verified from inside the sandbox',
    'an unknown handler (FailedCreatePodSandBox) and a silent runtime stay below verified',
  ],
  'test/cluster/verify/verify-dev-gvisor.test.ts': [
    'examples/dev-gvisor applied unchanged verifies with exit 0 over port-forward on a real-node-only cluster',
  ],
  'test/cluster/cases/netpol-router-peer-mismatch.real-node.test.ts': [
    'case netpol-router-peer-mismatch: the router the verifier finds not admitted is refused by kube-router; the admitted one connects',
  ],
  'test/cluster/cases/router-cases.real-node.test.ts': [
    'in-cluster router (the construct output in a pod, reached by port-forward of its Service): case router-warm-nxdomain, cache off, 502 by name, below verified; cached, 20/20',
    'case router-podip-ssrf: the in-cluster tokenreview router refuses credential-less requests; no canary from outside the node, so below verified',
  ],
  'test/cluster/cases/router-podip-ssrf.verifier-job.real-node.test.ts': [
    'router verified from the synthesized VerifierJob in a pod against the in-cluster tokenreview router: the canary on its pod IP reached, (a)-(c) refused, nothing dialled',
    'case router-podip-ssrf: an acknowledged allow-all router dials the VerifierJob canary a credential-less request names; below verified',
  ],
  'test/cluster/verify/verify-suspend-real-node.test.ts': [
    'suspend-resume verified over port-forward on a real pod, also as the VerifierAccess identity with suspendResume; Forbidden without',
  ],
  'test/cluster/verify/verify-real-node-negatives.test.ts': [
    'NetworkPolicy enforced by kube-router; with kube-router stopped and its rules gone network-isolation stays below verified',
    'a RuntimeClass gvisor whose handler is runc: isolation stays below verified (HostKernel)',
  ],
};

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
    AGENTPLANE_TEST_CLUSTER_REAL_NODE: release === 'v0.5.6' ? '1' : '0',
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
  const realNode = values.containerRuntime?.includes('containerd://') ?? false;
  const proves = (files: readonly string[], failed: number): Matrix['rows'][number]['proves'] => {
    const p =
      realNode && failed === 0 ? files.flatMap((f) => (PROVES[f] ?? []).map((what) => ({ what, test: f }))) : [];
    return p.length > 0 ? p : undefined;
  };
  const fileRows =
    tests.length > 0
      ? result.testResults.map((t) => ({
          files: [path.relative(ROOT, t.name)],
          passed: t.assertionResults.filter((a) => a.status === 'passed').length,
          failed: t.assertionResults.filter((a) => a.status === 'failed').length,
        }))
      : [
          {
            files: result.testResults.map((t) => path.relative(ROOT, t.name)).sort(),
            passed: result.numPassedTests,
            failed: result.numFailedTests,
          },
        ];
  const sameRow = (r: Matrix['rows'][number], files: readonly string[]): boolean =>
    r.release === release &&
    JSON.stringify(r.tuple) === JSON.stringify(values) &&
    JSON.stringify(r.testFiles) === JSON.stringify(files);
  matrix.rows =
    tests.length > 0
      ? matrix.rows.filter((r) => !fileRows.some((f) => sameRow(r, f.files)))
      : matrix.rows.filter((r) => r.release !== release);
  for (const f of fileRows) {
    const p = proves(f.files, f.failed);
    matrix.rows.push({
      release,
      tuple: values,
      passed: f.passed,
      failed: f.failed,
      testFiles: f.files,
      ranAt: new Date().toISOString(),
      ...(p ? { proves: p } : {}),
    });
  }
  // The client contract files run an application's client against the upstream python runtime: one row per client.
  for (const client of CLIENT_ROWS) {
    const clientFiles = result.testResults.filter((t) => client.files.includes(path.relative(ROOT, t.name)));
    if (clientFiles.length === 0) continue;
    const counted = clientFiles.flatMap((t) => t.assertionResults);
    const tuple = { ...values, ...client.tuple, runtimeServer: PY, clientSdk: client.clientSdk };
    matrix.rows = matrix.rows.filter((r) => r.release !== release || JSON.stringify(r.tuple) !== JSON.stringify(tuple));
    matrix.rows.push({
      release,
      tuple,
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
