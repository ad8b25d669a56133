/**
 * Shape-preserving apply and read on the real API server. client-node 1.4's typed serializer drops JSON keys whose model
 * attribute is renamed (`default` -> `_default`, `enum` -> `_enum`, `x-kubernetes-*`, NetworkPolicy `from` -> `_from`), so
 * a CRD applied through `KubernetesObjectApi.patch` lost its schema defaults. `KubeObjects` must keep every key.
 */
import * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { KubeObjects } from '../../../src/adapter/kubernetes/objects.js';
import type { KubeObject } from '../../../src/releases/index.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';

const CRD_NAME = 'widgets.shape.agentplane.test';
const CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: 'shape.agentplane.test',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer', format: 'int32', default: 1 },
                  strategy: { type: 'string', enum: ['Recreate', 'OnReplenish'], default: 'OnReplenish' },
                  port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                },
              },
            },
          },
        },
      },
    ],
  },
};

let c: Cluster;
let ns: string;
let objects: KubeObjects;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'shape');
  objects = new KubeObjects(KubeClient.connect({ kubeconfig: c.info.kubeconfig }));
}, 30_000);
afterAll(async () => {
  await c.kc
    .makeApiClient(k8s.ApiextensionsV1Api)
    .deleteCustomResourceDefinition({ name: CRD_NAME })
    .catch(() => undefined);
  if (ns) await c.core.deleteNamespace({ name: ns });
});

test('a CRD keeps default, enum and x-kubernetes-int-or-string through apply and get', async () => {
  const applied = await objects.apply(CRD, { fieldManager: 'agentplane-test' });
  expect(applied.kind).toBe('ok');
  const read = await objects.get({ apiVersion: CRD.apiVersion, kind: CRD.kind, name: CRD_NAME });
  if (read.kind !== 'ok') throw new Error(JSON.stringify(read));
  const props = (read.value as any).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
  expect(props.replicas.default).toBe(1);
  expect(props.strategy).toEqual({ type: 'string', enum: ['Recreate', 'OnReplenish'], default: 'OnReplenish' });
  expect(props.port['x-kubernetes-int-or-string']).toBe(true);
});

test('a NetworkPolicy keeps its ingress `from` peers', async () => {
  const policy: KubeObject = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'router-only', namespace: ns },
    spec: {
      podSelector: { matchLabels: { app: 'sandbox' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { app: 'sandbox-router' } } }],
          ports: [{ port: 8080, protocol: 'TCP' }],
        },
      ],
    },
  };
  expect((await objects.apply(policy)).kind).toBe('ok');
  const read = await objects.get({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    name: 'router-only',
    namespace: ns,
  });
  if (read.kind !== 'ok') throw new Error(JSON.stringify(read));
  expect((read.value as any).spec.ingress[0].from).toEqual([
    { podSelector: { matchLabels: { app: 'sandbox-router' } } },
  ]);
});

test('a dry run persists nothing; an unknown kind is a not-found of the API, not a throw', async () => {
  const cm: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'dry', namespace: ns },
    data: { a: '1' },
  };
  const dry = await objects.apply(cm, { dryRun: true });
  if (dry.kind !== 'ok') throw new Error(JSON.stringify(dry));
  expect((dry.value as any).data).toEqual({ a: '1' });
  const after = await objects.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'dry', namespace: ns });
  expect(after.kind === 'failed' && after.error.category).toBe('not-found');
  const unknown = await objects.apply({
    apiVersion: 'nope.agentplane.test/v1',
    kind: 'Nope',
    metadata: { name: 'x', namespace: ns },
  });
  expect(unknown.kind === 'failed' && unknown.error.missing).toBe('api');
});
