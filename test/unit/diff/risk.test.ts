/** Each risk rule fires on the change it names, says what it does, and stays quiet on the harmless counterpart. */
import { diffManifests, type Risk } from '../../../src/diff/index.js';
import type { KubeObject } from '../../../src/releases/index.js';

const risks = (base: KubeObject[], head: KubeObject[]): readonly Risk[] => diffManifests({ label: 'base', objects: base }, { label: 'head', objects: head }).risks;

const role = (rules: unknown[]): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'verifier' }, rules });
const binding = (subjects: unknown[], role = 'verifier'): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'verifier', namespace: 'agents' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects });
const netpol = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'sandboxes', namespace: 'agents' }, spec });
const template = (podSpec: Record<string, unknown>, extra: Record<string, unknown> = {}, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxTemplate', metadata: { name: 'python', namespace: 'agents', ...(labels ? { labels } : {}) },
  spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: 'img:v1' }], ...podSpec } }, ...extra },
});
const pool = (strategy?: string): KubeObject => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxWarmPool', metadata: { name: 'pool', namespace: 'agents' },
  spec: { replicas: 2, sandboxTemplateRef: { name: 'python' }, ...(strategy ? { updateStrategy: { type: strategy } } : {}) },
});

describe('risk rules', () => {
  it('rbac-widening: a new verb is reported; a narrower role is not', () => {
    const narrow = role([{ apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'list'] }]);
    const wide = role([{ apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'list', 'delete'] }]);
    expect(risks([narrow], [wide])).toEqual([expect.objectContaining({ rule: 'rbac-widening', details: ['grants agents.x-k8s.io sandboxes delete'] })]);
    expect(risks([wide], [narrow])).toEqual([]);
    expect(risks([role([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])], [wide])).toEqual([]);
  });

  it('rbac-widening: a binding gaining a subject or changing its role', () => {
    const one = binding([{ kind: 'ServiceAccount', name: 'verifier', namespace: 'agents' }]);
    const two = binding([{ kind: 'ServiceAccount', name: 'verifier', namespace: 'agents' }, { kind: 'Group', name: 'system:authenticated' }]);
    expect(risks([one], [two])[0]?.details).toEqual(['binds Group system:authenticated']);
    expect(risks([one], [binding([{ kind: 'ServiceAccount', name: 'verifier', namespace: 'agents' }], 'cluster-admin')])[0]?.message).toMatch(/role changed/);
  });

  it('networkpolicy-widening: a policy type dropped, a rule added, a policy removed', () => {
    const strict = netpol({ podSelector: {}, policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [] });
    const open = netpol({ podSelector: {}, policyTypes: ['Ingress'], ingress: [{ from: [{ namespaceSelector: {} }] }] });
    const details = risks([strict], [open])[0]?.details ?? [];
    expect(details).toEqual(['policyTypes no longer include Egress: that direction is unrestricted', 'ingress rule added or changed: {"from":[{"namespaceSelector":{}}]}']);
    expect(risks([strict], [])[0]?.rule).toBe('networkpolicy-widening');
    expect(risks([open], [strict])).toEqual([]);
  });

  it('networkpolicy-widening: a template switched to Unmanaged', () => {
    const r = risks([template({})], [template({}, { networkPolicyManagement: 'Unmanaged' })]);
    expect(r.map((x) => x.rule)).toEqual(['networkpolicy-widening']);
    expect(r[0]?.details[0]).toMatch(/^networkPolicyManagement Managed -> Unmanaged/);
  });

  it('runtimeclass-change: runtimeClassName dropped (isolation downgrade) and RuntimeClass removed or re-pointed', () => {
    expect(risks([template({ runtimeClassName: 'gvisor' })], [template({})]).find((r) => r.rule === 'runtimeclass-change')?.message).toMatch(/dropped.*isolation downgrade/);
    const rc = (handler: string): KubeObject => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler });
    expect(risks([rc('runsc')], [])[0]?.rule).toBe('runtimeclass-change');
    expect(risks([rc('runsc')], [rc('runc')])[0]?.details).toEqual(['handler: "runsc" -> "runc"']);
  });

  it('image-change and release-change', () => {
    const r = risks([template({}, {}, { 'app.kubernetes.io/version': 'v0.5.0' })], [{ ...template({}, {}, { 'app.kubernetes.io/version': 'v0.5.6' }), spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: 'img:v2' }] } } } }]);
    expect(r.map((x) => x.rule).sort()).toEqual(['image-change', 'release-change']);
    expect(r.find((x) => x.rule === 'image-change')?.details).toEqual(['containers/runtime: img:v1 -> img:v2']);
    expect(r.find((x) => x.rule === 'release-change')?.message).toBe('release v0.5.0 -> v0.5.6');
  });

  it('warm-pool-roll names the pool and its update strategy; a label-only template edit does not roll', () => {
    const changed = template({ runtimeClassName: 'gvisor' });
    const recreate = risks([template({}), pool('Recreate')], [changed, pool('Recreate')]).find((r) => r.rule === 'warm-pool-roll');
    expect(recreate?.message).toBe('template python changed: warm pool pool rolls (Recreate)');
    expect(recreate?.details[0]).toMatch(/^Recreate: unclaimed members are deleted/);
    const replenish = risks([template({}), pool()], [changed, pool()]).find((r) => r.rule === 'warm-pool-roll');
    expect(replenish?.message).toBe('template python changed: warm pool pool rolls (OnReplenish)');
    expect(risks([template({}), pool()], [template({}, {}, { team: 'a' }), pool()])).toEqual([]);
  });

  it('warm-pool-roll: a pool pointed at another template', () => {
    const moved = { ...pool('Recreate'), spec: { replicas: 2, sandboxTemplateRef: { name: 'python-v2' }, updateStrategy: { type: 'Recreate' } } };
    expect(risks([pool('Recreate')], [moved])).toEqual([expect.objectContaining({ rule: 'warm-pool-roll', message: 'warm pool pool now uses template python-v2 instead of python (Recreate)' })]);
  });

  it('immutable-field: a Sandbox volumeClaimTemplates change', () => {
    const sandbox = (size: string): KubeObject => ({
      apiVersion: 'agents.x-k8s.io/v1beta1', kind: 'Sandbox', metadata: { name: 'dev', namespace: 'agents' },
      spec: { podTemplate: { spec: { containers: [{ name: 'c', image: 'img:v1' }] } }, volumeClaimTemplates: [{ metadata: { name: 'workspace' }, spec: { resources: { requests: { storage: size } } } }] },
    });
    const r = risks([sandbox('1Gi')], [sandbox('2Gi')]);
    expect(r.map((x) => x.rule)).toEqual(['immutable-field']);
    expect(r[0]?.details).toEqual(['spec.volumeClaimTemplates[name=workspace].spec.resources.requests.storage']);
  });
});
