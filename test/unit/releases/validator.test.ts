import {
  CustomObjectValidator,
  VersionNotServedError,
  crdObject,
  crdSizeBytes,
  lastAppliedSizeBytes,
  loadRelease,
  openApiSchema,
  schemaFingerprint,
  servedVersions,
  type KubeObject,
  type LoadedRelease,
} from '../../../src/releases/index.js';
import { SHARED_MIRROR, tempDir } from './helpers.js';
import { thrownBy } from '../thrown.js';

let v046: LoadedRelease;
let v056: LoadedRelease;
const cache = tempDir('cache');
beforeAll(async () => {
  v046 = await loadRelease('v0.4.6', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
  v056 = await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
});
afterAll(() => cache.cleanup());

function template(): KubeObject {
  return {
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxTemplate',
    metadata: { name: 'python', namespace: 'agents', labels: { team: 'a' } },
    spec: {
      networkPolicyManagement: 'Unmanaged',
      podTemplate: {
        spec: {
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'runtime',
              image: 'registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.5.6',
              ports: [{ containerPort: 8888, name: 'http' }],
              readinessProbe: { httpGet: { path: '/', port: 'http' } },
              resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: 512 } },
            },
          ],
        },
      },
    },
  };
}

describe('CRD schema model', () => {
  test('crdObject and servedVersions follow the pinned CRDs', () => {
    expect(crdObject(v056, 'SandboxTemplate').metadata?.name).toBe('sandboxtemplates.extensions.agents.x-k8s.io');
    expect(servedVersions(v056, 'Sandbox')).toEqual(['v1beta1', 'v1alpha1']);
    expect(servedVersions(v046, 'Sandbox')).toEqual(['v1alpha1']);
  });

  test('openApiSchema returns the version schema and throws VersionNotServedError for v1beta1 on v0.4.6', () => {
    const schema = openApiSchema(v056, 'Sandbox', 'v1beta1');
    expect(Object.keys(schema.properties as Record<string, unknown>)).toEqual([
      'apiVersion',
      'kind',
      'metadata',
      'spec',
      'status',
    ]);
    const err = thrownBy(() => openApiSchema(v046, 'Sandbox', 'v1beta1'), VersionNotServedError, 'VersionNotServed');
    expect([err.tag, err.kind, err.version, err.served]).toEqual(['v0.4.6', 'Sandbox', 'v1beta1', ['v1alpha1']]);
  });

  test('schemaFingerprint ignores key order, sees every change, and tells releases apart', () => {
    expect(schemaFingerprint({ a: 1, b: { c: [1, 2] } })).toBe(schemaFingerprint({ b: { c: [1, 2] }, a: 1 }));
    expect(schemaFingerprint({ a: 1, b: { c: [1, 2] } })).not.toBe(schemaFingerprint({ a: 1, b: { c: [2, 1] } }));
    expect(schemaFingerprint(openApiSchema(v056, 'Sandbox', 'v1alpha1'))).not.toBe(
      schemaFingerprint(openApiSchema(v046, 'Sandbox', 'v1alpha1')),
    );
    expect(schemaFingerprint(openApiSchema(v056, 'Sandbox', 'v1beta1'))).toMatch(/^[0-9a-f]{64}$/);
  });

  test('crdSizeBytes is the pinned CRD file size; lastAppliedSizeBytes the compact JSON size', () => {
    expect(crdSizeBytes(v056, 'Sandbox')).toBe(393338);
    expect(crdSizeBytes(v056, 'SandboxTemplate')).toBe(406728);
    expect(crdSizeBytes(v056, 'SandboxWarmPool')).toBe(4483);
    const json = lastAppliedSizeBytes(crdObject(v056, 'Sandbox'));
    expect(json).toBe(JSON.stringify(crdObject(v056, 'Sandbox')).length);
    expect(json).toBeLessThan(crdSizeBytes(v056, 'Sandbox'));
  });
});

describe('CustomObjectValidator', () => {
  test('a valid v1beta1 SandboxTemplate passes (int-or-string port by name, quantities as string and integer)', () => {
    expect(CustomObjectValidator.forRelease(v056).validate(template())).toEqual([]);
  });

  test('forRelease caches one validator per loaded release', () => {
    expect(CustomObjectValidator.forRelease(v056)).toBe(CustomObjectValidator.forRelease(v056));
    expect(CustomObjectValidator.forRelease(v046)).not.toBe(CustomObjectValidator.forRelease(v056));
  });

  test('a typo field fails with its path', () => {
    const obj = template() as any;
    obj.spec.podTemplate.spec.containers[0].imagee = 'x';
    expect(CustomObjectValidator.forRelease(v056).validate(obj)).toEqual([
      expect.objectContaining({ path: 'spec.podTemplate.spec.containers[0].imagee', reason: 'UnknownField' }),
    ]);
  });

  test('wrong types, bad enums, int32 overflow, missing required fields and bad metadata fail with paths', () => {
    const obj = template() as any;
    obj.spec.podTemplate.spec.containers[0].ports[0].containerPort = '8888';
    obj.spec.podTemplate.spec.containers[0].readinessProbe.httpGet.port = true;
    obj.spec.podTemplate.spec.containers[0].readinessProbe.periodSeconds = 2 ** 31;
    obj.spec.networkPolicyManagement = 'Sometimes';
    obj.metadata = { namespace: 'agents', labels: { team: 7 } };
    delete obj.spec.podTemplate.spec.containers[0].name;
    obj.spec.podTemplate.spec.containers[0].resources.requests.cpu = 0.5; // the API server's int-or-string takes no fractions
    const got = CustomObjectValidator.forRelease(v056).validate(obj);
    const byPath = Object.fromEntries(got.map((v) => [v.path, v.reason]));
    expect(byPath['spec.podTemplate.spec.containers[0].ports[0].containerPort']).toBe('InvalidType');
    expect(byPath['spec.podTemplate.spec.containers[0].readinessProbe.httpGet.port']).toBe('NotIntOrString');
    expect(byPath['spec.podTemplate.spec.containers[0].readinessProbe.periodSeconds']).toBe('InvalidFormat');
    expect(byPath['spec.networkPolicyManagement']).toBe('InvalidEnum');
    expect(byPath['spec.podTemplate.spec.containers[0].name']).toBe('RequiredFieldMissing');
    expect(byPath['metadata']).toBe('NameMissing');
    expect(byPath['metadata.labels.team']).toBe('InvalidType');
    expect(byPath['spec.podTemplate.spec.containers[0].resources.requests.cpu']).toBe('NotIntOrString');
    expect(got).toHaveLength(8);
  });

  test('errors inside repeated sub-schemas (compiled once, shared) keep their own paths', () => {
    const obj = template() as any;
    const spec = obj.spec.podTemplate.spec;
    spec.initContainers = [{ name: 'init', image: 'i:1', readinessProbe: { httpGet: { port: false } } }];
    spec.containers.push({ name: 'second', image: 'i:1', readinessProbe: { httpGet: { port: [] } }, bogus: 1 });
    expect(
      CustomObjectValidator.forRelease(v056)
        .validate(obj)
        .map((v) => [v.path, v.reason]),
    ).toEqual([
      ['spec.podTemplate.spec.containers[1].bogus', 'UnknownField'],
      ['spec.podTemplate.spec.containers[1].readinessProbe.httpGet.port', 'NotIntOrString'],
      ['spec.podTemplate.spec.initContainers[0].readinessProbe.httpGet.port', 'NotIntOrString'],
    ]);
  });

  test('a v1beta1 object against v0.4.6 fails clearly: version not served', () => {
    expect(CustomObjectValidator.forRelease(v046).validate(template())).toEqual([
      expect.objectContaining({ path: 'apiVersion', reason: 'VersionNotServed' }),
    ]);
  });

  test('fields that exist in one release only: operatingMode (v1beta1) and replicas (v1alpha1)', () => {
    const sandbox = (apiVersion: string, spec: Record<string, unknown>): KubeObject => ({
      apiVersion,
      kind: 'Sandbox',
      metadata: { name: 's' },
      spec: { podTemplate: { spec: { containers: [{ name: 'c', image: 'i:1' }] } }, ...spec },
    });
    const v = CustomObjectValidator.forRelease(v056);
    expect(v.validate(sandbox('agents.x-k8s.io/v1beta1', { operatingMode: 'Suspended' }))).toEqual([]);
    expect(v.validate(sandbox('agents.x-k8s.io/v1beta1', { replicas: 0 }))).toEqual([
      expect.objectContaining({ path: 'spec.replicas', reason: 'UnknownField' }),
    ]);
    expect(
      CustomObjectValidator.forRelease(v046).validate(sandbox('agents.x-k8s.io/v1alpha1', { replicas: 2 })),
    ).toEqual([expect.objectContaining({ path: 'spec.replicas', reason: 'InvalidMaximum' })]);
  });

  test('wrong group and foreign kinds are violations, not exceptions', () => {
    const v = CustomObjectValidator.forRelease(v056);
    expect(v.validate({ ...template(), apiVersion: 'agents.x-k8s.io/v1beta1' })).toEqual([
      expect.objectContaining({ path: 'apiVersion', reason: 'WrongApiGroup' }),
    ]);
    expect(v.validate({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })).toEqual([
      expect.objectContaining({ path: 'kind', reason: 'UnknownKind' }),
    ]);
  });
});
