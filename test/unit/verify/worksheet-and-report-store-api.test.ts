/**
 * The compatibility worksheet and the report store used as a library user uses them: everything imported from the
 * `/verify` entry point (src/verify/index.ts), no CLI. The cluster is a closed port on 127.0.0.1 (a real refused
 * connection), so the failures are the ones a user with a stopped cluster gets; the pure parts run on real inputs (the
 * shipped matrix, a report the verifier's own builder makes).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  buildReport,
  ClusterUnusableError,
  compatWorksheet,
  connect,
  fact,
  MatrixSchema,
  planFromDescriptor,
  readEnvironment,
  readReport,
  reportConfigMap,
  requirementsFor,
  StoredReportError,
  TUPLE_KEYS,
  VerifyReportSchema,
  worksheetRows,
  writeReport,
  type CompatibilityTuple,
  type KubeClient,
  type Matrix,
  type VerifyPlan,
} from '../../../src/verify/index.js';
import { REPORT_KEY } from '../../../src/model/verifier-job.js';
import { DESCRIPTOR } from './fixtures.js';

const REF = { namespace: 'dev-sandboxes', name: 'agentplane-verify-report' };

/** A tuple with every part set to `value` but the ones given. */
function tupleOf(parts: Partial<Record<keyof CompatibilityTuple, string>>): CompatibilityTuple {
  return Object.fromEntries(
    TUPLE_KEYS.map((k) => [k, { value: parts[k] ?? 'unknown', source: 'this test' }]),
  ) as unknown as CompatibilityTuple;
}

let client: KubeClient;
let plan: VerifyPlan;
beforeAll(async () => {
  // A port that was free a moment ago: nothing listens, so every call is refused.
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-lib-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\n`,
  );
  client = connect({ kubeconfig: [kubeconfig] });
  writeFileSync(path.join(dir, 'environment.json'), JSON.stringify(DESCRIPTOR));
  const { descriptor, file } = readEnvironment(dir);
  plan = planFromDescriptor(descriptor, path.dirname(file), { transport: 'port-forward' });
});

describe('compatibility worksheet from /verify', () => {
  const shipped: Matrix = MatrixSchema.parse(
    JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../compat/matrix.json'), 'utf8')),
  );

  test('worksheetRows: a tuple a passing run of the shipped matrix saw is covered part by part; another Kubernetes minor is not', () => {
    const run = shipped.rows.find((r) => r.release === 'v0.5.6' && r.failed === 0);
    if (run === undefined) throw new Error('the shipped matrix has no passing v0.5.6 run');
    const seen = tupleOf({
      kubernetes: run.tuple['kubernetes']!,
      controller: run.tuple['controller']!,
      containerRuntime: run.tuple['containerRuntime']!,
    });
    const rows = worksheetRows(seen, 'v0.5.6', shipped);
    expect(rows.map((r) => r.part)).toEqual([...TUPLE_KEYS]);
    const byPart = Object.fromEntries(rows.map((r) => [r.part, r]));
    expect(byPart['kubernetes']).toMatchObject({ live: run.tuple['kubernetes'], tested: 'yes' });
    expect(byPart['controller']).toMatchObject({
      builtFor: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
      tested: 'yes',
    });
    expect(byPart['containerRuntime']?.tested).toBe('yes');
    expect(byPart['crdRelease']).toMatchObject({ builtFor: 'v0.5.6', tested: 'n/a' });
    const other = worksheetRows({ ...seen, kubernetes: { value: 'v1.20.0', source: 'this test' } }, 'v0.5.6', shipped);
    expect(other.find((r) => r.part === 'kubernetes')?.tested).toBe('no');
  });

  test('compatWorksheet: a cluster refusing the connection is ClusterUnusable (exit category cluster), no worksheet', async () => {
    const err: unknown = await compatWorksheet(client, plan, { matrix: shipped }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ClusterUnusableError);
    expect(err).toMatchObject({ reason: 'ClusterUnusable', category: 'unreachable', exitCategory: 'cluster' });
  });
});

describe('report store from /verify', () => {
  const report = buildReport({
    environment: { name: 'dev-gvisor', release: 'v0.5.6', source: 'configmap:/etc/agentplane' },
    tuple: tupleOf({ kubernetes: 'v1.36.3' }),
    requirements: requirementsFor(['sandbox-api']),
    evidence: (['discovered', 'compatible', 'configured', 'verified'] as const).map((step) =>
      fact({
        capability: 'sandbox-api',
        step,
        verdict: 'proven',
        reason: 'CrdFound',
        subject: 'sandboxes.agents.x-k8s.io',
        message: 'm',
        at: '2026-12-05T10:00:00.000Z',
      }),
    ),
    leftovers: [],
    startedAt: '2026-12-05T10:00:00.000Z',
    durationMs: 1200,
  });

  test('reportConfigMap: the report under REPORT_KEY round-trips through the schema; run, job, release and exit code are annotations', () => {
    const cm = reportConfigMap(REF, report, { run: 'verify-abc12', exitCode: 0, job: 'agentplane-verify' });
    expect(cm.metadata).toEqual({
      name: 'agentplane-verify-report',
      namespace: 'dev-sandboxes',
      labels: {
        'app.kubernetes.io/managed-by': 'agentplane',
        'agentplane.dev/environment': 'dev-gvisor',
        'agentplane.dev/outcome': report.outcome,
      },
      annotations: {
        'agentplane.dev/run': 'verify-abc12',
        'agentplane.dev/job': 'agentplane-verify',
        'agentplane.dev/release': 'v0.5.6',
        'agentplane.dev/started-at': '2026-12-05T10:00:00.000Z',
        'agentplane.dev/exit-code': '0',
      },
    });
    expect(report.outcome).toBe('verified');
    expect(VerifyReportSchema.parse(JSON.parse(cm.data![REPORT_KEY]!))).toEqual(JSON.parse(JSON.stringify(report)));
    const noJob = reportConfigMap(REF, report, { run: 'host-1', exitCode: 6 });
    expect(noJob.metadata?.annotations).not.toHaveProperty('agentplane.dev/job');
    expect(noJob.metadata?.annotations?.['agentplane.dev/exit-code']).toBe('6');
  });

  test('readReport: an unreachable cluster is a returned StoredReportError (category unreachable, exit category cluster)', async () => {
    const got = await readReport(client, REF);
    expect(got).toBeInstanceOf(StoredReportError);
    expect(got).toMatchObject({
      reason: 'StoredReportUnusable',
      configMap: 'dev-sandboxes/agentplane-verify-report',
      category: 'unreachable',
      exitCategory: 'cluster',
    });
  });

  test('writeReport: an unreachable cluster is a returned adapter error, never a throw', async () => {
    const failed = await writeReport(client, REF, reportConfigMap(REF, report, { run: 'host-1', exitCode: 0 }));
    expect(failed?.category).toBe('unreachable');
  });
});
