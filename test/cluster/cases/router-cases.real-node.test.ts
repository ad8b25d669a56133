/**
 * Cases router-warm-nxdomain and router-podip-ssrf, verifier side, on the REAL node (the shared cluster, as
 * case netpol-router-peer-mismatch's real-node test: kube-router enforcing) with the router AgentPlane synthesizes running in a pod there: two
 * `env.addRouter` outputs, each in a namespace of its own, reached through `kubectl port-forward svc/<service>` as
 * the client's tunnel mode reaches it.
 * - router-warm-nxdomain: the router with `cache: false` (allow-all, acknowledged) in front of the verifier's warm-pool probe sandbox (Ready,
 *   no per-sandbox Service), 20 samples by name: its DNS fallback fails (the test cluster runs no cluster DNS), the
 *   router answers 502 and stays below verified with the cause class, the missing Service and the cache control; the
 *   same sandbox through the cached router is proven 20/20.
 * - router-podip-ssrf: the cached router with the construct's default authorization (tokenreview, token required): every
 *   credential-less request refused by the real router (401; 400 for the invalid id and the loopback pod IP); the verifier, outside the node, has no canary the pod can
 *   dial, so that nothing was dialled stays unproven and the router stays below verified (`RouterNoConnectionUnproven`).
 * Stand-ins, said here: this cluster runs no deployment controller, so each Deployment's pod (its template, plus the
 * real node's toleration and the ServiceAccount token volume of in-cluster-router.ts) is created as the ReplicaSet
 * would; cluster-scoped RBAC gets a per-test name so the shared cluster's own `sandbox-router` binding is untouched.
 * sandboxd binds 127.0.0.1 only (packages/sandboxd/cmd/sandboxd/main.go@v0.5.6), so the template's pod relays
 * 0.0.0.0:8081 to it (busybox nc); the verifier and the routers both use 8081.
 */
import * as k8s from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { AgentEnvironment, type RouterAuthorization } from '../../../src/constructs/index.js';
import { loadRelease, type LoadedRelease } from '../../../src/releases/index.js';
import { synthesizeEnvironment } from '../../../src/synth/index.js';
import { runVerify } from '../../../src/verify/index.js';
import type { RouterPlan, TemplatePlan } from '../../../src/verify/plan.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { AdapterRuntimeProber } from '../../../src/verify/runtime-prober.js';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import {
  kubectlDir,
  portForwardService,
  rootCaConfigMap,
  withServiceAccountVolume,
} from '../client/in-cluster-router.js';
import {
  callerToken,
  describeRealNode,
  perTestClusterScoped,
  realNode,
  realNodeSandboxdTemplate,
  SANDBOXD_ARGS,
  startDeploymentPod,
} from '../real-node-helpers.js';
import { EXT, plan } from '../verify/verifier-env.js';
import { MIRROR } from '../../mirror.js';

const ROUTER_IMAGE = 'registry.local/agentplane-test/sandbox-router:v0.5.6';
const PORT = 8081;
/** Reasons of the router's path evidence: reached the runtime, or the upstream failure's cause class. */
const PATH_REASONS = /^Router(ReachedRuntime|Upstream)/;

interface InClusterRouter {
  readonly namespace: string;
  readonly pod: string;
  readonly plan: RouterPlan;
  readonly stop: () => void;
}

describeRealNode('cases router-warm-nxdomain and router-podip-ssrf on the real node, router in a pod', () => {
  let c: Cluster;
  let ns: string;
  let loaded: LoadedRelease;
  let kubectl: string;
  const routers: InClusterRouter[] = [];
  const clusterScoped: KubeObject[] = [];

  /** Synthesizes a router into `namespace`, applies it, starts its pod on the real node and port-forwards its Service. */
  async function router(id: string, cache: boolean, authorization: RouterAuthorization): Promise<InClusterRouter> {
    const namespace = await freshNamespace(c, `rc-${id}`);
    const env = new AgentEnvironment(new App(), `rc-${id}`, {
      release: loaded,
      install: false,
      defaultNamespace: ns,
      createNamespaces: false,
    });
    const r = env.addRouter('router', {
      image: ROUTER_IMAGE,
      namespace,
      replicas: 1,
      cache,
      authorization,
      // the API server as the router's pod reaches it: the node's relay behind the `kubernetes` Service DNAT (node.sh)
      apiServer: [{ cidr: `${realNode(c).nodeIP}/32`, port: c.info.ports.apiserver }],
      sandboxPorts: [PORT],
      callers: [],
    });
    const objects = perTestClusterScoped(
      synthesizeEnvironment(env).objects.map((o) => structuredClone(o.object) as unknown as KubeObject),
      namespace,
    );
    clusterScoped.push(...objects.filter((o) => o.metadata?.namespace === undefined));
    const deployment = withServiceAccountVolume(objects.find((o) => o.kind === 'Deployment')!);
    await serverSideApply(c.info.kubeconfig, [rootCaConfigMap(c, namespace), ...objects]);
    const pod = (await startDeploymentPod(c, namespace, deployment)).metadata!.name!;
    const tunnel = await portForwardService(c, kubectl, namespace, r.serviceName, r.port);
    const made: InClusterRouter = {
      namespace,
      pod,
      plan: {
        namespace,
        service: r.serviceName,
        podLabels: r.podLabels,
        url: tunnel.url,
        authorizationMode: r.authorizationMode,
        acknowledgeUnauthenticated: r.acknowledgeUnauthenticated,
      },
      stop: tunnel.stop,
    };
    routers.push(made);
    return made;
  }

  const templatePlan = (): TemplatePlan => ({
    namespace: ns,
    name: 'relay',
    runtime: 'sandboxd',
    ports: { rest: PORT, grpc: 9090 },
    networkPolicyManagement: 'Unmanaged',
  });

  async function verifyThrough(r: InClusterRouter, runId: string, token?: string): Promise<VerifyReport> {
    const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
    const runtime = new AdapterRuntimeProber({
      client,
      routerUrl: r.plan.url!,
      ...(token ? { routerToken: token } : {}),
    });
    try {
      const { report } = await runVerify({
        plan: plan(c, [templatePlan()], {
          router: r.plan,
          transport: 'port-forward',
          samples: 20,
          probeTimeoutMs: 10_000,
          readyTimeoutMs: 120_000,
          requirements: requirementsFor(['runtime-exec', 'router', `template/${ns}/relay`]),
        }),
        client,
        runtime,
        loaded,
        controllerMode: 'external',
        progress: () => undefined,
        runId,
      });
      return report;
    } finally {
      await runtime.close();
    }
  }

  const row = (r: VerifyReport, name: string) => r.capabilities.find((x) => x.name === name)!;
  const pathEvidence = (r: VerifyReport) =>
    row(r, 'router').evidence.filter((e) => e.step === 'verified' && PATH_REASONS.test(e.reason));

  let cached: InClusterRouter;
  let uncached: InClusterRouter;
  let token: string;

  beforeAll(async () => {
    c = connect();
    loaded = await loadRelease('v0.5.6', {
      mirror: MIRROR,
    });
    kubectl = kubectlDir();
    ns = await freshNamespace(c, 'rcreal');
    // sandboxd on loopback, relayed on 0.0.0.0:8081 so the router (pod IP) and port-forward (pod loopback) reach it.
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: realNodeSandboxdTemplate(
        c,
        ns,
        'relay',
        {
          args: [],
          command: [
            '/bin/sh',
            '-c',
            `/usr/local/bin/sandboxd ${SANDBOXD_ARGS.join(' ')} & exec /bin/nc -ll -p ${PORT} -e /bin/nc 127.0.0.1 8080`,
          ],
          ports: [{ containerPort: PORT }],
        },
        { management: 'Unmanaged' },
      ),
    });
    uncached = await router('nocache', false, { mode: 'allow-all', acknowledgeUnauthenticated: true });
    cached = await router('cached', true, { mode: 'tokenreview' });
    // The sandboxes admit both routers on the relay port (kube-router enforces it).
    await c.kc.makeApiClient(k8s.NetworkingV1Api).createNamespacedNetworkPolicy({
      namespace: ns,
      body: {
        metadata: { name: 'relay-admits-routers' },
        spec: {
          podSelector: { matchLabels: { app: 'sandbox' } },
          policyTypes: ['Ingress'],
          ingress: [
            {
              _from: [uncached, cached].map((r) => ({
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': r.namespace } },
                podSelector: { matchLabels: { ...r.plan.podLabels } },
              })),
              ports: [{ protocol: 'TCP', port: PORT }],
            },
          ],
        },
      },
    });
    token = await callerToken(c, ns);
  }, 400_000);

  afterAll(async () => {
    for (const r of routers) r.stop();
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    for (const r of routers) await c.core.deleteNamespace({ name: r.namespace }).catch(() => undefined);
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    for (const o of clusterScoped)
      await (
        o.kind === 'ClusterRole'
          ? rbac.deleteClusterRole({ name: o.metadata!.name! })
          : rbac.deleteClusterRoleBinding({ name: o.metadata!.name! })
      ).catch(() => undefined);
  }, 60_000);

  test('router-warm-nxdomain: the router with its cache off answers 502 by name; below verified, the name unresolved, no Service, the pod-IP control answered', async () => {
    const report = await verifyThrough(uncached, 'rc03a');
    expect(row(report, 'runtime-exec').state).toBe('verified');
    expect(row(report, 'router').state).not.toBe('verified');
    const failed = pathEvidence(report);
    expect(failed.map((e) => [e.verdict, e.reason, e.value])).toEqual([
      ['unknown', 'RouterUpstreamNxdomain', 'sample 1/20'],
    ]);
    expect(failed[0]!.observed).toEqual({ perSandboxService: 0, byPodIpAnswered: 1 });
    // What the real router did: a DNS lookup of <sandbox>.<ns>.svc.cluster.local, in its own log.
    const sandbox = failed[0]!.subject.split('/').pop()!;
    const log = await c.core.readNamespacedPodLog({ namespace: uncached.namespace, name: uncached.pod });
    // prose: the router's own log line (upstream words) names the lookup it made
    expect(log).toContain(`lookup ${sandbox}.${ns}.svc.cluster.local`);
  }, 400_000);

  test('router-warm-nxdomain control and router-podip-ssrf: through the cached construct-default router the path is proven 20/20; it refuses every credential-less request (401 for a sandbox, 400 for (a) and (c)), but no canary is reachable from the pod, so below verified', async () => {
    const report = await verifyThrough(cached, 'rc14a', token);
    expect(pathEvidence(report).map((e) => [e.verdict, e.reason, e.value])).toEqual([
      ['proven', 'RouterReachedRuntime', '20/20'],
    ]);
    const r = row(report, 'router');
    const negatives = r.evidence
      .filter((e) => e.step === 'verified' && !PATH_REASONS.test(e.reason))
      .map((e) => [e.field, e.reason, e.value ?? null]);
    expect(negatives).toEqual([
      ['request without credentials', 'RouterRequiresCredentials', '401'],
      ['(a) X-Sandbox-ID ../kube-system/x', 'RouterNoConnectionUnproven', '400'],
      ['(c) X-Sandbox-Pod-IP 127.0.0.1', 'RouterNoConnectionUnproven', '400'],
      ['(b) X-Sandbox-Pod-IP <not the sandbox>', 'RouterNoConnectionUnproven', null],
    ]);
    expect(r.evidence.find((e) => e.step === 'configured')?.reason).toBe('RouterAdmittedByPolicies');
    expect({ state: r.state, next: r.nextReason }).toEqual({ state: 'configured', next: 'RouterNoConnectionUnproven' });
  }, 400_000);
});
