/**
 * Case conversion-cabundle-drift on the real API server: what kube-apiserver answers when the conversion webhook it
 * calls presents a certificate its caBundle does not sign, and how the adapter classifies that answer. The server gives
 * no structured signal (a bare 500 Status: no `reason`, no `details`), the same shape as a webhook that refuses the
 * connection; only the message differs. That is why `isWebhookTlsFailure` reads the message, and this test fails the day
 * the server starts naming the cause. The webhook is a loopback TLS listener of the test's own with a fresh self-signed
 * certificate; the CRD (`widgets.<ns>.agentplane.test`) is the test's own too, so no other test sees the broken webhook.
 */
import * as k8s from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { parseStatus } from '../../../src/adapter/kubernetes/errors.js';
import { Facts } from '../../../src/verify/probes/common.js';
import { conversionReadEvidence } from '../../../src/verify/probes/workload/conversion.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';

let c: Cluster;
let ns: string;
let dir: string;
let server: https.Server;
let admin: KubeClient;
let group: string;

/** A self-signed EC certificate for `subject` (openssl, as the test cluster's own PKI is made). */
function selfSigned(name: string, subject: string, san?: string): { key: string; cert: string } {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.crt`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-keyout', key, '-out', cert, '-subj', `/CN=${subject}`, ...(san ? ['-addext', `subjectAltName=${san}`] : []),
  ], { stdio: 'ignore' }); // prettier-ignore
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

const crdName = (): string => `widgets.${group}`;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'cabundle');
  group = `${ns}.agentplane.test`;
  admin = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  dir = mkdtempSync(path.join(tmpdir(), 'agentplane-webhook-tls-'));
  const serving = selfSigned('serving', '127.0.0.1', 'IP:127.0.0.1');
  const otherCa = selfSigned('other-ca', 'not-the-serving-ca');
  server = https.createServer(serving, (_req, res) => res.writeHead(500).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  const ext = kubeApi(c);
  await ext.createCustomResourceDefinition({
    body: {
      metadata: { name: crdName() },
      spec: {
        group,
        names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
        scope: 'Namespaced',
        versions: [
          { name: 'v1', served: true, storage: true, schema },
          { name: 'v2', served: true, storage: false, schema },
        ],
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: ['v1'],
            clientConfig: {
              url: `https://127.0.0.1:${port}/convert`,
              caBundle: Buffer.from(otherCa.cert).toString('base64'),
            },
          },
        },
      },
    },
  });
  for (let i = 0; i < 100; i += 1) {
    const crd = await ext.readCustomResourceDefinition({ name: crdName() });
    if (crd.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // A v1 object is stored as is; reading it at v2 makes the server call the webhook.
  await c.custom.createNamespacedCustomObject({
    group,
    version: 'v1',
    namespace: ns,
    plural: 'widgets',
    body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' } },
  });
}, 60_000);

afterAll(async () => {
  server?.close();
  if (group)
    await kubeApi(c)
      .deleteCustomResourceDefinition({ name: crdName() })
      .catch(() => undefined);
  if (ns) await c.core.deleteNamespace({ name: ns });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function kubeApi(cluster: Cluster): k8s.ApiextensionsV1Api {
  return cluster.kc.makeApiClient(k8s.ApiextensionsV1Api);
}

const getAtV2 = () =>
  c.custom.getNamespacedCustomObject({ group, version: 'v2', namespace: ns, plural: 'widgets', name: 'w' });

/** The raw Status the server answers a v2 GET with. */
async function rawStatus(): Promise<{ code: number; status: ReturnType<typeof parseStatus> }> {
  try {
    await getAtV2();
  } catch (err) {
    if (err instanceof k8s.ApiException) return { code: err.code, status: parseStatus(err.body) };
    throw err;
  }
  throw new Error('the v2 GET succeeded through a webhook whose certificate the caBundle does not sign');
}

test('webhook certificate not signed by the caBundle: a bare 500 Status, classified tls by its message alone', async () => {
  const raw = await rawStatus();
  expect(raw.code).toBe(500);
  // No structured signal: the only thing telling TLS from any other webhook failure is the relayed Go error text.
  expect(raw.status).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
  expect(raw.status?.reason).toBeUndefined();
  expect(raw.status?.details).toBeUndefined();

  const r = await admin.call(`get widgets.${group}`, getAtV2);
  expect(r.kind).toBe('failed');
  if (r.kind !== 'failed') return;
  expect(r.error).toMatchObject({ category: 'internal', code: 500, tls: true });
  expect(r.error.reason).toBeUndefined();
  const f = new Facts('conversion');
  conversionReadEvidence(f, `Widget ${ns}/w`, r);
  expect(f.list.map((e) => [e.verdict, e.reason])).toEqual([['contradicted', 'ConversionTlsFailure']]);
});

test('a webhook that refuses the connection: the same bare 500 Status, not classified tls', async () => {
  await new Promise((resolve) => server.close(resolve));
  const raw = await rawStatus();
  expect(raw.code).toBe(500);
  expect(raw.status?.reason).toBeUndefined();
  expect(raw.status?.details).toBeUndefined();

  const r = await admin.call(`get widgets.${group}`, getAtV2);
  expect(r.kind === 'failed' && r.error).toMatchObject({ category: 'internal', code: 500 });
  expect(r.kind === 'failed' && r.error.tls).toBeUndefined();
  const f = new Facts('conversion');
  conversionReadEvidence(f, `Widget ${ns}/w`, r);
  expect(f.list.map((e) => [e.verdict, e.reason])).toEqual([['unknown', 'ConversionReadFailed']]);
});
