/**
 * Case router-podip-ssrf, verifier side, against the real v0.5.6 sandbox-router binary the
 * test cluster runs: the cluster's own router (`--authz-mode=allow-all --allow-loopback-pod-ip`, test-cluster/README.md)
 * and routers this file starts from the same cached binary with other flags — upstream's defaults, tokenreview with and
 * without `--authz-tokenreview-require-token`, scoped-token. The verifier sends (a) `X-Sandbox-ID: ../kube-system/x`,
 * (b) a live Sandbox's name with `X-Sandbox-Pod-IP` naming its own listener on 127.0.0.2, (c) `X-Sandbox-Pod-IP:
 * 127.0.0.1` naming its listener there (the routers are local processes, so their loopback is the verifier's), plus a
 * request without credentials. What the real router does decides the verdict: a router that forwards (b) or (c) to the
 * listener stays below verified; one that refuses all three with a 4xx and never connects passes them. Targets are
 * 127.0.0.0/8 only (the test cluster's pod network is loopback too, hence `--allow-loopback-pod-ip` where a router must
 * reach its pods).
 */
import * as k8s from '@kubernetes/client-node';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Cluster as ApiCluster } from '../../../src/adapter/kubernetes/cluster.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { releaseFacts } from '../../../src/releases/index.js';
import type { Evidence } from '../../../src/verify/evidence.js';
import { runVerify } from '../../../src/verify/index.js';
import type { RouterPlan, VerifyPlan } from '../../../src/verify/plan.js';
import type { ProbeDeps } from '../../../src/verify/probes/common.js';
import { routerNegativeProbe } from '../../../src/verify/probes/router-negative.js';
import { AdapterRuntimeProber } from '../../../src/verify/runtime-prober.js';
import { Workload } from '../../../src/verify/workload.js';
import { RUN_DIR } from '../../../test-cluster/kube.js';
import { connect, freshNamespace, sandboxdPodTemplate, waitFor, type Cluster } from '../helpers.js';
import { callerToken } from '../real-node-helpers.js';
import { EXT, plan, sandboxdTemplate, templatePlan } from '../verify/verifier-env.js';

const CANARY = '127.0.0.2';
const ROUTER_BIN = path.join(
  execFileSync('bash', ['-c', 'source test-cluster/scripts/lib.sh && tc_key_dir agent-sandbox-v0.5.6'], {
    encoding: 'utf8',
  }).trim(),
  'sandbox-router',
);

let c: Cluster;
let ns: string;
let routerNs: string;
let token: string;
const routers: ChildProcess[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/**
 * Starts the cached v0.5.6 router with `flags` on free loopback ports, as up.sh does (admin kubeconfig for its pod
 * cache and TokenReviews; a mount namespace whose resolv.conf names 127.0.0.1, so its DNS fallback stays on loopback).
 */
async function startRouter(flags: string[]): Promise<string> {
  const [http, metrics, probe] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    'unshare',
    [
      '-m',
      'sh',
      '-c',
      'mount --bind "$0" /etc/resolv.conf && exec "$@"',
      path.join(RUN_DIR, 'resolv.conf'),
      ROUTER_BIN,
      `--kubeconfig=${c.info.kubeconfig}`,
      `--http-bind-address=127.0.0.1:${http}`,
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      `--health-probe-bind-address=127.0.0.1:${probe}`,
      '--cache-enabled',
      '--upstream-max-retries=0',
      '--proxy-timeout=5s',
      ...flags,
    ],
    { stdio: 'ignore' },
  );
  routers.push(child);
  await waitFor(`router ${flags.join(' ')} ready`, 30_000, async () => {
    const r = await fetch(`http://127.0.0.1:${probe}/readyz`).catch(() => undefined);
    return r?.ok ? true : undefined;
  });
  return `http://127.0.0.1:${http}`;
}

function deps(router: Partial<RouterPlan> & { url: string }): ProbeDeps {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const cluster = new ApiCluster(client);
  const p: VerifyPlan = plan(c, [templatePlan(ns, 'healthy')]);
  return {
    cluster,
    plan: { ...p, router: { ...p.router!, ...router } },
    facts: releaseFacts('v0.5.6'),
    runtime: new AdapterRuntimeProber({}),
    workload: new Workload(cluster, 'ssrf00'),
  };
}

/** Runs the negative probes; returns `field -> reason` and the evidence. */
async function negative(router: Partial<RouterPlan> & { url: string }): Promise<{
  reasons: Record<string, string>;
  evidence: readonly Evidence[];
}> {
  const evidence = await routerNegativeProbe(deps(router), []).run({
    signal: new AbortController().signal,
    deadlineMs: 60_000,
    evidence: [],
    note: () => undefined,
  });
  return { reasons: Object.fromEntries(evidence.map((e) => [e.field ?? e.subject, e.reason])), evidence };
}

const A = '(a) X-Sandbox-ID ../kube-system/x';
const B = '(b) X-Sandbox-ID sb + X-Sandbox-Pod-IP 127.0.0.2';
const C = '(c) X-Sandbox-Pod-IP 127.0.0.1';
const AUTH = 'request without credentials';

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'ssrf');
  routerNs = await freshNamespace(c, 'ssrf-router');
  const tmpl = sandboxdTemplate(ns, 'healthy', 'sandboxd') as { spec: Record<string, unknown> };
  // Unmanaged, with the environment's own policy admitting the router pods of routerNs on the runtime port.
  tmpl.spec.networkPolicyManagement = 'Unmanaged';
  await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxtemplates', body: tmpl });
  await c.kc.makeApiClient(k8s.NetworkingV1Api).createNamespacedNetworkPolicy({
    namespace: ns,
    body: {
      metadata: { name: 'healthy-admits-router' },
      spec: {
        podSelector: { matchLabels: { app: 'sandbox' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            _from: [
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': routerNs } },
                podSelector: { matchLabels: { app: 'sandbox-router' } },
              },
            ],
            ports: [{ protocol: 'TCP', port: 8080 }],
          },
        ],
      },
    },
  });
  // The routers run as local processes; this kwok pod stands in for their pod identity (namespace, labels), which
  // the admission check reads live. It runs nothing.
  await c.core.createNamespacedPod({
    namespace: routerNs,
    body: {
      metadata: { name: 'router-1', labels: { app: 'sandbox-router' } },
      spec: {
        nodeSelector: { 'agentplane.io/runtime': 'standin' },
        tolerations: [{ operator: 'Exists' }],
        containers: [{ name: 'router', image: 'registry.local/agentplane-test/sandbox-router:v0.5.6' }],
      },
    },
  });
  // A live Sandbox (`sb`) for the probes to name.
  await c.custom.createNamespacedCustomObject({
    group: 'agents.x-k8s.io',
    version: 'v1beta1',
    namespace: ns,
    plural: 'sandboxes',
    body: {
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name: 'sb' },
      spec: { podTemplate: sandboxdPodTemplate() },
    },
  });
  token = await callerToken(c, ns);
}, 60_000);

afterAll(async () => {
  for (const r of routers) r.kill('SIGTERM');
});

test("the cluster's router (allow-all, loopback pod IPs allowed) forwards (b) and (c) to the verifier's listener: not refused", async () => {
  const url = `http://127.0.0.1:${c.info.ports.routerHttp}`;
  const { reasons, evidence } = await negative({ url, canaryHost: CANARY, authorizationMode: 'allow-all' });
  expect(reasons).toEqual({
    [AUTH]: 'RouterUnauthenticated',
    [A]: 'RouterRefusedNegative',
    [B]: 'RouterDialedCanary',
    [C]: 'RouterDialedCanary',
  });
  const b = evidence.find((e) => e.field === B)!;
  expect([b.verdict, b.value]).toEqual(['missing', expect.stringMatching(/^dialled 127\.0\.0\.2:\d+$/)]);
  // prose: the request line the canary received from the router (upstream bytes) quoted in the evidence
  expect(b.message).toMatch(/request "GET \/v1\/health HTTP\/1\.1"/);
  expect(evidence.find((e) => e.field === A)!.value).toBe('400');
  // Acknowledged allow-all: the report still says the router authenticates nobody, without blocking on it.
  const acked = await negative({
    url,
    canaryHost: CANARY,
    authorizationMode: 'allow-all',
    acknowledgeUnauthenticated: true,
  });
  const auth = acked.evidence.find((e) => e.field === AUTH)!;
  expect([auth.verdict, auth.reason]).toEqual(['proven', 'RouterUnauthenticatedAcknowledged']);
  expect(acked.reasons[B]).toBe('RouterDialedCanary');
}, 60_000);

test('no canary host: refusals are seen, the no-connection part stays unproven; (c) to an unowned port shows the dial as a 502', async () => {
  const url = `http://127.0.0.1:${c.info.ports.routerHttp}`;
  const { reasons, evidence } = await negative({ url });
  expect(reasons).toEqual({
    [AUTH]: 'RouterUnauthenticated',
    [A]: 'RouterNoConnectionUnproven',
    [C]: 'RouterAcceptedNegative',
    '(b) X-Sandbox-Pod-IP <not the sandbox>': 'RouterNoConnectionUnproven',
  });
  expect(evidence.find((e) => e.field === C)!.value).toBe('502');
  expect(evidence.every((e) => e.verdict !== 'proven')).toBe(true);
}, 60_000);

test("upstream's defaults (allow-all, loopback rejected): (a)-(c) refused with 400, nothing dialled; nobody authenticated", async () => {
  const url = await startRouter([]);
  const { reasons, evidence } = await negative({ url, canaryHost: CANARY });
  expect(reasons).toEqual({
    [AUTH]: 'RouterUnauthenticated',
    [A]: 'RouterRefusedNegative',
    [B]: 'RouterRefusedNegative',
    [C]: 'RouterRefusedNegative',
  });
  expect([A, B, C].map((f) => evidence.find((e) => e.field === f)!.value)).toEqual(['400', '400', '400']);
}, 60_000);

test('tokenreview with --authz-tokenreview-require-token: credential-less requests refused 401 before any dial', async () => {
  const url = await startRouter([
    '--authz-mode=tokenreview',
    '--authz-tokenreview-require-token',
    '--allow-loopback-pod-ip',
  ]);
  const { reasons, evidence } = await negative({ url, canaryHost: CANARY, authorizationMode: 'tokenreview' });
  expect(reasons).toEqual({
    [AUTH]: 'RouterRequiresCredentials',
    [A]: 'RouterRefusedNegative',
    [B]: 'RouterRefusedNegative',
    [C]: 'RouterRefusedNegative',
  });
  expect([AUTH, A, B, C].map((f) => evidence.find((e) => e.field === f)!.value)).toEqual(['401', '400', '401', '401']);
}, 60_000);

test("tokenreview without require-token (upstream's tokenreview default) lets token-less (b) through to the listener", async () => {
  const url = await startRouter(['--authz-mode=tokenreview', '--allow-loopback-pod-ip']);
  const { reasons } = await negative({ url, canaryHost: CANARY, authorizationMode: 'tokenreview' });
  expect(reasons).toEqual({
    [AUTH]: 'RouterUnauthenticated',
    [A]: 'RouterRefusedNegative',
    [B]: 'RouterDialedCanary',
    [C]: 'RouterDialedCanary',
  });
}, 60_000);

test('scoped-token: every credential-less request refused 401, nothing dialled', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-scoped-'));
  writeFileSync(path.join(dir, 'secret'), 'agentplane-test-scoped-token-secret-0123456789abcdef');
  const url = await startRouter([
    '--authz-mode=scoped-token',
    `--authz-scoped-token-secret-file=${path.join(dir, 'secret')}`,
    '--allow-loopback-pod-ip',
  ]);
  const { reasons, evidence } = await negative({ url, canaryHost: CANARY, authorizationMode: 'scoped-token' });
  expect(reasons).toEqual({
    [AUTH]: 'RouterRequiresCredentials',
    [A]: 'RouterRefusedNegative',
    [B]: 'RouterRefusedNegative',
    [C]: 'RouterRefusedNegative',
  });
  expect([AUTH, B, C].map((f) => evidence.find((e) => e.field === f)!.value)).toEqual(['401', '401', '401']);
}, 60_000);

describe('whole runs: router verified only when the negative probes hold', () => {
  const row = (r: Awaited<ReturnType<typeof runVerify>>['report'], name: string) =>
    r.capabilities.find((x) => x.name === name)!;

  async function verifyThrough(url: string, extra: Partial<RouterPlan>) {
    const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
    const runtime = new AdapterRuntimeProber({ client, routerUrl: url, routerToken: token });
    const p = plan(c, [templatePlan(ns, 'healthy')]);
    try {
      return await runVerify({
        plan: {
          ...p,
          templates: [{ ...templatePlan(ns, 'healthy'), networkPolicyManagement: 'Unmanaged' }],
          router: {
            namespace: routerNs,
            service: 'sandbox-router-svc',
            podLabels: { app: 'sandbox-router' },
            url,
            canaryHost: CANARY,
            ...extra,
          },
        },
        client,
        runtime,
        controllerMode: 'external',
        progress: () => undefined,
      });
    } finally {
      await runtime.close();
    }
  }

  test('tokenreview router demanding tokens, the verifier calling with one: router verified on live observations', async () => {
    const url = await startRouter([
      '--authz-mode=tokenreview',
      '--authz-tokenreview-require-token',
      '--allow-loopback-pod-ip',
    ]);
    const { report } = await verifyThrough(url, { authorizationMode: 'tokenreview' });
    const router = row(report, 'router');
    expect({ state: router.state, next: router.next }).toEqual({ state: 'verified', next: null });
    expect(router.evidence.map((e) => `${e.step} ${e.reason}`)).toEqual([
      'discovered RouterAnswersOutsideCluster',
      'compatible RouterHealthy',
      'configured RouterAdmittedByPolicies',
      'verified RouterReachedRuntime',
      'verified RouterRequiresCredentials',
      'verified RouterRefusedNegative',
      'verified RouterRefusedNegative',
      'verified RouterRefusedNegative',
    ]);
    expect(router.evidence.find((e) => e.step === 'configured')!.value).toBe(`${ns}/healthy-admits-router`);
  }, 180_000);

  test('the same environment through a router that forwards (b): router stays configured, the finding is named', async () => {
    const url = await startRouter(['--authz-mode=tokenreview', '--allow-loopback-pod-ip']);
    const { report } = await verifyThrough(url, { authorizationMode: 'tokenreview' });
    const router = row(report, 'router');
    expect(router.state).toBe('configured');
    const blocking = router.evidence.filter((e) => e.step === 'verified' && e.verdict !== 'proven');
    expect(blocking.map((e) => [e.field, e.reason])).toEqual([
      [AUTH, 'RouterUnauthenticated'],
      [B, 'RouterDialedCanary'],
      [C, 'RouterDialedCanary'],
    ]);
  }, 180_000);
});
