/**
 * The body of the client agreement test (verified ⇔ the official client's calls succeed), shared by the release's
 * files: k8s-agent-sandbox.test.ts (v0.5.6, the global cluster) and k8s-agent-sandbox-v1.0.3.test.ts (a v1.0.3 cluster
 * of its own). The official Python client k8s-agent-sandbox 1.0.8 (venv from test/client/setup-venv.sh, hash-pinned)
 * runs as an application would — create from a warm pool, `echo hello`, write, read, list, exists, delete — against an
 * environment AgentPlane synthesized from the release (client, pool, router, python runtime), through the cluster's
 * real Go sandbox-router to the upstream python runtime of that release (the stand-in runs its main.py per pod).
 * AGREEMENT: AgentPlane's verdict (runtime-exec and runtime-files `verified`, the router's path to the runtime proven)
 * holds iff every client call succeeds. The negative is the same environment with the runtime silent (stand-in mode
 * `none`): the client fails and the verdict stays below. Modes that cannot run on kwok are listed as skipped with the
 * reason.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { AgentEnvironment, descriptorJson, sandboxdPodSpec, SANDBOXD_RUNTIME } from '../../../src/constructs/index.js';
import { loadRelease, type LoadedRelease } from '../../../src/releases/index.js';
import { synthesizeEnvironment } from '../../../src/synth/index.js';
import { planFromDescriptor, runVerify } from '../../../src/verify/index.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import { readRuntimes, RUNTIME_ANNOTATION, type RuntimeRecord } from '../../../test-cluster/runtime.js';
import { freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { MIRROR } from '../../mirror.js';

export { MIRROR };
const CAPS = ['runtime-exec', 'runtime-files'] as const;

export interface Step {
  ok: boolean;
  value?: unknown;
  error?: string;
  message?: string;
}

export interface AgreementOptions {
  /** The release the environment is synthesized from; the cluster runs it. */
  readonly release: 'v0.5.6' | 'v1.0.3';
  /** The cluster: `start` (in beforeAll) returns it, `stop` (afterAll) stops it when the file started it. */
  readonly cluster: { readonly runDir: string; readonly start: () => Cluster; readonly stop?: () => void };
  /** Modes not driven here, with the fact that keeps each off kwok (listed as skipped). */
  readonly notHere: Readonly<Record<string, string>>;
  /** Two hex characters that start this file's verifier run ids (`<prefix>0001`, `<prefix>0002`). */
  readonly runIdPrefix: string;
  /** Extra checks on a healthy run: the runtime records the stand-in served for the environment's namespace. */
  readonly checkHealthy?: (c: Cluster, served: RuntimeRecord[]) => void;
  /**
   * Also drive mode `sandboxd-in-cluster-pod-ip` (the client straight to sandboxd on `Sandbox.status.podIPs`, REST 8080
   * and gRPC 9090), for a release whose sandboxd listens on the pod network. `declared: false` when synthesis refuses
   * to declare that client for the release: the environment then declares no client, and the plan asks for
   * runtime-files itself (a declared client would add it).
   */
  readonly sandboxdPodIP?: { readonly declared: boolean; readonly why?: string };
}

/** Registers the agreement tests (positive, negative, skipped modes) for `o.release`. */
export function agreementSuite(o: AgreementOptions): void {
  const PY_IMAGE = `registry.local/agentplane-test/python-runtime-sandbox:${o.release}`;
  const ROUTER_IMAGE = `registry.local/agentplane-test/sandbox-router:${o.release}`;
  let c: Cluster;
  let loaded: LoadedRelease;
  let venv: string;

  beforeAll(async () => {
    c = o.cluster.start();
    loaded = await loadRelease(o.release, { mirror: MIRROR });
    venv = execFileSync('bash', ['test/client/setup-venv.sh'], {
      encoding: 'utf8',
      env: { ...process.env, AGENTPLANE_MIRROR: path.resolve(MIRROR) },
    })
      .trim()
      .split('\n')
      .pop()!;
  }, 900_000);

  afterAll(() => o.cluster.stop?.(), 60_000);

  /** Synthesizes the environment (client router mode, pool, router, python runtime) in `ns`; applies template and pool; writes environment.json. */
  async function environment(ns: string, runtime: 'python-runtime' | 'none'): Promise<{ dir: string; pool: string }> {
    const env = new AgentEnvironment(new App(), 'client-contract', {
      release: loaded,
      install: false,
      defaultNamespace: ns,
      createNamespaces: false,
    });
    const rc = env.addRuntimeClass('standin', {
      preset: 'gvisor',
      name: 'standin',
      handler: 'standin',
      scheduling: { nodeSelector: { 'agentplane.io/runtime': 'standin' } },
    });
    const q = { cpu: k8s.Quantity.fromString('500m'), memory: k8s.Quantity.fromString('512Mi') };
    const template = env.addTemplate('python', {
      name: 'python',
      runtimeClass: rc,
      podSpec: {
        containers: [
          {
            name: 'python-runtime',
            image: PY_IMAGE,
            ports: [{ containerPort: 8888 }],
            resources: { limits: q, requests: q },
          },
        ],
      },
      runtime: { kind: 'python-runtime', container: 'python-runtime', ports: [8888] },
      podMetadata: { annotations: { [RUNTIME_ANNOTATION]: runtime } },
    });
    const pool = env.addWarmPool('pool', { name: 'python', template, replicas: 1 });
    env.addRouter('router', {
      image: ROUTER_IMAGE,
      authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
      sandboxPorts: [8888],
      callers: [],
    });
    env.addClient({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode: 'router', warmPool: pool });
    const s = synthesizeEnvironment(env);
    // The cluster's router, RuntimeClass and install come from test-cluster/env; this environment adds its template and pool.
    const objects = s.objects
      .map((x) => x.object as unknown as KubeObject)
      .filter((x) => x.kind === 'SandboxTemplate' || x.kind === 'SandboxWarmPool');
    await serverSideApply(c.info.kubeconfig, objects);
    const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-client-contract-'));
    writeFileSync(path.join(dir, 'environment.json'), descriptorJson(s.descriptor));
    // kwok runs no readiness probe: the template's probe on GET / would hold the pod un-Ready until the runtime listens.
    // Stand in for it by waiting until the stand-in serves the pool's pod (or, for `none`, has recorded it silent).
    await waitFor(`stand-in runtime for the pool in ${ns}`, 60_000, async () =>
      readRuntimes(o.cluster.runDir).find(
        (r) => r.namespace === ns && r.mode === runtime && (runtime === 'none' || r.pid !== null),
      ),
    );
    return { dir, pool: pool.name };
  }

  /** Runs the application (test/client/app.py) with the client in `mode` (router: against the cluster's router). */
  function runApp(ns: string, pool: string, mode = 'router'): Promise<Record<string, Step>> {
    return new Promise((resolve, reject) => {
      execFile(
        path.join(venv, 'bin', 'python'),
        [
          'test/client/app.py',
          mode,
          ns,
          pool,
          ...(mode === 'router' ? [`http://127.0.0.1:${c.info.ports.routerHttp}`] : []),
        ],
        {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', KUBECONFIG: c.info.kubeconfig, HOME: tmpdir() },
          timeout: 240_000,
          maxBuffer: 1 << 20,
        },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`app.py failed: ${err.message}\n${stderr.slice(-2000)}`));
          else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, Step>);
        },
      );
    });
  }

  async function verdict(dir: string, runId: string, askFiles = false): Promise<VerifyReport> {
    const described = planFromDescriptor(JSON.parse(readFileSync(path.join(dir, 'environment.json'), 'utf8')), dir, {
      transport: 'direct',
      routerUrl: `http://127.0.0.1:${c.info.ports.routerHttp}`,
      probeTimeoutMs: 3_000,
      readyTimeoutMs: 60_000,
    });
    expect(described.release).toBe(o.release);
    const plan = askFiles
      ? {
          ...described,
          requirements: [
            ...described.requirements.filter((r) => r.name !== 'runtime-files'),
            { name: 'runtime-files' as const, required: 'verified' as const },
          ],
        }
      : described;
    const { report } = await runVerify({
      plan,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      loaded,
      controllerMode: 'external',
      progress: () => undefined,
      runId,
    });
    return report;
  }

  const clientSucceeded = (steps: Record<string, Step>): boolean =>
    ['create', 'execute', 'write', 'read', 'list', 'exists', 'delete'].every((s) => steps[s]?.ok === true) &&
    (steps['execute']!.value as { stdout: string; exit_code: number }).stdout === 'hello\n' &&
    steps['read']!.value === 'written by k8s-agent-sandbox';

  const states = (r: VerifyReport): Record<string, string> =>
    Object.fromEntries(CAPS.map((n) => [n, r.capabilities.find((x) => x.name === n)?.state ?? 'missing']));

  /** Whether the router carried the declared client's calls: its `verified`-step client-path evidence is proven. */
  const routerPathProven = (r: VerifyReport): boolean =>
    r.capabilities
      .find((x) => x.name === 'router')!
      .evidence.some((e) => e.step === 'verified' && e.verdict === 'proven' && e.reason === 'ClientPathAnswered');

  const agrees = (r: VerifyReport): boolean => CAPS.every((n) => states(r)[n] === 'verified') && routerPathProven(r);

  describe('k8s-agent-sandbox 1.0.8, router mode, python runtime through the Go sandbox-router', () => {
    test('healthy runtime: every client call succeeds and AgentPlane verifies runtime-exec, runtime-files and the router path (agreement)', async () => {
      expect(c.info.release).toBe(o.release);
      const ns = await freshNamespace(c, 'client');
      const { dir, pool } = await environment(ns, 'python-runtime');
      o.checkHealthy?.(
        c,
        readRuntimes(o.cluster.runDir).filter((r) => r.namespace === ns),
      );
      const steps = await runApp(ns, pool);
      expect(steps['execute']).toEqual({
        ok: true,
        value: expect.objectContaining({ stdout: 'hello\n', exit_code: 0 }),
      });
      expect(steps['list']).toEqual({ ok: true, value: expect.arrayContaining(['contract.txt']) });
      expect(steps['exists']).toEqual({ ok: true, value: true });
      expect(clientSucceeded(steps)).toBe(true);
      const report = await verdict(dir, `${o.runIdPrefix}0001`);
      expect(states(report)).toEqual({ 'runtime-exec': 'verified', 'runtime-files': 'verified' });
      expect(routerPathProven(report)).toBe(true);
      expect(agrees(report)).toBe(clientSucceeded(steps));
      const router = report.capabilities.find((x) => x.name === 'router')!;
      expect(router.state).not.toBe('verified');
      expect(router.nextReason).not.toMatch(/^ClientPath/);
      expect(router.nextReason).not.toMatch(/^RouterUpstream/);
    }, 600_000);

    test('silent runtime (stand-in none): the client fails and AgentPlane stays below verified (agreement)', async () => {
      const ns = await freshNamespace(c, 'client-silent');
      const { dir, pool } = await environment(ns, 'none');
      const steps = await runApp(ns, pool);
      expect(steps['create']?.ok).toBe(true);
      expect(steps['execute']).toEqual(expect.objectContaining({ ok: false, error: 'SandboxRequestError' }));
      expect(clientSucceeded(steps)).toBe(false);
      const report = await verdict(dir, `${o.runIdPrefix}0002`);
      expect(states(report)['runtime-exec']).not.toBe('verified');
      expect(agrees(report)).toBe(clientSucceeded(steps));
    }, 600_000);

    // Listed as skipped, with the fact that keeps each off kwok.
    test.skip.each(Object.entries(o.notHere))('mode %s (skipped: %s)', () => undefined);
  });

  const sd = o.sandboxdPodIP;
  if (!sd) return;

  /** A sandboxd template and warm pool in `ns` (runtime `runtime`); declares the client only when `sd.declared`. */
  async function sandboxdEnvironment(ns: string, runtime: 'sandboxd' | 'none'): Promise<{ dir: string; pool: string }> {
    const env = new AgentEnvironment(new App(), 'client-contract-sandboxd', {
      release: loaded,
      install: false,
      defaultNamespace: ns,
      createNamespaces: false,
    });
    const rc = env.addRuntimeClass('standin', {
      preset: 'gvisor',
      name: 'standin',
      handler: 'standin',
      scheduling: { nodeSelector: { 'agentplane.io/runtime': 'standin' } },
    });
    const template = env.addTemplate('sandboxd', {
      name: 'sandboxd',
      runtimeClass: rc,
      podSpec: sandboxdPodSpec({ image: `registry.local/agentplane-test/sandboxd:${o.release}` }),
      runtime: SANDBOXD_RUNTIME,
      podMetadata: { annotations: { [RUNTIME_ANNOTATION]: runtime } },
    });
    const pool = env.addWarmPool('pool', { name: 'sandboxd', template, replicas: 1 });
    if (sd!.declared)
      env.addClient({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode: 'sandboxd-in-cluster-pod-ip', warmPool: pool });
    const s = synthesizeEnvironment(env);
    const objects = s.objects
      .map((x) => x.object as unknown as KubeObject)
      .filter((x) => x.kind === 'SandboxTemplate' || x.kind === 'SandboxWarmPool');
    await serverSideApply(c.info.kubeconfig, objects);
    const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-client-contract-'));
    writeFileSync(path.join(dir, 'environment.json'), descriptorJson(s.descriptor));
    await waitFor(`stand-in runtime for the pool in ${ns}`, 60_000, async () =>
      readRuntimes(o.cluster.runDir).find(
        (r) => r.namespace === ns && r.mode === runtime && (runtime === 'none' || r.pid !== null),
      ),
    );
    return { dir, pool: pool.name };
  }

  const sandboxdAgrees = (r: VerifyReport): boolean => CAPS.every((n) => states(r)[n] === 'verified');

  describe(`k8s-agent-sandbox 1.0.8, mode sandboxd-in-cluster-pod-ip, straight to sandboxd on the pod IP${sd.why ? ` (${sd.why})` : ''}`, () => {
    test('healthy sandboxd: over the pod IP every client call but list(".") (upstream 307, below) succeeds and AgentPlane verifies runtime-exec and runtime-files (agreement)', async () => {
      const ns = await freshNamespace(c, 'client-sd');
      const { dir, pool } = await sandboxdEnvironment(ns, 'sandboxd');
      const steps = await runApp(ns, pool, 'sandboxd-in-cluster-pod-ip');
      expect(steps['execute']).toEqual({
        ok: true,
        value: expect.objectContaining({ stdout: 'hello\n', exit_code: 0 }),
      });
      // The client dialled sandboxd's REST listener on the Sandbox's pod IP (the pod net of this cluster).
      expect(steps['url']).toEqual({
        ok: true,
        value: expect.stringMatching(new RegExp(`^http://127\\.${c.info.podNet}\\.\\d+\\.\\d+:8080$`)),
      });
      // KNOWN DISAGREEMENT (upstream, found here): `files.list(".")` fails on sandboxd. The client quotes "." as %2E
      // (`files/filesystem.py@1.0.8`), requests/urllib3 normalizes it back to "." (GET /v1/files/.), sandboxd's Go
      // ServeMux answers that uncleaned path with 307 to /v1/files/, and the client follows no redirects
      // (`connector.py@1.0.8`). sandboxd itself lists %2E fine (200). AgentPlane's runtime-files probe does not list the
      // root that way, so it stays verified: for this one call the agreement does not hold (see the branch report).
      // prose: the client's own error text carries the redirected path, which is the disagreement's evidence
      expect(steps['list']).toEqual({
        ok: false,
        error: 'SandboxRequestError',
        message: expect.stringContaining('/v1/files/%2E'),
      });
      const { list: _list, ...others } = steps;
      expect(clientSucceeded({ ...others, list: { ok: true } })).toBe(true);
      const report = await verdict(dir, `${o.runIdPrefix}0003`, !sd.declared);
      expect(states(report)).toEqual({ 'runtime-exec': 'verified', 'runtime-files': 'verified' });
      // Agreement on every other call of the application.
      expect(sandboxdAgrees(report)).toBe(clientSucceeded({ ...others, list: { ok: true } }));
    }, 600_000);

    test('silent runtime (stand-in none): the client fails and AgentPlane stays below verified (agreement)', async () => {
      const ns = await freshNamespace(c, 'client-sd-silent');
      const { dir, pool } = await sandboxdEnvironment(ns, 'none');
      const steps = await runApp(ns, pool, 'sandboxd-in-cluster-pod-ip');
      expect(steps['create']?.ok).toBe(true);
      expect(steps['execute']?.ok).toBe(false);
      expect(clientSucceeded(steps)).toBe(false);
      const report = await verdict(dir, `${o.runIdPrefix}0004`, !sd.declared);
      expect(states(report)['runtime-exec']).not.toBe('verified');
      expect(sandboxdAgrees(report)).toBe(clientSucceeded(steps));
    }, 600_000);
  });
}
