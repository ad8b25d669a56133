/**
 * Node kind: the REAL node beside kwok nodes, on a v1.0.3 cluster of this file's own (`up.sh --release v1.0.3`, run dir
 * `test-cluster/.run-v103-node-<pid>`). It runs beside the global (v0.5.6) cluster: the node's netns, cgroup root and
 * containerd state follow from the run dir (test-cluster/scripts/node.sh), its addresses live inside that netns, and
 * the kwok pod net is this file's own (61). What a new user does (README "A first environment"): synthesize a
 * loadRelease('v1.0.3') environment (fixtures/new-user-v1.0.3.ts: gVisor RuntimeClass scheduled onto the real node,
 * sandboxd templates with `release: 'v1.0.3'`, a warm pool, one NetworkPolicy per template), apply its phase files in
 * order (the CRD phase aside: up.sh installed the release's CRDs), run `agentplane verify --env <dir>` with the default
 * transport (port-forward) — runtime-class/gvisor, runtime-exec and network-isolation verified, conversion not
 * applicable. Negative: the RuntimeClass `gvisor` recreated with handler runc — the runtime still answers, dmesg names
 * the host kernel, runtime-class/gvisor stays below verified.
 * Stand-ins, said here: the controller runs as the test cluster's local process (`--controller external`); sandboxd's
 * image is the project's own build of v1.0.3 (test-cluster/scripts/images.sh) under the reference the README pins.
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import { connect, waitFor, type Cluster } from '../helpers.js';
import { describeRealNode } from '../real-node-helpers.js';
import { plan, withoutRouter } from './verifier-env.js';
import { MIRROR } from '../../mirror.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const runDir = path.join(repo, 'test-cluster', `.run-v103-node-${process.pid}`);
// Release and pod net are this cluster's own: inherited values would be the global cluster's.
const {
  AGENTPLANE_TEST_CLUSTER_POD_NET: _podNet,
  AGENTPLANE_TEST_CLUSTER_RELEASE: _release,
  AGENTPLANE_TEST_CLUSTER_REAL_NODE: _realNode,
  ...inherited
} = process.env;
const env: NodeJS.ProcessEnv = {
  ...inherited,
  AGENTPLANE_TEST_CLUSTER_RUN: runDir,
  AGENTPLANE_TEST_CLUSTER_POD_NET: '61',
  AGENTPLANE_MIRROR: MIRROR,
};

interface Report {
  capabilities: Array<{
    name: string;
    state: string;
    nextReason?: string | null;
    evidence: Array<{
      step: string;
      verdict: string;
      reason?: string;
      field?: string;
      value?: string;
      message?: string;
    }>;
  }>;
}

describeRealNode('a new user’s v1.0.3 environment on the real node', () => {
  let c: Cluster;
  let out: string;
  let dir: string;

  /** `agentplane verify --env <dir>` with the default transport; exit status and JSON report. */
  function verify(): { status: number | null; report: Report; stderr: string } {
    const r = spawnSync(
      'node',
      [
        'bin/agentplane.js',
        'verify',
        '--env',
        dir,
        '--kubeconfig',
        c.info.kubeconfig,
        '--controller',
        'external',
        '-o',
        'json',
      ],
      { cwd: repo, env, encoding: 'utf8', timeout: 420_000 },
    );
    let report: Report;
    try {
      report = JSON.parse(r.stdout) as Report;
    } catch {
      throw new Error(`verify gave no JSON report (exit ${r.status}): ${r.stderr}`);
    }
    return { status: r.status, report, stderr: r.stderr };
  }
  const cap = (report: Report, name: string) => {
    const found = report.capabilities.find((x) => x.name === name);
    if (!found) throw new Error(`no capability ${name} in ${report.capabilities.map((x) => x.name).join(', ')}`);
    return found;
  };

  beforeAll(async () => {
    const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--release', 'v1.0.3'], {
      cwd: repo,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (up.status !== 0) throw new Error(`up.sh --release v1.0.3 failed (exit ${up.status}); logs in ${runDir}/logs`);
    c = connect(runDir);
    expect({ release: c.info.release, node: c.info.realNode?.name }).toEqual({
      release: 'v1.0.3',
      node: 'agentplane-node',
    });
    out = mkdtempSync(path.join(tmpdir(), 'agentplane-v103-node-'));
    const synth = spawnSync(
      'node',
      [
        'bin/agentplane.js',
        'synth',
        'test/cluster/verify/fixtures/new-user-v1.0.3.ts',
        '--out',
        out,
        // the lock a new user commits beside the module; kept out of the checkout here
        '--lock',
        path.join(out, 'agentplane.lock.json'),
      ],
      { cwd: repo, env, encoding: 'utf8' },
    );
    if (synth.status !== 0) throw new Error(`synth failed: ${synth.stderr}`);
    dir = path.join(out, 'dev');
    const files = readdirSync(dir)
      .filter((f) => /^\d\d-.*\.yaml$/.test(f) && f !== '00-crds.yaml')
      .sort();
    expect(files[0]).toBe('01-namespaces.yaml');
    for (const f of files) {
      const objects = parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))
        .map((d) => d.toJS() as KubeObject)
        .filter((o) => o !== null);
      await serverSideApply(c.info.kubeconfig, objects);
    }
  }, 600_000);

  afterAll(() => {
    spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: repo, env, stdio: 'ignore' });
    if (out) rmSync(out, { recursive: true, force: true });
  });

  test('applied onto the v1.0.3 cluster, it verifies with the default transport: gVisor, runtime-exec and network isolation verified', async () => {
    // The warm pool's pods run on the real node under runsc (RuntimeClass scheduling put them there).
    await waitFor(
      'the warm pool’s two pods Running on the real node',
      180_000,
      async () => {
        const pods = await c.core.listNamespacedPod({
          namespace: 'agent-sandboxes',
          labelSelector: 'agentplane.dev/template=shell',
        });
        const running = pods.items.filter(
          (p) =>
            p.status?.phase === 'Running' &&
            p.spec?.nodeName === 'agentplane-node' &&
            p.spec.runtimeClassName === 'gvisor',
        );
        return running.length >= 2 ? true : undefined;
      },
      1000,
    );
    const { status, report, stderr } = verify();
    const states = Object.fromEntries(report.capabilities.map((r) => [r.name, r.state]));
    expect({ status, states }).toEqual({
      status: 0,
      states: expect.objectContaining({
        'runtime-exec': 'verified',
        'runtime-class/gvisor': 'verified',
        'network-isolation': 'verified',
      }),
    });
    expect(stderr).not.toMatch(/error/i);
    // Case gvisor-evidence-markers: a kernel unlike the node's and a gVisor marker read from a file.
    const gv = cap(report, 'runtime-class/gvisor').evidence;
    expect(gv.find((e) => e.reason === 'KernelDiffersFromNode')?.verdict).toBe('proven');
    const marker = gv.find((e) => e.reason === 'GvisorKernel');
    expect([marker?.verdict, marker?.field]).toEqual(['proven', '/proc/version']);
    const observed = cap(report, 'network-isolation').evidence.find((e) => e.reason === 'EnforcementObserved');
    expect(observed?.verdict).toBe('proven');
    // A v1.0 environment declares no conversion requirement (src/constructs/environment.ts): the CLI report has none.
    expect(report.capabilities.map((r) => r.name)).not.toContain('conversion');
  }, 600_000);

  test('conversion on the live v1.0.3 CRDs: not applicable (unsupported, ReleaseHasNoConversion)', async () => {
    const p = withoutRouter(
      plan(c, [], {
        release: 'v1.0.3',
        transport: 'port-forward',
        requirements: requirementsFor(['sandbox-api', 'extensions-api', 'conversion']),
      }),
    );
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const conversion = report.capabilities.find((r) => r.name === 'conversion')!;
    // The verdict follows the release; what the cluster serves agrees: v1beta1 only, no conversion webhook.
    const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crds = await Promise.all(
      [
        'sandboxes.agents.x-k8s.io',
        'sandboxtemplates.extensions.agents.x-k8s.io',
        'sandboxwarmpools.extensions.agents.x-k8s.io',
        'sandboxclaims.extensions.agents.x-k8s.io',
      ].map((name) => ext.readCustomResourceDefinition({ name })),
    );
    for (const crd of crds)
      expect({
        crd: crd.metadata!.name,
        served: crd.spec.versions.filter((v) => v.served).map((v) => v.name),
        strategy: crd.spec.conversion?.strategy ?? 'None',
      }).toEqual({ crd: crd.metadata!.name, served: ['v1beta1'], strategy: 'None' });
    expect({
      state: conversion.state,
      evidence: conversion.evidence.map((e) => [e.step, e.verdict, e.reason]),
    }).toEqual({
      state: 'unsupported',
      evidence: [['discovered', 'unsupported', 'ReleaseHasNoConversion']],
    });
  }, 600_000);

  test('the RuntimeClass gvisor recreated with handler runc: the runtime answers on the host kernel (HostKernel), runtime-class/gvisor below verified', async () => {
    const nodeApi = c.kc.makeApiClient(k8s.NodeV1Api);
    const rc = await nodeApi.readRuntimeClass({ name: 'gvisor' });
    expect(rc.handler).toBe('runsc');
    await nodeApi.deleteRuntimeClass({ name: 'gvisor' });
    await waitFor('RuntimeClass gvisor gone', 30_000, async () =>
      nodeApi.readRuntimeClass({ name: 'gvisor' }).then(
        () => undefined,
        () => true,
      ),
    );
    await nodeApi.createRuntimeClass({
      body: {
        metadata: { name: 'gvisor', ...(rc.metadata?.labels !== undefined ? { labels: rc.metadata.labels } : {}) },
        handler: 'runc',
        ...(rc.scheduling !== undefined ? { scheduling: rc.scheduling } : {}),
      },
    });
    // The pool's pods ran under runsc: replaced, so every pod of the environment runs under the runc-mapped class.
    const shellPods = () =>
      c.core.listNamespacedPod({ namespace: 'agent-sandboxes', labelSelector: 'agentplane.dev/template=shell' });
    const old = new Set((await shellPods()).items.map((p) => p.metadata!.uid));
    await c.core.deleteCollectionNamespacedPod({
      namespace: 'agent-sandboxes',
      labelSelector: 'agentplane.dev/template=shell',
      gracePeriodSeconds: 0,
    });
    await waitFor(
      'two new pool pods Running',
      180_000,
      async () => {
        const fresh = (await shellPods()).items.filter(
          (p) => !old.has(p.metadata!.uid) && p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp,
        );
        return fresh.length >= 2 ? true : undefined;
      },
      1000,
    );
    const { status, report } = verify();
    expect(status).not.toBe(0);
    expect(cap(report, 'runtime-exec').state).toBe('verified');
    const gv = cap(report, 'runtime-class/gvisor');
    // Case gvisor-evidence-markers: under runc the release inside equals the node's kernelVersion.
    const host = gv.evidence.find((e) => e.reason === 'HostKernel');
    expect([host?.step, host?.verdict]).toEqual(['verified', 'missing']);
    expect(gv.evidence.some((e) => e.reason === 'GvisorKernel')).toBe(false);
    expect({ state: gv.state, next: gv.nextReason }).toEqual({ state: 'configured', next: 'HostKernel' });
  }, 600_000);
});
