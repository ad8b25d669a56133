/**
 * Live policy admission of the router (case netpol-router-peer-mismatch), the pure part: NetworkPolicy ingress semantics over the live
 * router pods' namespace and labels. The case's shapes: the controller's default peer (agent-sandbox-system +
 * app=sandbox-router) against the shipped router (default + app.kubernetes.io/name=sandbox-router).
 */
import type { Obj } from '../../../src/adapter/kubernetes/cluster.js';
import { networkPolicyView } from '../../../src/adapter/kubernetes/views.js';
import {
  inCidr,
  judgeAdmission as judgeViews,
  portAdmits,
  selectsTri,
} from '../../../src/verify/probes/router-admission.js';

const sandboxLabels = { 'agents.x-k8s.io/sandbox-template-ref-hash': 'abcd1234', app: 'sandbox' };
const controllerDefault = {
  metadata: { namespace: 'sbx', name: 'py-network-policy' },
  spec: {
    podSelector: { matchLabels: { 'agents.x-k8s.io/sandbox-template-ref-hash': 'abcd1234' } },
    policyTypes: ['Ingress', 'Egress'],
    ingress: [
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agent-sandbox-system' } },
            podSelector: { matchLabels: { app: 'sandbox-router' } },
          },
        ],
      },
    ],
  },
};
/** Judges policies given as the API's JSON, read through the adapter's NetworkPolicy view as the probe reads them. */
const judgeAdmission = (
  ns: string,
  labels: Record<string, string>,
  policies: object[],
  routers: Parameters<typeof judgeViews>[3],
  port: number,
): ReturnType<typeof judgeViews> => judgeViews(ns, labels, (policies as Obj[]).map(networkPolicyView), routers, port);
const shipped = { name: 'r-1', namespace: 'default', labels: { 'app.kubernetes.io/name': 'sandbox-router' } };
const managed = { name: 'r-2', namespace: 'agent-sandbox-system', labels: { app: 'sandbox-router', x: 'y' } };

test('case netpol-router-peer-mismatch: the default peer does not admit the shipped router; it admits app=sandbox-router in agent-sandbox-system', () => {
  expect(judgeAdmission('sbx', sandboxLabels, [controllerDefault], [shipped], 8080)).toEqual({
    verdict: 'not-admitted',
    selecting: ['sbx/py-network-policy'],
    routerPods: ['default/r-1'],
  });
  expect(judgeAdmission('sbx', sandboxLabels, [controllerDefault], [managed], 8080).verdict).toBe('admitted');
  // The same policy as client-node's typed model reads it (`_from`): judged alike, never "every source".
  const typed = {
    ...controllerDefault,
    spec: { ...controllerDefault.spec, ingress: [{ _from: controllerDefault.spec.ingress[0]!.from }] },
  };
  expect(judgeAdmission('sbx', sandboxLabels, [typed], [shipped], 8080).verdict).toBe('not-admitted');
  // One router pod not admitted is enough to fail: any pod may serve a request.
  expect(judgeAdmission('sbx', sandboxLabels, [controllerDefault], [managed, shipped], 8080).routerPods).toEqual([
    'default/r-1',
  ]);
});

test('policies add up; a policy selecting other pods, or egress only, does not restrict ingress', () => {
  const other = { ...controllerDefault, metadata: { namespace: 'sbx', name: 'other' } };
  const admitsShipped = {
    metadata: { namespace: 'sbx', name: 'extra' },
    spec: {
      podSelector: {},
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } } }],
          ports: [{ port: 8080 }],
        },
      ],
    },
  };
  expect(judgeAdmission('sbx', sandboxLabels, [controllerDefault, admitsShipped], [shipped], 8080)).toEqual({
    verdict: 'admitted',
    selecting: ['sbx/py-network-policy', 'sbx/extra'],
    routerPods: [],
  });
  // Wrong port: the rule does not admit the runtime port the router dials.
  expect(judgeAdmission('sbx', sandboxLabels, [controllerDefault, admitsShipped], [shipped], 8888).verdict).toBe(
    'not-admitted',
  );
  const egressOnly = { metadata: { namespace: 'sbx', name: 'eg' }, spec: { podSelector: {}, policyTypes: ['Egress'] } };
  expect(judgeAdmission('sbx', sandboxLabels, [egressOnly], [shipped], 8080)).toEqual({
    verdict: 'admitted',
    selecting: [],
    routerPods: [],
  });
  const elsewhere = { ...other, spec: { ...other.spec, podSelector: { matchLabels: { app: 'not-this' } } } };
  expect(judgeAdmission('sbx', sandboxLabels, [elsewhere], [shipped], 8080).selecting).toEqual([]);
  // A policy in another namespace never selects these pods.
  expect(judgeAdmission('other-ns', sandboxLabels, [controllerDefault], [shipped], 8080).selecting).toEqual([]);
});

test('a podSelector-only peer admits pods of the policy namespace only', () => {
  const local = {
    metadata: { namespace: 'sbx', name: 'local' },
    spec: { podSelector: {}, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'sandbox-router' } } }] }] },
  };
  expect(judgeAdmission('sbx', sandboxLabels, [local], [managed], 8080).verdict).toBe('not-admitted');
  expect(judgeAdmission('sbx', sandboxLabels, [local], [{ ...managed, namespace: 'sbx' }], 8080).verdict).toBe(
    'admitted',
  );
});

test('what labels cannot tell is unknown, never admitted: namespace labels not read, named ports, ipBlock without IP', () => {
  const byTeam = {
    metadata: { namespace: 'sbx', name: 'team' },
    spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'infra' } } }] }] },
  };
  expect(judgeAdmission('sbx', sandboxLabels, [byTeam], [shipped], 8080)).toEqual({
    verdict: 'unknown',
    selecting: ['sbx/team'],
    routerPods: ['default/r-1'],
  });
  expect(portAdmits([{ port: 'http' }], 8080)).toBeUndefined();
  expect(portAdmits([{ port: 'http' }, { port: 8080 }], 8080)).toBe(true);
  expect(portAdmits([{ port: 8000, endPort: 8100 }], 8080)).toBe(true);
  expect(portAdmits([{ port: 8080, protocol: 'UDP' }], 8080)).toBe(false);
  const cidr = {
    metadata: { namespace: 'sbx', name: 'cidr' },
    spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.9.0.0/16'] } }] }] },
  };
  expect(judgeAdmission('sbx', sandboxLabels, [cidr], [shipped], 8080).verdict).toBe('unknown');
  expect(judgeAdmission('sbx', sandboxLabels, [cidr], [{ ...shipped, podIP: '10.1.2.3' }], 8080).verdict).toBe(
    'admitted',
  );
  expect(judgeAdmission('sbx', sandboxLabels, [cidr], [{ ...shipped, podIP: '10.9.2.3' }], 8080).verdict).toBe(
    'not-admitted',
  );
});

test('selectors and CIDRs', () => {
  expect(selectsTri({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, { a: '1' }, true)).toBe(true);
  expect(selectsTri({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, { a: '1' }, true)).toBe(
    false,
  );
  expect(selectsTri({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, {}, true)).toBe(true);
  expect(selectsTri({ matchLabels: { b: '2' } }, { a: '1' }, false)).toBeUndefined();
  expect(selectsTri({ matchLabels: { a: '2' } }, { a: '1' }, false)).toBe(false);
  expect(inCidr('127.20.1.5', '127.0.0.0/8')).toBe(true);
  expect(inCidr('128.0.0.1', '127.0.0.0/8')).toBe(false);
  expect(inCidr('1.2.3.4', '0.0.0.0/0')).toBe(true);
  expect(inCidr('fe80::1', '10.0.0.0/8')).toBeUndefined();
});
