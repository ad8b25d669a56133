/**
 * Node kind: the REAL node alone (a cluster of its own, `up.sh --real-node-only`; verify-dev-gvisor.test.ts's cluster
 * runs the host verifier while the Job would run beside it, so the two would compete for the same 2 cores). The
 * VerifierJob of examples/dev-gvisor runs as a pod on the real node: its image is built from the package
 * (test-cluster/scripts/verifier-image.sh, cached by its inputs) and imported into the node's containerd under the
 * reference the example pins; the phase files are applied in order (the CRD phase aside, as verify-dev-gvisor does).
 * The same cluster then serves the Job's identity tried from a pod of its template, and a second Job run against a
 * broken environment (the template's runtime silent).
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
import {
  describeRealNode,
  NODE_TOOLS_IMAGE,
  ownRealNodeCluster,
  realNode,
  stdoutDocument,
} from './real-node-helpers.js';

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
  let report: ReturnType<typeof VerifyReportSchema.parse>;
  let jobObject: KubeObject;
  let firstLog = '';

  /** Waits for Job `name` to end: its pod, log and the report the log carries (when it printed one). */
  async function jobEnd(name = JOB): Promise<{
    pod: k8s.V1Pod;
    log: string;
    report: ReturnType<typeof VerifyReportSchema.parse>;
    error?: { kind?: string; reason?: string; exitCode?: number };
  }> {
    const batch = c.kc.makeApiClient(k8s.BatchV1Api);
    await waitFor(
      `Job ${NS}/${name} finished`,
      420_000,
      async () => {
        const job = await batch.readNamespacedJob({ namespace: NS, name });
        return job.status?.conditions?.some(
          (x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True',
        )
          ? true
          : undefined;
      },
      2000,
    );
    const pods = await c.core.listNamespacedPod({ namespace: NS, labelSelector: `job-name=${name}` });
    expect(pods.items).toHaveLength(1);
    const pod = pods.items[0]!;
    const log = await c.core.readNamespacedPodLog({ namespace: NS, name: pod.metadata!.name!, container: 'verify' });
    // stdout carries the JSON report (or, when verify could not run, the error document)
    const json = stdoutDocument(log) as { kind?: string };
    return json.kind === 'Error'
      ? { pod, log, report: undefined!, error: json }
      : { pod, log, report: VerifyReportSchema.parse(json) };
  }

  /** Runs the Job (the applied one, created again) to its end. */
  async function runJob(): ReturnType<typeof jobEnd> {
    const batch = c.kc.makeApiClient(k8s.BatchV1Api);
    await batch
      .deleteNamespacedJob({ namespace: NS, name: JOB, propagationPolicy: 'Foreground' })
      .catch(() => undefined);
    await waitFor(`Job ${NS}/${JOB} and its pods gone`, 60_000, async () => {
      const pods = await c.core.listNamespacedPod({ namespace: NS, labelSelector: `app.kubernetes.io/name=${JOB}` });
      const gone = await batch.readNamespacedJob({ namespace: NS, name: JOB }).then(
        () => false,
        () => true,
      );
      return gone && pods.items.length === 0 ? true : undefined;
    });
    await serverSideApply(c.info.kubeconfig, [jobObject]);
    return jobEnd();
  }

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
      const job = objects.find((o) => o.kind === 'Job');
      if (job) {
        jobObject = job;
        await c.core.createNamespacedConfigMap({
          namespace: NS,
          body: { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': readFileSync(c.info.caFile, 'utf8') } },
        });
      }
      // Everything applied at once, the Job with the rest, as a GitOps sync does.
      await serverSideApply(c.info.kubeconfig, objects);
    }
    let log: string;
    ({ pod, report, log } = await jobEnd());
    firstLog = log;
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

  test('the Job completes 0 with every required capability met, runtime-exec verified through the in-pod port-forward', () => {
    const unmet = report.capabilities.filter((r) => !r.met).map((r) => `${r.name}:${r.nextReason ?? ''}`);
    expect({ exit: pod.status!.containerStatuses![0]!.state!.terminated!.exitCode, unmet }).toEqual({
      exit: 0,
      unmet: [],
    });
    expect(report.outcome).toBe('verified');
    const exec = report.capabilities.find((r) => r.name === 'runtime-exec')!;
    expect(exec.state).toBe('verified');
    // the runtime was reached over the API server's port-forward from inside the Job's pod
    expect(exec.evidence.filter((e) => e.step === 'verified' && e.verdict === 'proven').map((e) => e.reason)).toContain(
      'NonceEchoed',
    );
  });

  // The Job's identity tried from inside the cluster: a pod of the Job's own template (its ServiceAccount, projected
  // token, security context; only the command differs) dials 10.96.0.1 and tries what the Job must never do.
  test("the Job's identity is refused pods/exec and a Secret read: by SubjectAccessReview and tried from its pod", async () => {
    const user = `system:serviceaccount:${NS}:${JOB}`;
    const review = (attrs: k8s.V1ResourceAttributes): Promise<boolean> =>
      c.kc
        .makeApiClient(k8s.AuthorizationV1Api)
        .createSubjectAccessReview({
          body: {
            spec: {
              user,
              groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
              resourceAttributes: attrs,
            },
          },
        })
        .then((r) => r.status!.allowed);
    const sandboxPod = 'any-sandbox-pod';
    expect({
      execCreate: await review({ namespace: NS, verb: 'create', resource: 'pods', subresource: 'exec' }),
      execGet: await review({ namespace: NS, verb: 'get', resource: 'pods', subresource: 'exec' }),
      secretGet: await review({ namespace: NS, verb: 'get', resource: 'secrets', name: 'not-for-the-verifier' }),
      // the control: what the Job does need is allowed (both verbs of the WebSocket port-forward)
      portForwardGet: await review({ namespace: NS, verb: 'get', resource: 'pods', subresource: 'portforward' }),
      portForwardCreate: await review({ namespace: NS, verb: 'create', resource: 'pods', subresource: 'portforward' }),
    }).toEqual({ execCreate: false, execGet: false, secretGet: false, portForwardGet: true, portForwardCreate: true });

    await c.core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'not-for-the-verifier' }, stringData: { k: 'v' } },
    });
    const script = `
      import https from 'node:https';
      import fs from 'node:fs';
      const sa = '/var/run/secrets/kubernetes.io/serviceaccount/';
      const call = (method, path, headers = {}) => new Promise((resolve) => {
        const req = https.request({ host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT,
          method, path, ca: fs.readFileSync(sa + 'ca.crt'),
          headers: { Authorization: 'Bearer ' + fs.readFileSync(sa + 'token', 'utf8').trim(), ...headers } });
        req.on('response', (r) => { r.resume(); resolve(r.statusCode); });
        req.on('upgrade', () => resolve(101));
        req.on('error', (e) => resolve(e.code));
        req.end();
      });
      const ws = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' };
      const exec = '/api/v1/namespaces/${NS}/pods/${sandboxPod}/exec?command=true&stdout=true';
      console.log(JSON.stringify({
        secret: await call('GET', '/api/v1/namespaces/${NS}/secrets/not-for-the-verifier'),
        execPost: await call('POST', exec),
        execWebSocket: await call('GET', exec, ws),
        reportConfigMap: await call('GET', '/api/v1/namespaces/${NS}/configmaps/agentplane-verify-report'),
      }));`;
    const spec = structuredClone((jobObject as unknown as { spec: { template: { spec: k8s.V1PodSpec } } }).spec)
      .template.spec;
    spec.containers[0]!.command = ['/usr/local/bin/node', '--input-type=module', '-e', script];
    spec.containers[0]!.args = [];
    const name = 'verifier-identity';
    await c.core.createNamespacedPod({ namespace: NS, body: { metadata: { name }, spec } });
    await waitFor(`pod ${NS}/${name} ended`, 120_000, async () => {
      const p = await c.core.readNamespacedPod({ namespace: NS, name });
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? true : undefined;
    });
    const tried = JSON.parse(await c.core.readNamespacedPodLog({ namespace: NS, name })) as Record<string, unknown>;
    // refused by the authorizer before any pod is looked up; the report ConfigMap is the control (allowed by name)
    expect(tried).toEqual({ secret: 403, execPost: 403, execWebSocket: 403, reportConfigMap: 200 });
  });

  // The broken environment: the template's runtime process never answers (its container runs, sandboxd does not, as
  // verify-real-node's silent template; the readiness probe that would hide it is dropped), so the Job's probe sandbox
  // becomes Ready and every health call through the port-forward meets nothing.
  test('a silent runtime: the Job fails with the verify exit code and names runtime-exec in its log and ConfigMap', async () => {
    const api = c.kc.makeApiClient(k8s.CustomObjectsApi);
    const live = (await api.getNamespacedCustomObject({
      group: 'extensions.agents.x-k8s.io',
      version: 'v1beta1',
      namespace: NS,
      plural: 'sandboxtemplates',
      name: 'shell',
    })) as { spec: { podTemplate: { spec: k8s.V1PodSpec } } };
    const container = live.spec.podTemplate.spec.containers[0]!;
    delete container.readinessProbe;
    container.image = NODE_TOOLS_IMAGE;
    container.command = ['/bin/sleep', '3600'];
    container.args = [];
    await api.replaceNamespacedCustomObject({
      group: 'extensions.agents.x-k8s.io',
      version: 'v1beta1',
      namespace: NS,
      plural: 'sandboxtemplates',
      name: 'shell',
      body: live,
    });
    const broken = await runJob();
    const exit = broken.pod.status!.containerStatuses![0]!.state!.terminated!.exitCode;
    expect(exit).toBe(6);
    expect(broken.pod.status!.phase).toBe('Failed');
    const exec = broken.report.capabilities.find((r) => r.name === 'runtime-exec')!;
    expect({ state: exec.state, met: exec.met, nextReason: exec.nextReason }).toEqual({
      state: 'configured',
      met: false,
      nextReason: 'RuntimeSilent',
    });
    expect(broken.report.outcome).not.toBe('verified');
    const cm = await c.core.readNamespacedConfigMap({ namespace: NS, name: 'agentplane-verify-report' });
    expect(cm.metadata!.annotations).toMatchObject({
      'agentplane.dev/run': broken.pod.metadata!.name,
      'agentplane.dev/exit-code': '6',
      'agentplane.dev/started-at': broken.report.startedAt,
    });
    expect(JSON.parse(cm.data!['report.json']!)).toEqual(broken.report);
  }, 480_000);

  // dev-gvisor has no warm pool and the stand-in controller is external, so here the gate has only the CRDs to wait for;
  // the case where it waits and gives up is the next test, pools are the case test's (posthook-before-sandboxes-ready).
  test('applied with the whole environment at once, the Job passed its readiness gate, then ended verified', () => {
    const exit = pod.status!.containerStatuses![0]!.state!.terminated!.exitCode;
    expect({ exit, gate: /^ready after \d+s: CRDs Established/m.test(firstLog) }).toEqual({ exit: 0, gate: true });
  });

  // The test cluster's controller runs as a local process; the environment's own controller Deployment is applied but
  // its pod never runs here (its image is not on the node), so without `--controller external` the gate waits for a
  // controller that never becomes Available.
  test('a controller that never becomes Available: the Job ends with the not-ready exit code, naming it', async () => {
    const name = `${JOB}-no-controller`;
    const job = structuredClone(jobObject) as unknown as {
      metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
      spec: { template: { spec: k8s.V1PodSpec } };
    };
    job.metadata = { ...job.metadata, name, annotations: {} };
    const container = job.spec.template.spec.containers[0]!;
    const args = [...(container.args ?? [])];
    args.splice(args.lastIndexOf('--controller'), 2); // the stand-in's `--controller external`, added above
    args[args.indexOf('--wait-ready') + 1] = '20s';
    container.args = args;
    await serverSideApply(c.info.kubeconfig, [job as unknown as KubeObject]);
    const end = await jobEnd(name);
    const terminated = end.pod.status!.containerStatuses![0]!.state!.terminated!;
    expect({ exit: terminated.exitCode, error: end.error }).toEqual({
      exit: 15,
      error: expect.objectContaining({ kind: 'Error', reason: 'NotReady', exitCode: 15 }),
    });
    // prose: the termination message is what kubectl and Argo CD show; it must carry the code and the Deployment
    expect(terminated.message).toMatch(
      /NotReady.*Deployment agent-sandbox-system\/agent-sandbox-controller: (ControllerNotAvailable|StaleObservedGeneration)/s,
    );
  }, 480_000);
});
