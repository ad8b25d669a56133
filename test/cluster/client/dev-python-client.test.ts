/**
 * Node kind: the REAL node alone, with workloads (a cluster of its own, `up.sh --real-node-only --workloads`: the
 * deployment and replicaset controllers, ServiceAccount admission and tokens). A new user's path through the client guide
 * (docs/guides/client.md), with examples/dev-python-client unchanged: the section's shell lines (synth, then
 * every phase file with `kubectl apply --server-side`) run as written from a project directory, then the section's
 * Python lines run with the hash-pinned client venv (k8s-agent-sandbox 1.0.8, tunnel mode: the client's own `kubectl
 * port-forward svc/sandbox-router-svc`). Both are read from the guide, so it cannot drift from what runs.
 * AGREEMENT: `agentplane verify --env dist/dev-python-client`, over the tunnel the client takes (`--transport router`),
 * verifies runtime-exec and runtime-files iff the client printed `hello`, and the router answers its health check there. The negative, same cluster: the
 * router Deployment scaled to zero, the client fails and `router` stays below verified, its next step naming the
 * router's pods (`RouterPodsNotReady`), not a URL.
 * Stand-ins, said here and in the README: the CRD phase is refused (the test cluster's CRDs carry a loopback `url:`
 * conversion webhook) and the loop goes on; the controller runs as the cluster's local process (`--controller
 * external`: its Deployment's image cannot be pulled here); the python runtime and router images are the project's
 * own builds (test-cluster/scripts/python-runtime-image.sh, images.sh) under the references the example pins.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { K8S_AGENT_SANDBOX_1_0_8 } from '../../../src/releases/index.js';
import { waitFor, type Cluster } from '../helpers.js';
import { describeRealNode, ownRealNodeCluster, realNode } from '../real-node-helpers.js';
import { kubectlDir, portForwardService, waitRouterReady } from './in-cluster-router.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ROUTER = K8S_AGENT_SANDBOX_1_0_8.modes.tunnel.routerService!;
const NS = 'dev-sandboxes';
/** What the tunnel client does through the router: the runtime's exec and file API (`--transport router` probes them so). */
const CLIENT_PATH = ['runtime-exec', 'runtime-files'] as const;

/** The first fenced block of `lang` in the client guide, docs/guides/client.md. */
function readmeBlock(lang: string): string {
  const guide = readFileSync(path.join(REPO, 'docs/guides/client.md'), 'utf8');
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(guide);
  if (!m) throw new Error(`docs/guides/client.md: no ${lang} block`);
  return m[1]!;
}

interface Capability {
  name: string;
  state: string;
  required: string;
  met: boolean;
  nextReason: string | null;
  evidence: Array<{ step: string; reason: string; value?: string }>;
}

const own = ownRealNodeCluster('pyclient', { workloads: true });
let c: Cluster;
let project: string;
let venv: string;
let env: NodeJS.ProcessEnv;
let kubectl: string;

/** The README's Python lines, run as the application: exit code and stdout. */
function runSnippet(): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = path.join(project, 'app.py');
  writeFileSync(file, readmeBlock('python') + '\n');
  return new Promise((resolve) => {
    execFile(
      path.join(venv, 'bin', 'python'),
      [file],
      { cwd: project, env: { PATH: env.PATH, KUBECONFIG: env.KUBECONFIG, HOME: project }, timeout: 180_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** `agentplane verify --env dist/dev-python-client` from the project directory; its report's capabilities by name. */
function verify(extra: string[]): { status: number | null; caps: Record<string, Capability> } {
  const r = spawnSync(
    'node',
    [
      path.join(REPO, 'bin/agentplane.js'),
      'verify',
      '--env',
      'dist/dev-python-client',
      '--controller',
      'external',
      '--samples',
      '3',
      ...extra,
      '-o',
      'json',
    ],
    { cwd: project, env, encoding: 'utf8', timeout: 300_000 },
  );
  if (!r.stdout) throw new Error(`verify printed no report (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  const report = JSON.parse(r.stdout) as { capabilities: Capability[] };
  return { status: r.status, caps: Object.fromEntries(report.capabilities.map((x) => [x.name, x])) };
}

const clientPathStates = (caps: Record<string, Capability>): Record<string, string> =>
  Object.fromEntries(CLIENT_PATH.map((n) => [n, caps[n]?.state ?? 'missing']));

describeRealNode('examples/dev-python-client unchanged on a real-node cluster with workloads: the README path', () => {
  beforeAll(async () => {
    c = own.start();
    const mirror = path.resolve(own.env.AGENTPLANE_MIRROR!);
    const setup = { ...own.env, AGENTPLANE_MIRROR: mirror };
    venv = execFileSync('bash', ['test/client/setup-venv.sh'], { cwd: REPO, encoding: 'utf8', env: setup })
      .trim()
      .split('\n')
      .pop()!;
    execFileSync('bash', ['test-cluster/scripts/python-runtime-image.sh', 'import', realNode(c).containerdSocket], {
      cwd: REPO,
      env: setup,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    // A project that has cdk8s-agentplane: `npx --no-install agentplane` resolves to this checkout's CLI (npm run build).
    project = mkdtempSync(path.join(tmpdir(), 'agentplane-pyclient-'));
    for (const f of ['package.json', 'bin', 'lib', 'node_modules', 'examples', 'src'])
      symlinkSync(path.join(REPO, f), path.join(project, f));
    kubectl = kubectlDir(setup);
    env = {
      ...setup,
      PATH: `${kubectl}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      KUBECONFIG: c.info.kubeconfig,
      CDK8S_CHECK_UPGRADE: 'false',
    };
  }, 600_000);

  afterAll(() => {
    own.stop();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  test('synth and the phase files applied as the README says: every file but the CRD phase is applied by kubectl', () => {
    const sh = readmeBlock('sh').split('\n');
    // The venv line is the reader's; the test's venv is the hash-pinned one.
    expect(sh[2]).toMatch(/^python3 -m venv \.venv && \.venv\/bin\/pip install k8s-agent-sandbox==1\.0\.8 /);
    const run = spawnSync('bash', ['-c', sh.slice(0, 2).join('\n')], {
      cwd: project,
      env,
      encoding: 'utf8',
      timeout: 180_000,
    });
    const dir = path.join(project, 'dist', 'dev-python-client');
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(files[0]).toBe('00-crds.yaml');
    // Each object of every other phase file is live and owned by kubectl's server-side apply.
    const notApplied: string[] = [];
    for (const f of files.slice(1)) {
      const live = JSON.parse(
        execFileSync('kubectl', ['get', '-f', path.join(dir, f), '--show-managed-fields', '-o', 'json'], {
          env,
          encoding: 'utf8',
        }),
      ) as { items?: unknown[] } & Record<string, unknown>;
      for (const o of (live.items ?? [live]) as Array<{
        kind: string;
        metadata: { name: string; managedFields?: Array<{ manager: string; operation: string }> };
      }>)
        if (!o.metadata.managedFields?.some((m) => m.manager === 'kubectl' && m.operation === 'Apply'))
          notApplied.push(`${f}: ${o.kind}/${o.metadata.name}`);
    }
    expect({ notApplied, exit: run.status }).toEqual({ notApplied: [], exit: 0 });
  }, 240_000);

  test("the README's Python lines print hello through the router Deployment's pod; verify over the client's tunnel agrees: verified", async () => {
    await waitRouterReady(c, ROUTER.defaultNamespace, 180_000);
    await waitFor(`two warm pool pods Ready in ${NS}`, 180_000, async () => {
      const pods = await c.core.listNamespacedPod({ namespace: NS });
      const ready = pods.items.filter((p) =>
        p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
      );
      return ready.length >= 2 ? true : undefined;
    });
    const app = await runSnippet();
    const lines = app.stdout.split('\n');
    expect({ code: app.code, first: lines[0], stderr: app.code === 0 ? '' : app.stderr.slice(-1500) }).toEqual({
      code: 0,
      first: 'hello',
      stderr: '',
    });
    expect(lines[2]).toMatch(/^b'hi' \[.*'notes\.txt'.*\]$/);
    const tunnel = await portForwardService(c, kubectl, ROUTER.defaultNamespace, ROUTER.name, ROUTER.port);
    try {
      const { status, caps } = verify(['--transport', 'router', '--router-url', tunnel.url]);
      const states = clientPathStates(caps);
      expect(states).toEqual({ 'runtime-exec': 'verified', 'runtime-files': 'verified' });
      expect(Object.values(states).every((s) => s === 'verified')).toBe(app.code === 0 && lines[0] === 'hello');
      // The router answered /healthz through the same tunnel. The example pins its router image by tag, so image skew
      // cannot be ruled out: router stays configured (PinnedByTagOnly), which is what the example requires of it, and
      // verify exits 0 as the README's reader sees it.
      const router = caps['router']!;
      expect(router.evidence.find((e) => e.step === 'compatible')?.reason).toBe('RouterHealthy');
      // The example's router has no Pod-IP cache: the client names the pod in X-Sandbox-Pod-IP, and so does verify.
      expect(router.evidence.find((e) => e.reason === 'ClientPathAnswered')?.value).toBe('X-Sandbox-Pod-IP');
      const unmet = Object.values(caps)
        .filter((x) => !x.met)
        .map((x) => `${x.name}: ${x.state} < ${x.required} (${x.nextReason})`);
      expect({ state: router.state, next: router.nextReason, unmet, exit: status }).toEqual({
        state: 'configured',
        next: 'PinnedByTagOnly',
        unmet: [],
        exit: 0,
      });
    } finally {
      tunnel.stop();
    }
  }, 600_000);

  test('router scaled to zero: the client fails, and verify keeps router below verified naming its pods (RouterPodsNotReady)', async () => {
    execFileSync('kubectl', ['-n', ROUTER.defaultNamespace, 'scale', 'deployment/sandbox-router', '--replicas=0'], {
      env,
    });
    await waitFor('no router pod left', 120_000, async () =>
      (await c.core.listNamespacedPod({ namespace: ROUTER.defaultNamespace, labelSelector: 'app=sandbox-router' }))
        .items.length === 0
        ? true
        : undefined,
    );
    const app = await runSnippet();
    expect(app.code).not.toBe(0);
    expect(app.stdout.split('\n')[0]).not.toBe('hello');
    // As the README's reader runs it first: no tunnel to hand over, since there is no router pod to forward to.
    const { caps } = verify([]);
    const router = caps['router']!;
    expect({ state: router.state, next: router.nextReason }).toEqual({
      state: 'discovered',
      next: 'RouterPodsNotReady',
    });
    expect(router.evidence.find((e) => e.reason === 'RouterPodsNotReady')?.value).toMatch(/^0 of 0 pods /);
    expect(router.state === 'verified').toBe(app.code === 0);
  }, 600_000);
});
