/**
 * The VerifierJob's identity and its in-cluster entry point against the real API server. The Job's pod itself needs a
 * real node (not on main yet), so the entry point runs here as a process with exactly what the pod would have: the
 * ServiceAccount's token (a TokenRequest) and CA in a service-account directory, KUBERNETES_SERVICE_HOST/PORT, and the
 * descriptor ConfigMap as the Job mounts it (read back from the cluster after applying the synthesized objects).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { jest } from '@jest/globals';
import { App } from 'cdk8s';
import { KubeClient } from '../../src/adapter/kubernetes/client.js';
import { PortForwardTransport } from '../../src/adapter/transports/port-forward.js';
import { AgentEnvironment } from '../../src/constructs/index.js';
import { loadRelease } from '../../src/releases/index.js';
import { VerifyReportSchema } from '../../src/verify/index.js';
import { runtimeFailureReason } from '../../src/verify/probes/workload/runtime-proof.js';
import { AdapterRuntimeProber } from '../../src/verify/runtime-prober.js';
import { serverSideApply, type KubeObject } from '../../test-cluster/kube.js';
import { connect, freshNamespace } from './helpers.js';
import { MIRROR } from '../mirror.js';

jest.setTimeout(300_000);

const c = connect();
let ns: string;
let saDir: string;
let descriptorDir: string;

beforeAll(async () => {
  ns = await freshNamespace(c, 'vjob');
  const release = await loadRelease('v0.5.6', {
    mirror: MIRROR,
    cacheDir: mkdtempSync(path.join(tmpdir(), 'agentplane-vjob-')),
  });
  const env = new AgentEnvironment(new App(), 'vjob', {
    release,
    install: false,
    defaultNamespace: ns,
    createNamespaces: false,
  });
  env.addVerifierJob('verify', { image: 'registry.example.internal/agentplane/verifier:0.1.0' });
  const objects = (env.toJson() as KubeObject[]).filter((o) => o.kind !== 'Job');
  await serverSideApply(c.info.kubeconfig, objects);
  const token = await c.core.createNamespacedServiceAccountToken({
    namespace: ns,
    name: 'agentplane-verifier',
    body: { spec: { audiences: [], expirationSeconds: 3600 } } as k8s.AuthenticationV1TokenRequest,
  });
  saDir = mkdtempSync(path.join(tmpdir(), 'agentplane-sa-'));
  writeFileSync(path.join(saDir, 'token'), token.status!.token);
  copyFileSync(c.info.caFile, path.join(saDir, 'ca.crt'));
  // the descriptor ConfigMap as the Job's projected volume mounts it: one file per key
  const cm = await c.core.readNamespacedConfigMap({ name: 'agentplane-environment', namespace: ns });
  descriptorDir = mkdtempSync(path.join(tmpdir(), 'agentplane-desc-'));
  for (const [k, v] of Object.entries(cm.data ?? {})) writeFileSync(path.join(descriptorDir, k), v);
});

afterAll(async () => {
  await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

function review(attrs: k8s.V1ResourceAttributes): Promise<boolean> {
  const api = c.kc.makeApiClient(k8s.AuthorizationV1Api);
  return api
    .createSubjectAccessReview({
      body: {
        spec: {
          user: `system:serviceaccount:${ns}:agentplane-verifier`,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
          resourceAttributes: attrs,
        },
      },
    })
    .then((r) => r.status!.allowed);
}

function asVerifier(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: c.info.apiServer, caFile: c.info.caFile }],
    users: [{ name: 'u', token: verifierToken() }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}
function verifierToken(): string {
  return readFileSync(path.join(saDir, 'token'), 'utf8');
}

describe('VerifierJob identity (SubjectAccessReview, and tried)', () => {
  test('refused pods/exec and a Secret read; allowed the report ConfigMap only by its name', async () => {
    expect(await review({ namespace: ns, verb: 'create', resource: 'pods', subresource: 'exec' })).toBe(false);
    expect(
      await review({ namespace: 'agent-sandbox-system', verb: 'create', resource: 'pods', subresource: 'exec' }),
    ).toBe(false);
    expect(await review({ namespace: ns, verb: 'get', resource: 'secrets', name: 'anything' })).toBe(false);
    expect(await review({ namespace: ns, verb: 'list', resource: 'secrets' })).toBe(false);
    expect(
      await review({ namespace: ns, verb: 'update', resource: 'configmaps', name: 'agentplane-verify-report' }),
    ).toBe(true);
    expect(
      await review({ namespace: ns, verb: 'update', resource: 'configmaps', name: 'agentplane-environment' }),
    ).toBe(false);
    expect(await review({ namespace: ns, verb: 'get', resource: 'configmaps', name: 'agentplane-environment' })).toBe(
      false,
    );
    expect(await review({ namespace: ns, verb: 'create', resource: 'pods', subresource: 'portforward' })).toBe(false);
  });

  test('tried with its token: the Secret read and the exec are answered 403', async () => {
    const core = asVerifier().makeApiClient(k8s.CoreV1Api);
    await c.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'not-for-the-verifier' }, stringData: { k: 'v' } },
    });
    await expect(core.readNamespacedSecret({ namespace: ns, name: 'not-for-the-verifier' })).rejects.toMatchObject({
      code: 403,
    });
    // exec is a connect (POST) on pods/exec; the authorizer answers before any pod is looked up
    const curl = spawnSync(
      'curl',
      [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--cacert',
        c.info.caFile,
        '-X',
        'POST',
        '-H',
        `Authorization: Bearer ${verifierToken()}`,
        `${c.info.apiServer}/api/v1/namespaces/${ns}/pods/any/exec?command=true&stdout=true`,
      ],
      { encoding: 'utf8' },
    );
    expect(curl.stdout).toBe('403');
  });
});

describe('a port-forward the identity may not open', () => {
  // This Job's transport is direct, so its identity has no pods/portforward: the real authorizer refuses the WebSocket
  // upgrade (a GET, authorized as `get`) before any pod is looked up, which is what the Job's pod met when only
  // `create` was granted.
  test('is named as refused by the API server (403), not reported as a silent runtime', async () => {
    const file = path.join(saDir, 'kubeconfig');
    writeFileSync(file, asVerifier().exportConfig());
    const client = KubeClient.connect({ kubeconfig: file });
    const prober = new AdapterRuntimeProber({ client });
    const target = {
      kind: 'sandboxd' as const,
      transport: 'port-forward' as const,
      namespace: ns,
      sandbox: 'any',
      pod: 'any',
      restPort: 8080,
    };
    try {
      // the first connection through the loopback listener is cut when the upgrade is refused; the next call says why
      expect((await prober.health(target, 5000)).kind).toBe('silent');
      const second = await prober.health(target, 5000);
      expect(second).toMatchObject({ kind: 'error', refused: true });
      expect(runtimeFailureReason(second as { kind: 'error'; refused?: true })).toBe('RuntimeTransportRefused');
    } finally {
      await prober.close();
    }
    const transport = new PortForwardTransport(client);
    try {
      const ep = await transport.http({ namespace: ns, sandboxName: 'any' }, 8080);
      if (ep.kind !== 'ok') throw new Error('no loopback listener');
      await expect(fetch(`${ep.value.baseUrl}/v1/health`)).rejects.toThrow();
      expect(await transport.http({ namespace: ns, sandboxName: 'any' }, 8080)).toMatchObject({
        kind: 'failed',
        error: {
          category: 'forbidden',
          code: 403,
          request: { verb: 'get and create', resource: 'pods/portforward' },
        },
      });
    } finally {
      await transport.close();
    }
  });
});

describe('verify --in-cluster as a process with the ServiceAccount token', () => {
  test("exit code = the report's; JSON report on stdout and in the report ConfigMap; --from-cluster prints it back", async () => {
    const url = new URL(c.info.apiServer);
    const env = {
      ...process.env,
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      AGENTPLANE_SERVICEACCOUNT_DIR: saDir,
      // the pod's /dev/termination-log, here a file of the test's own
      AGENTPLANE_TERMINATION_LOG: path.join(saDir, 'termination-log'),
      AGENTPLANE_RUN: 'vjob-run-1',
      AGENTPLANE_JOB: 'agentplane-verifier',
      AGENTPLANE_MIRROR: MIRROR,
      KUBECONFIG: '',
    };
    const run = spawnSync(
      'npx',
      [
        'tsx',
        'src/cli/main.ts',
        'verify',
        '--in-cluster',
        '--descriptor-dir',
        descriptorDir,
        '--report-configmap',
        `${ns}/agentplane-verify-report`,
        '--transport',
        'direct',
        '--probe-timeout',
        '2s',
        '--ready-timeout',
        '30s',
        '-o',
        'json',
      ],
      { env, encoding: 'utf8', timeout: 240_000 },
    );
    expect(run.stderr).not.toMatch(/report not written/);
    const report = VerifyReportSchema.parse(JSON.parse(run.stdout));
    expect(report.environment).toEqual({ name: 'vjob', release: 'v0.5.6', source: `configmap:${descriptorDir}` });
    expect(report.capabilities.map((r) => r.name)).toEqual([
      'sandbox-api',
      'extensions-api',
      'controller',
      'conversion',
      'network-isolation',
    ]);
    expect(run.status).toBe(report.outcome === 'verified' ? 0 : 6);
    const summary = readFileSync(path.join(saDir, 'termination-log'), 'utf8');
    expect(summary.startsWith(`agentplane verify: ${report.outcome} (exit ${run.status})`)).toBe(true);
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(4096);

    const cm = await c.core.readNamespacedConfigMap({ name: 'agentplane-verify-report', namespace: ns });
    expect(cm.metadata!.annotations).toMatchObject({
      'agentplane.dev/run': 'vjob-run-1',
      'agentplane.dev/job': 'agentplane-verifier',
      'agentplane.dev/release': 'v0.5.6',
      'agentplane.dev/started-at': report.startedAt,
      'agentplane.dev/exit-code': String(run.status),
    });
    expect(JSON.parse(cm.data!['report.json']!)).toEqual(report);

    const back = spawnSync(
      'npx',
      [
        'tsx',
        'src/cli/main.ts',
        'verify',
        '--from-cluster',
        '--kubeconfig',
        c.info.kubeconfig,
        '--report-configmap',
        `${ns}/agentplane-verify-report`,
        '-o',
        'json',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(JSON.parse(back.stdout)).toEqual(report);
    expect(back.status).toBe(run.status);
    const table = spawnSync(
      'npx',
      [
        'tsx',
        'src/cli/main.ts',
        'verify',
        '--from-cluster',
        '--kubeconfig',
        c.info.kubeconfig,
        '--report-configmap',
        `${ns}/agentplane-verify-report`,
        '-o',
        'markdown',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(table.stderr).toContain('report of run vjob-run-1, release v0.5.6');
    expect(table.stdout).toContain('sandbox-api');
  });

  test('--from-cluster with no stored report: exit 6 and says so', () => {
    const back = spawnSync(
      'npx',
      [
        'tsx',
        'src/cli/main.ts',
        'verify',
        '--from-cluster',
        '--kubeconfig',
        c.info.kubeconfig,
        '--report-configmap',
        `${ns}/no-such-report`,
        '-o',
        'json',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(back.status).toBe(6);
    expect(back.stderr).toMatch(/no in-cluster run has stored a report/);
  });
});
