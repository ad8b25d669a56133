/**
 * Case router-podip-ssrf, verifier side, as a platform team runs it: the synthesized VerifierJob (its default transport, with the router URL)
 * as a pod on the REAL node of the shared cluster (kube-router enforcing), in front of the synthesized router running in
 * a pod there. The Job's canary listens on its own pod IP, on the template's runtime port (which the router's egress
 * admits); a control request naming it shows the router can dial it, so "nothing was dialled" is observed.
 * - The construct-default router (tokenreview, token required; the Job sends its ServiceAccount token): execution
 *   through it proven, every negative refused with nothing dialled, (c) judged against the router pod's own health
 *   listener: `router` verified.
 * - An allow-all router (acknowledged): the real router dials the Job's canary for a credential-less request naming
 *   it in X-Sandbox-Pod-IP, so `router` stays `configured` (`RouterDialedCanary`, the dialled address as value).
 * Stand-ins, said here, each the narrowest: no deployment controller (the router Deployment's pod is created from its
 * template, real-node-helpers.ts `startDeploymentPod`); no ServiceAccount admission or root-CA publisher (the token
 * volume and `kube-root-ca.crt` are added as they would); no cluster DNS or kube-proxy, so the Job's `--router-url`
 * names the router pod's IP instead of its Service name; the controller runs as a local process
 * (`--controller external`, as the host verify does); cluster-scoped RBAC and the RuntimeClass get a per-test name;
 * the router image is pinned by the digest the node imported it as, recorded as a pull by digest would (no registry,
 * real-node-helpers.ts `pinnedByDigest`). sandboxd binds
 * 127.0.0.1 only (packages/sandboxd/cmd/sandboxd/main.go@v0.5.6), so the template's pod relays 0.0.0.0:8081 to it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { AgentEnvironment, sandboxdPodSpec, type RouterAuthorization } from '../../../src/constructs/index.js';
import { loadRelease, type LoadedRelease } from '../../../src/releases/index.js';
import { synthesizeEnvironment } from '../../../src/synth/index.js';
import { VerifyReportSchema, type VerifyReport } from '../../../src/verify/index.js';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import { rootCaConfigMap, withServiceAccountVolume } from '../client/in-cluster-router.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import {
  describeRealNode,
  NODE_TOOLS_IMAGE,
  onRealNode,
  perTestClusterScoped,
  pinnedByDigest,
  realNode,
  startDeploymentPod,
  stdoutDocument,
} from '../real-node-helpers.js';
import { MIRROR } from '../../mirror.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const version = (JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { version: string }).version;
/** The reference test-cluster/scripts/verifier-image.sh imports the package's verifier image under. */
const VERIFIER_IMAGE = `registry.example.internal/agentplane/verifier:${version}`;
const ROUTER_IMAGE = 'registry.local/agentplane-test/sandbox-router:v0.5.6';
const PORT = 8081;
const JOB = 'agentplane-verifier';

interface JobRun {
  readonly namespace: string;
  readonly pod: k8s.V1Pod;
  readonly report: VerifyReport;
}

describeRealNode('case router-podip-ssrf: the VerifierJob and the in-cluster router on the real node', () => {
  let c: Cluster;
  let loaded: LoadedRelease;
  let routerImage: string;
  const namespaces: string[] = [];
  const clusterScoped: KubeObject[] = [];

  /** The environment: a sandboxd template relayed on PORT, the router (callers: the Job's pods) and the VerifierJob. */
  function synth(ns: string, authorization: RouterAuthorization): KubeObject[] {
    const env = new AgentEnvironment(new App(), `rvj-${ns}`, {
      release: loaded,
      install: false,
      defaultNamespace: ns,
      createNamespaces: false,
    });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', name: `gvisor-${ns}`, allNodes: true });
    const spec = sandboxdPodSpec({ image: NODE_TOOLS_IMAGE });
    const placed = onRealNode(realNode(c));
    const sandboxd = spec.containers[0]!;
    env.addTemplate('relay', {
      name: 'relay',
      runtimeClass: rc,
      networkPolicyManagement: 'Unmanaged',
      podSpec: {
        ...spec,
        nodeSelector: placed.nodeSelector,
        tolerations: placed.tolerations.map((t) => ({
          ...t,
          operator: t.operator as never,
          effect: t.effect as never,
        })),
        containers: [
          {
            ...sandboxd,
            imagePullPolicy: 'Never',
            args: [],
            command: [
              '/bin/sh',
              '-c',
              `/usr/local/bin/sandboxd --grpc-port=9090 --rest-port=8080 --root-dir=/workspace & exec /bin/nc -ll -p ${PORT} -e /bin/nc 127.0.0.1 8080`,
            ],
            ports: [
              { name: 'relay', containerPort: PORT, protocol: 'TCP' },
              { name: 'grpc', containerPort: 9090, protocol: 'TCP' },
            ],
          },
        ],
      },
      runtime: { kind: 'sandboxd', container: 'sandboxd', ports: [PORT, 9090] },
    });
    env.addRouter('router', {
      image: routerImage,
      namespace: ns,
      replicas: 1,
      authorization,
      // the API server as the router's pod reaches it: the node's relay behind the `kubernetes` Service DNAT (node.sh)
      apiServer: [{ cidr: `${realNode(c).nodeIP}/32`, port: c.info.ports.apiserver }],
      sandboxPorts: [PORT],
      callers: [{ namespace: ns, podLabels: { 'app.kubernetes.io/name': 'agentplane-verifier' } }],
    });
    // The default transport for a sandboxd template (port-forward: the router forwards HTTP/1.1 only, not sandboxd's
    // gRPC); the router's own probes go through --router-url. One CPU: the default 250m starves 15 s probe deadlines here.
    env.addVerifierJob('verify', {
      image: VERIFIER_IMAGE,
      delivery: 'plain',
      resources: { cpu: '1', memory: '512Mi' },
    });
    return synthesizeEnvironment(env).objects.map((o) => structuredClone(o.object) as unknown as KubeObject);
  }

  /** Applies the environment into a fresh namespace, starts its router pod, runs its Job to the end. */
  async function run(id: string, authorization: RouterAuthorization): Promise<JobRun> {
    const ns = await freshNamespace(c, `rvj-${id}`);
    namespaces.push(ns);
    const objects = perTestClusterScoped(synth(ns, authorization), ns);
    clusterScoped.push(...objects.filter((o) => o.metadata?.namespace === undefined));
    const job = objects.find((o) => o.kind === 'Job')!;
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    await serverSideApply(c.info.kubeconfig, [rootCaConfigMap(c, ns), ...objects.filter((o) => o !== job)]);
    const router = await startDeploymentPod(c, ns, withServiceAccountVolume(deployment));
    const runnable = withServiceAccountVolume(job) as KubeObject & { spec: { template: { spec: k8s.V1PodSpec } } };
    const spec = runnable.spec.template.spec;
    const container = spec.containers[0]!;
    const args = [...container.args!];
    args[args.indexOf('--router-url') + 1] = `http://${router.status!.podIP!}:8080`;
    container.args = [...args, '--controller', 'external'];
    Object.assign(spec, onRealNode(realNode(c)));
    await serverSideApply(c.info.kubeconfig, [runnable]);
    const batch = c.kc.makeApiClient(k8s.BatchV1Api);
    await waitFor(
      `Job ${ns}/${JOB} finished`,
      420_000,
      async () => {
        const j = await batch.readNamespacedJob({ namespace: ns, name: JOB });
        return j.status?.conditions?.some((x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True')
          ? true
          : undefined;
      },
      2000,
    );
    const pods = await c.core.listNamespacedPod({ namespace: ns, labelSelector: `app.kubernetes.io/name=${JOB}` });
    const pod = pods.items[0]!;
    const log = await c.core.readNamespacedPodLog({ namespace: ns, name: pod.metadata!.name!, container: 'verify' });
    const report = VerifyReportSchema.parse(stdoutDocument(log)) as VerifyReport;
    return { namespace: ns, pod, report };
  }

  const routerRow = (r: JobRun) => r.report.capabilities.find((x) => x.name === 'router')!;
  const verifiedFacts = (r: JobRun) =>
    routerRow(r)
      .evidence.filter((e) => e.step === 'verified')
      .map((e) => [e.field ?? null, e.verdict, e.reason, e.value ?? null]);

  let guarded: JobRun;
  let open: JobRun;

  beforeAll(async () => {
    c = connect();
    loaded = await loadRelease('v0.5.6', {
      mirror: MIRROR,
    });
    const image = spawnSync(
      'bash',
      ['test-cluster/scripts/verifier-image.sh', 'import', realNode(c).containerdSocket],
      { cwd: repo, encoding: 'utf8' },
    );
    if (image.status !== 0) throw new Error(`verifier image import failed: ${image.stderr}`);
    routerImage = pinnedByDigest(c, ROUTER_IMAGE);
    [guarded, open] = await Promise.all([
      run('tr', { mode: 'tokenreview' }),
      run('aa', { mode: 'allow-all', acknowledgeUnauthenticated: true }),
    ]);
  }, 900_000);

  afterAll(async () => {
    for (const ns of namespaces) await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    for (const o of clusterScoped)
      await (
        o.kind === 'RuntimeClass'
          ? c.kc.makeApiClient(k8s.NodeV1Api).deleteRuntimeClass({ name: o.metadata!.name! })
          : o.kind === 'ClusterRole'
            ? rbac.deleteClusterRole({ name: o.metadata!.name! })
            : rbac.deleteClusterRoleBinding({ name: o.metadata!.name! })
      ).catch(() => undefined);
  }, 60_000);

  test('the construct-default router: reached 5/5 from the Job, the canary proven reachable, every negative refused with nothing dialled: verified', () => {
    expect(guarded.pod.spec!.nodeName).toBe(realNode(c).name);
    const podIP = guarded.pod.status!.podIP!;
    const r = routerRow(guarded);
    const digest = routerImage.slice(routerImage.indexOf('@') + 1);
    expect(verifiedFacts(guarded)).toEqual([
      ['status.containerStatuses[].imageID', 'proven', 'ImageDigestPinned', digest],
      ['health via router', 'proven', 'RouterReachedRuntime', '5/5'],
      ['request without credentials', 'proven', 'RouterRequiresCredentials', '401'],
      ['control X-Sandbox-Pod-IP <canary>', 'proven', 'RouterCanaryReached', `dialled ${podIP}:${PORT}`],
      ['(a) X-Sandbox-ID ../kube-system/x', 'proven', 'RouterRefusedNegative', '400'],
      [expect.stringMatching(/^\(b\) X-Sandbox-ID \S+ \+ X-Sandbox-Pod-IP /), 'proven', 'RouterRefusedNegative', '401'],
      ['(c) X-Sandbox-Pod-IP 127.0.0.1', 'proven', 'RouterRefusedNegative', '400'],
    ]);
    expect({ state: r.state, next: r.nextReason }).toEqual({ state: 'verified', next: null });
    expect(guarded.report.capabilities.find((x) => x.name === 'runtime-exec')!.state).toBe('verified');
  });

  test('an allow-all router dials the canary a credential-less request names: below verified, the dialled address as evidence', () => {
    const podIP = open.pod.status!.podIP!;
    const r = routerRow(open);
    const facts = verifiedFacts(open);
    expect(facts).toContainEqual([
      expect.stringMatching(/^\(b\) X-Sandbox-ID \S+ \+ X-Sandbox-Pod-IP /),
      'missing',
      'RouterDialedCanary',
      `dialled ${podIP}:${PORT}`,
    ]);
    // the control without credentials was dialled too: the canary was reachable, so the finding is sound
    expect(facts).toContainEqual([
      'control X-Sandbox-Pod-IP <canary>',
      'proven',
      'RouterCanaryReached',
      `dialled ${podIP}:${PORT}`,
    ]);
    expect({ state: r.state, next: r.nextReason }).toEqual({ state: 'configured', next: 'RouterDialedCanary' });
  });
});
