/**
 * Case test-node-runsc-registration: the node's bring-up verifies itself and fails on a misregistered runsc, naming
 * the first failed check; and the verifier, on such a node, stops waiting at the first permanent pod error instead of
 * spending its ready timeout. Each part starts a real-node-only cluster of its own (never the global one, which other
 * test files use), with the fault node.sh injects for tests (AGENTPLANE_TEST_CLUSTER_NODE_FAULT):
 * - `runsc-v2-table`: runsc written under the v2 CRI plugin ID in a version-3 config (containerd ignores it);
 * - `runsc-as-runc`: the runsc handler mapped to runc's shim (pods start, on the host kernel).
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { freshNamespace } from '../helpers.js';
import { describeRealNode, ownRealNodeCluster, realNodeSandboxdTemplate } from '../real-node-helpers.js';
import { EXT, plan, templatePlan } from '../verify/verifier-env.js';

const REPO = new URL('../../..', import.meta.url).pathname;

/** up.sh of an own real-node cluster with `fault`; its exit status, stderr and wall time. down.sh afterwards. */
function upWith(name: string, fault: string): { status: number | null; stderr: string; ms: number } {
  const own = ownRealNodeCluster(name);
  const env = { ...own.env, AGENTPLANE_TEST_CLUSTER_NODE_FAULT: fault };
  const started = Date.now();
  try {
    const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--real-node-only'], {
      cwd: REPO,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { status: up.status, stderr: up.stderr, ms: Date.now() - started };
  } finally {
    spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: REPO, env, stdio: 'ignore' });
  }
}

describeRealNode('case test-node-runsc-registration', () => {
  test('runsc under the v2 plugin table of a version-3 config: up.sh exits non-zero naming CriConfigSchema', () => {
    const r = upWith('runsc-v2', 'runsc-v2-table');
    expect(r.status).not.toBe(0);
    // prose: up.sh's only output is its stderr; the check's typed name is what it must carry
    expect(r.stderr).toMatch(/node check failed: CriConfigSchema: /);
    process.stderr.write(`up.sh with runsc-v2-table: exit ${r.status} after ${r.ms} ms\n`);
  }, 300_000);

  test('runsc mapped to runc: up.sh exits non-zero naming CriHandlerOptions', () => {
    const r = upWith('runsc-runc', 'runsc-as-runc');
    expect(r.status).not.toBe(0);
    // prose: up.sh's only output is its stderr; the check's typed name is what it must carry
    expect(r.stderr).toMatch(/node check failed: CriHandlerOptions: /);
    process.stderr.write(`up.sh with runsc-as-runc: exit ${r.status} after ${r.ms} ms\n`);
  }, 300_000);

  describe('the verifier on the misregistered node (its own check skipped so the node comes up)', () => {
    const own = ownRealNodeCluster('runsc-v2-verify');
    Object.assign(own.env, {
      AGENTPLANE_TEST_CLUSTER_NODE_FAULT: 'runsc-v2-table',
      AGENTPLANE_TEST_CLUSTER_NODE_CHECK: '0',
    });
    afterAll(() => own.stop());

    test('a gVisor template: the wait ends at the permanent FailedCreatePodSandBox, far inside the 120 s ready timeout', async () => {
      const c = own.start();
      const ns = await freshNamespace(c, 'runscreg');
      await c.kc
        .makeApiClient(k8s.NodeV1Api)
        .createRuntimeClass({ body: { metadata: { name: 'gvisor' }, handler: 'runsc' } });
      await c.custom.createNamespacedCustomObject({
        ...EXT,
        namespace: ns,
        plural: 'sandboxtemplates',
        body: realNodeSandboxdTemplate(c, ns, 'gv', {}, { runtimeClassName: 'gvisor' }),
      });
      const started = Date.now();
      const { report } = await runVerify({
        plan: plan(c, [templatePlan(ns, 'gv', 'gvisor')], {
          transport: 'port-forward',
          runtimeClasses: ['gvisor'],
          probeTimeoutMs: 10_000,
          readyTimeoutMs: 120_000,
          requirements: requirementsFor(['runtime-class/gvisor', 'runtime-exec', `template/${ns}/gv`]),
        }),
        client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
        controllerMode: 'external',
        progress: () => undefined,
      });
      const tookMs = Date.now() - started;
      const tpl = report.capabilities.find((r) => r.name === `template/${ns}/gv`)!;
      const stop = tpl.evidence.find((e) => e.reason === 'ProbePodCannotStart');
      expect(stop?.verdict).toBe('unknown');
      expect(report.capabilities.find((r) => r.name === 'runtime-class/gvisor')!.state).not.toBe('verified');
      expect(tookMs).toBeLessThan(60_000);
      process.stderr.write(`verify on the misregistered node: ${tookMs} ms (ready timeout 120000 ms)\n`);
    }, 400_000);
  });
});
