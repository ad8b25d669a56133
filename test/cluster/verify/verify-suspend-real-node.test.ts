/**
 * Node kind: the REAL node (kubelet + containerd + runc). The suspend-resume round trip of the verifier on the real
 * v0.5.6 controller, over the default transport (port-forward): a probe sandbox's pod really deleted and a new one
 * started, sandboxd answering again in the new container, the workspace judged by what the release keeps:
 * - sandboxd with its root on an emptyDir: suspend-resume verified; the release keeps no emptyDir, so the nonce written
 *   before suspension is gone in the new pod (`WorkspaceNotKept`, value `absent`, which a pod never replaced would not show);
 * - a runtime that does not come back: sandboxd in the first pod, a sleeping shell in every later one (a marker on a
 *   hostPath inside the cluster's run dir tells them apart): Ready after resume, runtime silent, below verified;
 * - a runtime silent from the start: runtime-exec not verified, so no round trip is tried;
 * - as the VerifierAccess identity (its token): verified with `suspendResume` (patch on Sandboxes), unknown with the
 *   Forbidden reason without it.
 * Node kind, last test: kwok. The controller really deletes and recreates the pod and the stand-in starts a fresh
 * sandboxd for the new pod, so the round trip runs; but no container was stopped, and the verifier says so
 * (`PodSimulated`): never verified from a simulated pod.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import type { CapabilityRow } from '../../../src/verify/report.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { describeRealNode, realNodeSandboxdTemplate, SANDBOXD_ARGS } from '../real-node-helpers.js';
import { connectAs, EXT, plan, sandboxdTemplate, templatePlan, verifierKubeconfig } from './verifier-env.js';

/** The verified-step evidence of runtime-exec and suspend-resume, reason and message: shown when an expectation fails. */
function whyNot(report: { capabilities: readonly CapabilityRow[] }): string[] {
  return report.capabilities
    .filter((r) => r.name === 'runtime-exec' || r.name === 'suspend-resume')
    .flatMap((r) => r.evidence.filter((e) => e.step === 'verified').map((e) => `${r.name} ${e.reason}: ${e.message}`));
}

describeRealNode('suspend-resume round trip on the real node', () => {
  let c: Cluster;
  let ns: string;
  let markers: string;

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'vfysusp');
    markers = mkdtempSync(path.join(c.info.runDir, 'suspend-markers-'));
    const template = (name: string, container: Record<string, unknown>, volumes: object[] = []): object =>
      realNodeSandboxdTemplate(c, ns, name, container, { volumes });
    const workspace = { volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] };
    const templates = [
      template('keeps', {}),
      template(
        'once',
        {
          args: [],
          command: [
            '/bin/sh',
            '-c',
            `if [ -e /marker/started ]; then exec sleep 3600; fi; touch /marker/started; exec /usr/local/bin/sandboxd ${SANDBOXD_ARGS.join(' ')}`,
          ],
          volumeMounts: [...workspace.volumeMounts, { name: 'marker', mountPath: '/marker' }],
        },
        [{ name: 'marker', hostPath: { path: markers, type: 'Directory' } }],
      ),
      template('silent', { command: ['/bin/sleep', '3600'], args: [], volumeMounts: [] }),
    ];
    for (const body of templates)
      await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxtemplates', body });
  }, 60_000);

  afterAll(async () => {
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    rmSync(markers, { recursive: true, force: true });
  });

  async function verifySuspend(name: string, client?: KubeClient): Promise<CapabilityRow> {
    const p = plan(c, [templatePlan(ns, name)], {
      transport: 'port-forward',
      probeTimeoutMs: 10_000,
      readyTimeoutMs: 90_000,
      requirements: requirementsFor(['runtime-exec', 'suspend-resume'], { 'suspend-resume': 'verified' }),
    });
    const { report } = await runVerify({
      plan: p,
      client: client ?? KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const cap = report.capabilities.find((r) => r.name === 'suspend-resume')!;
    // a round trip not tried says why in the failure output (runtime-exec's own evidence)
    if (cap.evidence.some((e) => e.reason === 'SuspendNotTried'))
      process.stderr.write(`${whyNot(report).join('\n')}\n`);
    return cap;
  }

  const verified = (cap: CapabilityRow) =>
    cap.evidence.filter((e) => e.step === 'verified').map((e) => [e.reason, e.verdict, e.value ?? null]);

  test('sandboxd on an emptyDir: pod deleted and replaced, runtime answers again, nonce gone as promised: verified', async () => {
    const cap = await verifySuspend('keeps');
    expect({ state: cap.state, next: cap.next ?? null }).toEqual({ state: 'verified', next: null });
    expect(verified(cap)).toEqual([
      ['SuspendObserved', 'proven', 'True'],
      ['ResumeObserved', 'proven', expect.stringMatching(/^[0-9a-f-]{36} -> [0-9a-f-]{36}$/)],
      ['NonceEchoed', 'proven', expect.stringMatching(/^([2-9]|\d\d+)\/\1$/)],
      ['WorkspaceNotKept', 'proven', 'absent'],
    ]);
    const uids = String(cap.evidence.find((e) => e.reason === 'ResumeObserved')!.value).split(' -> ');
    expect(uids[0]).not.toBe(uids[1]);
  }, 300_000);

  test('as the VerifierAccess identity: with patch on Sandboxes (suspendResume) verified; without it unknown, Forbidden', async () => {
    const as = async (name: string, suspendResume: boolean) =>
      connectAs((await verifierKubeconfig(c, ns, [ns], { name, portForward: true, suspendResume })).file);
    const granted = await verifySuspend('keeps', await as('verifier-suspend', true));
    expect({ state: granted.state, reasons: verified(granted).map(([r]) => r) }).toEqual({
      state: 'verified',
      reasons: ['SuspendObserved', 'ResumeObserved', 'NonceEchoed', 'WorkspaceNotKept'],
    });
    const refused = await verifySuspend('keeps', await as('verifier-plain', false));
    const forbidden = refused.evidence.filter((e) => e.step === 'verified');
    expect(forbidden.map((e) => [e.reason, e.verdict, e.cause ?? null])).toEqual([
      ['Forbidden', 'unknown', 'forbidden'],
    ]);
    expect(refused.state).not.toBe('verified');
  }, 600_000);

  test('a runtime that does not come back after resume: Ready with a new pod, runtime silent, below verified', async () => {
    const cap = await verifySuspend('once');
    expect(cap.state).toBe('configured');
    expect(verified(cap)).toEqual([
      ['SuspendObserved', 'proven', 'True'],
      ['ResumeObserved', 'proven', expect.stringMatching(/ -> /)],
      [expect.stringMatching(/^Runtime(Silent|Timeout)$/), 'unknown', null],
    ]);
  }, 300_000);

  test('a runtime silent from the start: no round trip is tried', async () => {
    const cap = await verifySuspend('silent');
    expect(cap.state).toBe('configured');
    expect(verified(cap)).toEqual([['SuspendNotTried', 'unknown', null]]);
  }, 300_000);
});

describe('suspend-resume round trip on a kwok node', () => {
  let c: Cluster;
  let ns: string;

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'vfysuspk');
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: sandboxdTemplate(ns, 'sim', 'sandboxd'),
    });
  }, 60_000);

  afterAll(async () => {
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  test('suspended and resumed through the real controller, runtime answering, but a simulated pod: below verified', async () => {
    const p = plan(c, [templatePlan(ns, 'sim')], {
      readyTimeoutMs: 60_000,
      requirements: requirementsFor(['runtime-exec', 'suspend-resume'], { 'suspend-resume': 'verified' }),
    });
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const cap = report.capabilities.find((r) => r.name === 'suspend-resume')!;
    // a failure says why the round trip was (not) tried: runtime-exec's evidence, printed
    if (cap.nextReason !== 'PodSimulated') process.stderr.write(`${whyNot(report).join('\n')}\n`);
    expect([cap.state, cap.nextReason]).toEqual(['configured', 'PodSimulated']);
    const reasons = cap.evidence.filter((e) => e.step === 'verified').map((e) => [e.reason, e.verdict]);
    expect(reasons).toEqual(
      expect.arrayContaining([
        ['SuspendObserved', 'proven'],
        ['ResumeObserved', 'proven'],
        ['PodSimulated', 'unknown'],
      ]),
    );
    const sim = cap.evidence.find((e) => e.reason === 'PodSimulated')!;
    expect(sim.value).toMatch(/^kwok-/);
  }, 240_000);
});
