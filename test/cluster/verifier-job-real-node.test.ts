/**
 * Node kind: the REAL node alone (a cluster of its own, `up.sh --real-node-only`; verify-dev-gvisor.test.ts's cluster
 * runs the host verifier while the Job would run beside it, so the two would compete for the same 2 cores). The
 * VerifierJob of examples/dev-gvisor runs as a pod on the real node: its image is built from the package
 * (test-cluster/scripts/verifier-image.sh, cached by its inputs) and imported into the node's containerd under the
 * reference the example pins; the phase files are applied in order (the CRD phase aside, as verify-dev-gvisor does).
 *
 * Stand-ins, said here, each the narrowest: the test cluster disables the ServiceAccount admission plugin and runs no
 * root-CA publisher, so the test adds to the Job's pod what those would (the projected token + `kube-root-ca.crt`
 * volume at the standard path); its controller runs as a local process, so the Job gets `--controller external` (as
 * the host verify does). Everything else in the Job is as synthesized.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { VerifyReportSchema } from '../../src/verify/index.js';
import { serverSideApply, type KubeObject } from '../../test-cluster/kube.js';
import { waitFor, type Cluster } from './helpers.js';
import { describeRealNode, ownRealNodeCluster, realNode } from './real-node-helpers.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const own = ownRealNodeCluster('vjob');
const { env } = own;
const NS = 'dev-sandboxes';
const JOB = 'agentplane-verifier';

/** What the disabled ServiceAccount admission plugin and root-CA publisher would add to the Job's pod. */
function withServiceAccountVolume(job: KubeObject): KubeObject {
  const spec = (job as unknown as { spec: { template: { spec: k8s.V1PodSpec } } }).spec.template.spec;
  const container = spec.containers[0]!;
  container.args = [...(container.args ?? []), '--controller', 'external'];
  spec.volumes = [
    ...(spec.volumes ?? []),
    {
      name: 'kube-api-access',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        ],
      },
    },
  ];
  container.volumeMounts = [
    ...(container.volumeMounts ?? []),
    { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
  ];
  return job;
}

describeRealNode('the VerifierJob of examples/dev-gvisor as a pod on the real node', () => {
  let c: Cluster;
  let out: string;
  let pod: k8s.V1Pod;
  let log: string;
  let report: ReturnType<typeof VerifyReportSchema.parse>;

  beforeAll(async () => {
    c = own.start();
    const image = spawnSync(
      'bash',
      ['test-cluster/scripts/verifier-image.sh', 'import', realNode(c).containerdSocket],
      { cwd: repo, env, encoding: 'utf8' },
    );
    if (image.status !== 0) throw new Error(`verifier image import failed: ${image.stderr}`);
    out = mkdtempSync(path.join(tmpdir(), 'agentplane-vjob-'));
    const synth = spawnSync(
      'node',
      ['bin/agentplane.js', 'synth', 'examples/dev-gvisor/environment.ts', '--out', out],
      { cwd: repo, env, encoding: 'utf8' },
    );
    if (synth.status !== 0) throw new Error(`synth failed: ${synth.stderr}`);
    const dir = path.join(out, 'dev-gvisor');
    const files = readdirSync(dir)
      .filter((f) => /^\d\d-.*\.yaml$/.test(f) && f !== '00-crds.yaml')
      .sort();
    for (const f of files) {
      const objects = parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))
        .map((d) => d.toJS() as KubeObject)
        .filter((o) => o !== null)
        .map((o) => (o.kind === 'Job' ? withServiceAccountVolume(o) : o));
      if (objects.some((o) => o.kind === 'Job'))
        await c.core.createNamespacedConfigMap({
          namespace: NS,
          body: { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': readFileSync(c.info.caFile, 'utf8') } },
        });
      await serverSideApply(c.info.kubeconfig, objects);
    }
    const batch = c.kc.makeApiClient(k8s.BatchV1Api);
    await waitFor(
      `Job ${NS}/${JOB} finished`,
      420_000,
      async () => {
        const job = await batch.readNamespacedJob({ namespace: NS, name: JOB });
        return job.status?.conditions?.some(
          (x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True',
        )
          ? true
          : undefined;
      },
      2000,
    );
    const pods = await c.core.listNamespacedPod({ namespace: NS, labelSelector: `app.kubernetes.io/name=${JOB}` });
    expect(pods.items).toHaveLength(1);
    pod = pods.items[0]!;
    log = await c.core.readNamespacedPodLog({ namespace: NS, name: pod.metadata!.name!, container: 'verify' });
    // stdout carries the JSON report; the progress lines (stderr) come before it in the log
    report = VerifyReportSchema.parse(JSON.parse(log.slice(log.indexOf('\n{') + 1)));
  }, 900_000);

  afterAll(() => {
    own.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  test("the pod ran on the real node; its exit code is verify's; the report is in the log and the ConfigMap", async () => {
    expect(pod.spec!.nodeName).toBe(realNode(c).name);
    const exit = pod.status!.containerStatuses![0]!.state!.terminated!.exitCode;
    expect(exit).toBe(report.outcome === 'verified' ? 0 : 6);
    expect(pod.status!.phase).toBe(exit === 0 ? 'Succeeded' : 'Failed');
    expect(report.environment).toEqual({
      name: 'dev-gvisor',
      release: 'v0.5.6',
      source: 'configmap:/etc/agentplane/descriptor',
    });
    // the API path from inside the pod (token, CA, 10.96.0.1 DNAT) carries the control-plane probes
    const states = Object.fromEntries(report.capabilities.map((r) => [r.name, r.state]));
    expect(states).toMatchObject({ 'extensions-api': 'verified', controller: 'verified', conversion: 'verified' });

    const cm = await c.core.readNamespacedConfigMap({ namespace: NS, name: 'agentplane-verify-report' });
    expect(cm.metadata!.annotations).toMatchObject({
      'agentplane.dev/run': pod.metadata!.name,
      'agentplane.dev/job': JOB,
      'agentplane.dev/release': 'v0.5.6',
      'agentplane.dev/started-at': report.startedAt,
      'agentplane.dev/exit-code': String(exit),
    });
    expect(JSON.parse(cm.data!['report.json']!)).toEqual(report);

    const back = spawnSync(
      'node',
      [
        'bin/agentplane.js',
        'verify',
        '--from-cluster',
        '--kubeconfig',
        c.info.kubeconfig,
        '--report-configmap',
        `${NS}/agentplane-verify-report`,
        '-o',
        'json',
      ],
      { cwd: repo, env, encoding: 'utf8', timeout: 60_000 },
    );
    expect(JSON.parse(back.stdout)).toEqual(report);
    expect(back.status).toBe(exit);
  });

  // Known gap (this test fails today, so it is marked failing): the Job reaches sandboxd, which listens on 127.0.0.1
  // only, through the API server's port-forward; from inside the pod that WebSocket ends at once (UND_ERR_SOCKET),
  // so runtime-exec stays configured. When it is fixed, jest reports this test and it becomes a plain `test`.
  test.failing('the Job completes 0 with every required capability verified', () => {
    const unmet = report.capabilities.filter((r) => !r.met).map((r) => `${r.name}:${r.nextReason ?? ''}`);
    expect({ exit: pod.status!.containerStatuses![0]!.state!.terminated!.exitCode, unmet }).toEqual({
      exit: 0,
      unmet: [],
    });
  });
});
