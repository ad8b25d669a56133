/**
 * `agentplane verify` end to end as a real process against the test cluster, under the verifier's own Role:
 * a descriptor whose template answers gives exit 0; one whose runtime is silent gives exit 6 (not verified) with
 * the reason in the JSON report; `--junit` writes one testcase per capability.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { VerifyReportSchema } from '../../../src/verify/report.js';
import { RUN_LABEL } from '../../../src/verify/workload.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { EXT, sandboxdTemplate, verifierKubeconfig } from './verifier-env.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
let c: Cluster;
let ns: string;
let kubeconfig: string;

function descriptor(template: string): string {
  const d = {
    apiVersion: 'agentplane.dev/v1alpha1',
    kind: 'EnvironmentDescriptor',
    name: `cli-${template}`,
    release: {
      tag: 'v0.5.6',
      commit: '211b7579cabed9460c1a692eb687084ff4c5879d',
      family: 'v0.5',
      apiVersions: { Sandbox: 'agents.x-k8s.io/v1beta1' },
    },
    install: {
      namespace: 'agent-sandbox-system',
      controllerDeployment: 'agent-sandbox-controller',
      controllerImage: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
      extensions: true,
      certificates: 'external',
      serverSideApply: [],
    },
    runtimeClasses: [],
    templates: [
      {
        namespace: ns,
        name: template,
        runtimeClassName: '',
        networkPolicyManagement: 'Managed',
        podLabels: { app: 'sandbox' },
        runtime: { kind: 'sandboxd', container: 'sandboxd', ports: [8080, 9090] },
        images: [{ container: 'sandboxd', image: 'sandboxd:test' }],
      },
    ],
    warmPools: [],
    claims: [],
    router: {
      namespace: 'agent-sandbox-system',
      serviceName: 'sandbox-router-svc',
      port: 8080,
      podLabels: { app: 'sandbox-router' },
      image: 'sandbox-router:test',
      authorizationMode: 'allow-all',
    },
    networkPolicies: [],
    images: {},
    capabilities: [
      'sandbox-api',
      'extensions-api',
      'controller',
      'conversion',
      `template/${ns}/${template}`,
      'runtime-exec',
      'runtime-files',
    ]
      .map((capability) => ({ capability, required: 'verified' }))
      // The test cluster's router is a local allow-all process that forwards the negative probes (case router-podip-ssrf): it can be
      // required compatible at most (router-podip-ssrf.verify.test.ts).
      .concat([
        { capability: 'network-isolation', required: 'configured' },
        { capability: 'router', required: 'compatible' },
      ]),
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-env-'));
  writeFileSync(path.join(dir, 'environment.json'), JSON.stringify(d));
  return dir;
}

function verify(envDir: string, extra: string[] = []): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'verify',
      '--env',
      envDir,
      '--kubeconfig',
      kubeconfig,
      '--controller',
      'external',
      '--transport',
      'direct',
      '--router-url',
      `http://127.0.0.1:${c.info.ports.routerHttp}`,
      '--probe-timeout',
      '2s',
      '--ready-timeout',
      '60s',
      '--mirror',
      process.env.AGENTPLANE_MIRROR!,
      ...extra,
    ],
    { encoding: 'utf8', cwd: ROOT, timeout: 170_000 },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfycli');
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'ok', 'sandboxd'),
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'mute', 'none'),
  });
  kubeconfig = (await verifierKubeconfig(c, ns, [ns])).file;
}, 60_000);

test('every required capability reached: exit 0, JSON report in the stable schema, progress on stderr, JUnit file', () => {
  const junit = path.join(mkdtempSync(path.join(tmpdir(), 'agentplane-junit-')), 'verify.xml');
  const r = verify(descriptor('ok'), ['-o', 'json', '--junit', junit]);
  const report = VerifyReportSchema.parse(JSON.parse(r.stdout));
  expect({
    status: r.status,
    failing: report.capabilities.filter((x) => !x.met).map((x) => `${x.name}: ${x.state} (${x.next})`),
  }).toEqual({ status: 0, failing: [] });
  expect(report.outcome).toBe('verified');
  const net = report.capabilities.find((x) => x.name === 'network-isolation')!;
  // kwok pods: the enforcement test cannot be made (one probe sandbox, loopback pod IPs), so it stays unknown.
  expect(net.nextReason).toBe('EnforcementNotTestable');
  expect(net.evidence.find((e) => e.reason === 'EnforcementNotTestable')!.missingTest).toMatch(
    /^netpol-enforcement-probe: /,
  );
  expect(r.stderr).toMatch(/\[\d+\/\d+\] workload\/vfycli-\w+\/ok: running/);
  expect(r.stderr).toMatch(/cleanup: deleting objects labelled agentplane\.dev\/verify-run=/);
  // the images probe runs before any probe pod exists: by the lines' structure, idle owners (subjects `pods of
  // template <ns>/<name>`) share at most one note, never a line each, and get no unproven evidence
  const imageNotes = r.stderr.split('\n').filter((l) => /\] images: /.test(l) && !/\] images: (running|done) /.test(l));
  expect(imageNotes.filter((l) => l.includes('pods of template ')).length).toBeLessThanOrEqual(1);
  expect(
    report.capabilities
      .flatMap((x) => x.evidence)
      .filter((e) => e.subject.startsWith('pods of template ') && e.verdict !== 'proven')
      .map((e) => e.reason),
  ).toEqual([]);
  const xml = readFileSync(junit, 'utf8');
  expect((xml.match(/<testcase /g) ?? []).length).toBe(9);
  expect(xml).toContain('failures="0"');
}, 180_000);

test('Ready sandbox, silent runtime: exit 6 and the table names the missing evidence', () => {
  const r = verify(descriptor('mute'));
  expect(r.status).toBe(6);
  // The runtime-exec row: its state, and the next cell led by the reason code of the missing evidence.
  expect(r.stdout).toMatch(/│ runtime-exec +│ configured +│ verified +│ [^│]*│ \[RuntimeSilent\] /);
}, 180_000);

/** A kubeconfig for the test cluster's API server with `token` as the user's bearer token. */
function tokenKubeconfig(token: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'agentplane-kc-')), 'kubeconfig');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: t',
      'clusters:',
      '- name: harness',
      `  cluster: {server: "${c.info.apiServer}", certificate-authority: "${c.info.caFile}"}`,
      'users:',
      '- name: t',
      `  user: {token: "${token}"}`,
      'contexts:',
      '- name: t',
      '  context: {cluster: harness, user: t}',
      '',
    ].join('\n'),
  );
  return file;
}

test('case client-node-1x-errors: credentials the API server refuses (401) exit 8; an identity without rights (403 on the probes) exits 9 with the cause in the report', async () => {
  const bogus = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'verify',
      '--env',
      descriptor('ok'),
      '--kubeconfig',
      tokenKubeconfig('not-a-valid-token'),
      '--controller',
      'external',
      '--transport',
      'direct',
      '--router-url',
      `http://127.0.0.1:${c.info.ports.routerHttp}`,
      '--mirror',
      process.env.AGENTPLANE_MIRROR!,
    ],
    { encoding: 'utf8', cwd: ROOT, timeout: 120_000 },
  );
  expect(bogus.status).toBe(8);
  expect(bogus.stderr).toMatch(
    /^error \[CredentialsRejected\]: could not run: cannot use the cluster: the API server rejected the credentials of user "t" \(context "t"\)/m,
  );
  expect(bogus.stdout).toBe('');

  // a ServiceAccount with no Role at all: /version is public, every probe read is refused
  await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'no-rights' } } });
  const token = await c.core.createNamespacedServiceAccountToken({
    namespace: ns,
    name: 'no-rights',
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const refused = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'verify',
      '--env',
      descriptor('ok'),
      '--kubeconfig',
      tokenKubeconfig(token.status!.token!),
      '--controller',
      'external',
      '--transport',
      'direct',
      '--router-url',
      `http://127.0.0.1:${c.info.ports.routerHttp}`,
      '--ready-timeout',
      '10s',
      '--mirror',
      process.env.AGENTPLANE_MIRROR!,
      '-o',
      'json',
    ],
    { encoding: 'utf8', cwd: ROOT, timeout: 170_000 },
  );
  expect(refused.status).toBe(9);
  const report = VerifyReportSchema.parse(JSON.parse(refused.stdout));
  const forbidden = report.capabilities
    .filter((x) => !x.met)
    .flatMap((x) => x.evidence.filter((e) => e.cause === 'forbidden'));
  expect(forbidden.length).toBeGreaterThan(0);
  expect(forbidden.every((e) => e.reason === 'Forbidden' && e.verdict === 'unknown')).toBe(true);
  expect(
    report.capabilities.every((x) => x.state !== 'verified' || x.evidence.every((e) => e.cause !== 'forbidden')),
  ).toBe(true);
  // every create was refused, so nothing exists: nothing may be reported as left behind
  expect(refused.stderr).toMatch(/creating probe SandboxWarmPool [\w-]+\/verify-\w{6}-p-ok/);
  expect(
    report.capabilities.flatMap((x) => x.evidence).filter((e) => e.reason === 'ProbeCreateRefused').length,
  ).toBeGreaterThan(0);
  expect(report.leftovers).toEqual([]);
  expect(refused.stderr).not.toMatch(/left behind/);
}, 300_000);

test('SIGINT while the probe claim is waiting: probes stop, the claim and pool are deleted, exit 6', async () => {
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'verify',
      '--env',
      descriptor('ok'),
      '--kubeconfig',
      kubeconfig,
      '--controller',
      'external',
      '--transport',
      'direct',
      '--router-url',
      `http://127.0.0.1:${c.info.ports.routerHttp}`,
      '--mirror',
      process.env.AGENTPLANE_MIRROR!,
      '-o',
      'json',
    ],
    { cwd: ROOT },
  );
  let stderr = '';
  let stdout = '';
  let runId = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    const m = /creating probe SandboxWarmPool [\w-]+\/verify-(\w{6})-/.exec(stderr);
    if (m && !runId) {
      runId = m[1]!;
      child.kill('SIGINT');
    }
  });
  const code = await exit;
  expect(runId).not.toBe('');
  expect(code).toBe(6);
  expect(stderr).toContain('interrupted: stopping probes, then deleting workload objects');
  expect(stderr).toContain(`cleanup: deleting objects labelled agentplane.dev/verify-run=${runId}`);
  const report = VerifyReportSchema.parse(JSON.parse(stdout));
  expect(report.leftovers).toEqual([]);
  for (const plural of ['sandboxwarmpools', 'sandboxclaims']) {
    const list = (await c.custom.listNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural,
      labelSelector: `${RUN_LABEL}=${runId}`,
    })) as { items: unknown[] };
    expect({ plural, left: list.items.length }).toEqual({ plural, left: 0 });
  }
}, 180_000);

test("--sandbox checks one existing Sandbox's runtime and creates nothing: healthy exit 0, hanging exit 6 naming the deadline", async () => {
  const core = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes', namespace: ns };
  const bare = (name: string, mode: string) => ({
    apiVersion: 'agents.x-k8s.io/v1beta1',
    kind: 'Sandbox',
    metadata: { name, namespace: ns },
    spec: {
      podTemplate: (sandboxdTemplate(ns, 'x', mode as 'sandboxd') as { spec: { podTemplate: unknown } }).spec
        .podTemplate,
    },
  });
  await c.custom.createNamespacedCustomObject({ ...core, body: bare('s-ok', 'sandboxd') });
  await c.custom.createNamespacedCustomObject({ ...core, body: bare('s1', 'hang') });
  const envDir = descriptor('ok');
  const before = ((await c.custom.listNamespacedCustomObject(core)) as { items: unknown[] }).items.length;
  const ok = verify(envDir, ['--sandbox', `${ns}/s-ok`, '-o', 'json']);
  expect({ status: ok.status, stderr: ok.status === 0 ? '' : ok.stderr }).toEqual({ status: 0, stderr: '' });
  expect(VerifyReportSchema.parse(JSON.parse(ok.stdout)).capabilities.map((x) => [x.name, x.state])).toEqual([
    ['runtime-exec', 'verified'],
  ]);
  const hang = verify(envDir, ['--sandbox', `${ns}/s1`, '-o', 'json']);
  expect(hang.status).toBe(6);
  const row = VerifyReportSchema.parse(JSON.parse(hang.stdout)).capabilities[0]!;
  expect(row.state).toBe('configured');
  expect(row.nextReason).toBe('RuntimeTimeout');
  // The health call waited out the 2 s probe deadline before giving up.
  const hung = row.evidence.find((e) => e.reason === 'RuntimeTimeout')!;
  expect([hung.step, hung.verdict, hung.field]).toEqual(['verified', 'unknown', 'health']);
  expect(hung.durationMs).toBeGreaterThanOrEqual(2_000);
  expect(((await c.custom.listNamespacedCustomObject(core)) as { items: unknown[] }).items.length).toBe(before);
}, 180_000);
