/** A declared client that dials the pod is observed only over its own path (direct; port-forward for the pod tunnel). */
import { Facts } from '../../../src/verify/probes/common.js';
import { clientPathEvidence } from '../../../src/verify/probes/workload/client-path.js';
import type { ClientPlan, VerifyPlan } from '../../../src/verify/plan.js';

const client = (mode: string, via: 'router' | 'pod', pool = 'python'): ClientPlan => ({
  sdk: 'k8s-agent-sandbox',
  version: '1.0.8',
  mode,
  runtimeApi: mode.startsWith('sandboxd') ? 'sandboxd' : 'python-runtime',
  via,
  ports: mode.startsWith('sandboxd') ? [8080, 9090] : [8888],
  headers: [],
  warmPools: [{ namespace: 'apps', name: pool }],
});
const template = { namespace: 'apps', name: 'python' };
const warmPools = [{ namespace: 'apps', name: 'python', template: 'python', replicas: 1 }];

function reasons(clients: ClientPlan[], transport: VerifyPlan['transport']): [string, string, string][] {
  const f = { exec: new Facts('runtime-exec'), files: new Facts('runtime-files') };
  const notes: string[] = [];
  clientPathEvidence({ clients, warmPools, transport }, template, f, (t) => notes.push(t));
  expect(notes).toHaveLength(f.exec.list.length);
  return [...f.exec.list, ...f.files.list].map((e) => [e.capability, e.verdict, e.reason]);
}

describe('clientPathEvidence', () => {
  test('in-cluster over port-forward or the router: not observed, on exec and files', () => {
    for (const transport of ['port-forward', 'router'] as const)
      expect(reasons([client('in-cluster', 'pod')], transport)).toEqual([
        ['runtime-exec', 'unknown', 'ClientPathNotObserved'],
        ['runtime-files', 'unknown', 'ClientPathNotObserved'],
      ]);
  });

  test('in-cluster over direct, the pod tunnel over port-forward, router modes: nothing recorded', () => {
    expect(reasons([client('in-cluster', 'pod')], 'direct')).toEqual([]);
    expect(reasons([client('sandboxd-pod-tunnel', 'pod')], 'port-forward')).toEqual([]);
    expect(reasons([client('tunnel', 'router'), client('router', 'router')], 'port-forward')).toEqual([]);
  });

  test('the pod tunnel over direct is not its path; a client of another pool says nothing of this template', () => {
    expect(reasons([client('sandboxd-pod-tunnel', 'pod')], 'direct').map((r) => r[2])).toEqual([
      'ClientPathNotObserved',
      'ClientPathNotObserved',
    ]);
    expect(reasons([client('in-cluster', 'pod', 'other')], 'port-forward')).toEqual([]);
  });
});
