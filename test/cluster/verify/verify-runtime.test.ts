/**
 * Runtime readiness for real (cases claim-ready-stale-generation, runtime-exec-starves-probe,
 * conversion-cabundle-drift on the cluster): the verifier runs under its own least-privilege identity (VerifierAccess,
 * no pods/exec) against the real API server, controller, router and sandboxd stand-ins. A healthy sandboxd template
 * reaches `verified` for runtime-exec over the direct transport (standing in for port-forward, which needs a kubelet
 * the test cluster lacks) and answers health through the router; a Ready sandbox whose runtime is silent, or hangs past
 * the deadline, stays `configured` with the reason; every probe object is deleted.
 */
import { loadRelease, type LoadedRelease } from '../../../src/releases/index.js';
import { runVerify, RUN_LABEL } from '../../../src/verify/index.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { connectAs, EXT, plan, sandboxdTemplate, templatePlan, verifierKubeconfig } from './verifier-env.js';
import { MIRROR } from '../../mirror.js';

let c: Cluster;
let ns: string;
let kubeconfig: string;
let loaded: LoadedRelease;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfy');
  for (const [name, mode] of [
    ['healthy', 'sandboxd'],
    ['silent', 'none'],
    ['hanging', 'hang'],
  ] as const) {
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: sandboxdTemplate(ns, name, mode),
    });
  }
  // Pods with a nodeSelector no node matches stay Pending. Not through a RuntimeClass: a class no node matches makes the
  // workload probe create nothing (verify-runtime-class.test.ts); a pod's own nodeSelector is not read ahead.
  const unschedulable = sandboxdTemplate(ns, 'unschedulable', 'sandboxd') as {
    spec: { podTemplate: { spec: Record<string, unknown> } };
  };
  unschedulable.spec.podTemplate.spec.nodeSelector = { 'agentplane.dev/no-such-node': 'true' };
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: unschedulable,
  });
  kubeconfig = (await verifierKubeconfig(c, ns, [ns])).file;
  loaded = await loadRelease('v0.5.6', { mirror: MIRROR });
}, 60_000);

const row = (r: VerifyReport, name: string) => r.capabilities.find((x) => x.name === name)!;

async function leftoversOf(runId: string): Promise<string[]> {
  const out: string[] = [];
  for (const [group, version, plural] of [
    ['agents.x-k8s.io', 'v1beta1', 'sandboxes'],
    [EXT.group, EXT.version, 'sandboxclaims'],
    [EXT.group, EXT.version, 'sandboxwarmpools'],
  ] as const) {
    const list = (await c.custom.listNamespacedCustomObject({
      group,
      version,
      plural,
      namespace: ns,
      labelSelector: `${RUN_LABEL}=${runId}`,
    })) as { items: Array<{ metadata: { name: string } }> };
    out.push(...list.items.map((i) => `${plural}/${i.metadata.name}`));
  }
  return out;
}

test('healthy sandboxd template: runtime-exec, files, template, extensions and conversion reach verified; objects cleaned up', async () => {
  const lines: string[] = [];
  const { report, cluster } = await runVerify({
    plan: plan(c, [templatePlan(ns, 'healthy')]),
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: (l) => lines.push(l),
    runId: 'aa0001',
  });
  for (const name of [
    'runtime-exec',
    'runtime-files',
    `template/${ns}/healthy`,
    'extensions-api',
    'sandbox-api',
    'conversion',
  ]) {
    expect({ name, state: row(report, name).state, nextReason: row(report, name).nextReason }).toEqual({
      name,
      state: 'verified',
      nextReason: null,
    });
  }
  const exec = row(report, 'runtime-exec').evidence.filter((e) => e.step === 'verified');
  // The default sample (5 nonce commands in a row) over the client transport, then the router sampled by name.
  expect(exec.map((e) => e.verdict)).toEqual(['proven', 'proven']);
  expect([exec[1]!.reason, exec[1]!.value]).toEqual(['NonceEchoed', '5/5']);
  const routed = row(report, 'router').evidence.find((e) => e.step === 'verified')!;
  expect([routed.verdict, routed.reason, routed.value]).toEqual(['proven', 'RouterReachedRuntime', '5/5']);
  // The router is not verified here: it runs outside the cluster with no pod whose admission could be read, and the
  // cluster's router (allow-all) lets a request without credentials through (router-podip-ssrf.verify.test.ts).
  const router = row(report, 'router');
  expect(router.state).toBe('compatible');
  expect(router.evidence.filter((e) => e.verdict !== 'proven').map((e) => e.reason)).toEqual(
    expect.arrayContaining(['RouterPodsNotFound', 'RouterUnauthenticated', 'RouterNoConnectionUnproven']),
  );
  expect(report.leftovers).toEqual([]);
  expect(await leftoversOf('aa0001')).toEqual([]);
  expect(lines.some((l) => /workload\/.*\/healthy: creating probe SandboxClaim/.test(l))).toBe(true);
  expect(report.tuple.kubernetes.value).toBe('v1.36.3');
  expect(report.tuple.crdRelease.value).toBe('v0.5.6');
  expect(report.tuple.crdRelease.source).toMatch(
    /^CRD sandboxes\.agents\.x-k8s\.io label app\.kubernetes\.io\/version; schema fingerprints (match v0\.5\.6 \(8 versions\)|differ from v0\.5\.6: .+)$/,
  );
  expect(report.tuple.runtimeServer.source).toMatch(/answered: sandboxd of verify-aa0001-p-healthy-\w+ via direct$/);
  // every node's runtime: the kwok nodes', and containerd's when the real node runs beside them
  const runtimes = report.tuple.containerRuntime.value.split(', ');
  expect(runtimes).toContainEqual(expect.stringMatching(/^kwok-\d/));
  if (c.info.realNode) expect(runtimes).toContain('containerd://2.2.9');
  // Waiting is done by watches: each wait costs one GET and one watch stream, however long it lasts.
  const s = cluster.stats();
  expect(s.waits).toBeGreaterThanOrEqual(3);
  expect(s.requestsWhileWaiting).toBeLessThanOrEqual(2 * s.waits);
}, 180_000);

test('Ready sandbox with a silent runtime: runtime-exec stays configured, evidence says why, outcome not verified', async () => {
  const { report } = await runVerify({
    plan: plan(c, [templatePlan(ns, 'silent')]),
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
    runId: 'aa0002',
  });
  const exec = row(report, 'runtime-exec');
  expect(exec.state).toBe('configured');
  expect(exec.nextReason).toBe('RuntimeSilent');
  const silent = exec.evidence.find((e) => e.reason === 'RuntimeSilent')!;
  expect([silent.step, silent.verdict, silent.field]).toEqual(['verified', 'unknown', 'health']);
  expect(silent.subject).toMatch(/^sandboxd of verify-aa0002-p-silent-\w+ via direct$/);
  const ready = exec.evidence.find((e) => e.step === 'verified' && e.reason === 'SandboxReady')!;
  expect([ready.verdict, ready.field, ready.value]).toEqual(['proven', 'status.conditions[Ready]', 'True']);
  expect(row(report, `template/${ns}/silent`).state).toBe('configured');
  expect(report.outcome).toBe('not-verified');
  expect(await leftoversOf('aa0002')).toEqual([]);
}, 180_000);

test('runtime that hangs past the deadline: stays configured, the deadline is named', async () => {
  const started = Date.now();
  const { report } = await runVerify({
    plan: plan(c, [templatePlan(ns, 'hanging')]),
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
    runId: 'aa0003',
  });
  const exec = row(report, 'runtime-exec');
  expect(exec.state).toBe('configured');
  expect(exec.nextReason).toBe('RuntimeTimeout');
  // The health call waited out the 2 s probe deadline before giving up.
  const hung = exec.evidence.find((e) => e.reason === 'RuntimeTimeout')!;
  expect([hung.step, hung.verdict, hung.field]).toEqual(['verified', 'unknown', 'health']);
  expect(hung.durationMs).toBeGreaterThanOrEqual(2_000);
  expect(Date.now() - started).toBeLessThan(120_000);
  expect(await leftoversOf('aa0003')).toEqual([]);
}, 180_000);

test('a claim that never becomes Ready: bounded wait with progress, at most 1 API request/s while waiting', async () => {
  // A pod nodeSelector no node matches: the pool's pods stay Pending (Unschedulable), so the claim never gets a Ready Sandbox.
  const { report, cluster } = await runVerify({
    plan: plan(c, [templatePlan(ns, 'unschedulable')], { readyTimeoutMs: 8_000 }),
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: () => undefined,
    runId: 'aa0005',
  });
  const t = report.capabilities.find((r) => r.name === `template/${ns}/unschedulable`)!;
  expect(t.state).toBe('configured');
  expect(['ProbeNotReadyInTime', 'ClaimNotBound']).toContain(t.nextReason);
  const wait = t.evidence.find((e) => e.reason === t.nextReason)!;
  expect(wait.durationMs).toBeGreaterThanOrEqual(8_000);
  const s = cluster.stats();
  // The wait covered most of the 8 s deadline (the claim's create and the first reads come before it), so the
  // request rate below is measured over a real wait.
  expect(s.waitingMs).toBeGreaterThanOrEqual(6_000);
  expect(s.requestsWhileWaiting / (s.waitingMs / 1000)).toBeLessThanOrEqual(1);
  expect(await leftoversOf('aa0005')).toEqual([]);
}, 180_000);

test('interrupt (SIGINT): probes stop, and the objects already created are still deleted', async () => {
  const abort = new AbortController();
  const lines: string[] = [];
  const run = runVerify({
    plan: plan(c, [templatePlan(ns, 'healthy')]),
    client: connectAs(kubeconfig),
    loaded,
    controllerMode: 'external',
    progress: (l) => {
      lines.push(l);
      if (/creating probe SandboxClaim/.test(l)) setTimeout(() => abort.abort(new Error('SIGINT')), 50);
    },
    signal: abort.signal,
    runId: 'aa0004',
  });
  const { report } = await run;
  expect(abort.signal.aborted).toBe(true);
  expect(report.outcome).toBe('not-verified');
  expect(report.leftovers).toEqual([]);
  expect(await leftoversOf('aa0004')).toEqual([]);
}, 180_000);
