/**
 * Case conversion-cabundle-drift, diff side: the conversion caBundle the controller writes
 * into the CRDs is not drift while the controller manages certificates; service name, namespace, path and strategy
 * still are. Uses the pinned v0.5.6 Sandbox CRD (mirror, sha256-verified).
 */
import { diffManifests, type ManifestSet } from '../../src/diff/index.js';
import { crdObject, loadRelease, type KubeObject } from '../../src/releases/index.js';

type Crd = KubeObject & {
  spec: {
    conversion: {
      strategy: string;
      webhook: { clientConfig: { caBundle?: string; service: Record<string, unknown> } };
    };
  };
};

const CA = Buffer.from(
  '-----BEGIN CERTIFICATE-----\nMIIB...agent-sandbox-conversion-webhook-ca\n-----END CERTIFICATE-----\n',
).toString('base64');

function controller(args: string[]): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'agent-sandbox-controller', namespace: 'agent-sandbox-system' },
    spec: {
      template: {
        spec: {
          containers: [
            { name: 'manager', image: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6', args },
          ],
        },
      },
    },
  };
}

describe('case conversion-cabundle-drift (diff)', () => {
  let desired: Crd;
  beforeAll(async () => {
    desired = crdObject(await loadRelease('v0.5.6'), 'Sandbox') as Crd;
  });

  const liveWith = (edit: (crd: Crd) => void): Crd => {
    const live = structuredClone(desired);
    live.spec.conversion.webhook.clientConfig.caBundle = CA;
    live.status = { storedVersions: ['v1beta1'], acceptedNames: { kind: 'Sandbox' } };
    edit(live);
    return live;
  };

  it('reports no drift for the controller-written caBundle (default flags)', () => {
    const head: ManifestSet = { label: 'dist', objects: [desired, controller(['--leader-elect=true'])] };
    const report = diffManifests(
      { label: 'live', objects: [liveWith(() => undefined), controller(['--leader-elect=true'])] },
      head,
    );
    expect(report.objects).toEqual([]);
    expect(report.counts.unchanged).toBe(2);
  });

  it.each([
    [
      'service name',
      (c: Crd) => {
        c.spec.conversion.webhook.clientConfig.service.name = 'other-webhook';
      },
      'spec.conversion.webhook.clientConfig.service.name',
    ],
    [
      'service namespace',
      (c: Crd) => {
        c.spec.conversion.webhook.clientConfig.service.namespace = 'elsewhere';
      },
      'spec.conversion.webhook.clientConfig.service.namespace',
    ],
    [
      'path',
      (c: Crd) => {
        c.spec.conversion.webhook.clientConfig.service.path = '/old-convert';
      },
      'spec.conversion.webhook.clientConfig.service.path',
    ],
    [
      'strategy',
      (c: Crd) => {
        c.spec.conversion.strategy = 'None';
      },
      'spec.conversion.strategy',
    ],
  ])('still reports a changed %s', (_what, edit, path) => {
    const report = diffManifests({ label: 'live', objects: [liveWith(edit)] }, { label: 'dist', objects: [desired] });
    expect(report.objects).toHaveLength(1);
    expect(report.objects[0]?.fields.map((f) => f.path)).toEqual([path]);
    expect(report.risks.map((r) => r.rule)).toEqual(path === 'spec.conversion.strategy' ? ['crd-schema-change'] : []);
  });

  it('compares the caBundle when certificates are external (--manage-webhook-certs=false, no injector annotation)', () => {
    const head: ManifestSet = { label: 'dist', objects: [desired, controller(['--manage-webhook-certs=false'])] };
    const report = diffManifests(
      { label: 'live', objects: [liveWith(() => undefined), controller(['--manage-webhook-certs=false'])] },
      head,
    );
    expect(report.objects.map((o) => o.fields.map((f) => f.path))).toEqual([
      ['spec.conversion.webhook.clientConfig.caBundle'],
    ]);
  });

  it('ignores the caBundle again when a CA injector owns it (cert-manager.io/inject-ca-from)', () => {
    const injected = structuredClone(desired);
    injected.metadata = {
      ...injected.metadata,
      annotations: { 'cert-manager.io/inject-ca-from': 'agent-sandbox-system/webhook-cert' },
    };
    const live = liveWith((c) => {
      c.metadata = {
        ...c.metadata,
        annotations: { 'cert-manager.io/inject-ca-from': 'agent-sandbox-system/webhook-cert' },
      };
    });
    const report = diffManifests(
      { label: 'live', objects: [live] },
      { label: 'dist', objects: [injected, controller(['--manage-webhook-certs=false'])] },
    );
    expect(report.counts.changed).toBe(0);
  });
});
