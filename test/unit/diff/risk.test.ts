/** Each risk rule fires on the change it names, says what it does, and stays quiet on the harmless counterpart. */
import { diffManifests, type Risk } from '../../../src/diff/index.js';
import { crdObject, loadRelease, type KubeObject, type SandboxKind } from '../../../src/releases/index.js';

const risks = (base: KubeObject[], head: KubeObject[]): readonly Risk[] =>
  diffManifests({ label: 'base', objects: base }, { label: 'head', objects: head }).risks;

const role = (rules: unknown[]): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'verifier' },
  rules,
});
const binding = (subjects: unknown[], role = 'verifier'): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'verifier', namespace: 'agents' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects,
});
const netpol = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name: 'sandboxes', namespace: 'agents' },
  spec,
});
const template = (
  podSpec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  labels?: Record<string, string>,
): KubeObject => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxTemplate',
  metadata: { name: 'python', namespace: 'agents', ...(labels ? { labels } : {}) },
  spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: 'img:v1' }], ...podSpec } }, ...extra },
});
const pool = (strategy?: string): KubeObject => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxWarmPool',
  metadata: { name: 'pool', namespace: 'agents' },
  spec: {
    replicas: 2,
    sandboxTemplateRef: { name: 'python' },
    ...(strategy ? { updateStrategy: { type: strategy } } : {}),
  },
});

describe('risk rules', () => {
  it('rbac-widening: a new verb is reported; a narrower role is not', () => {
    const narrow = role([{ apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'list'] }]);
    const wide = role([{ apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'list', 'delete'] }]);
    expect(risks([narrow], [wide])).toEqual([
      expect.objectContaining({ rule: 'rbac-widening', details: ['grants agents.x-k8s.io sandboxes delete'] }),
    ]);
    expect(risks([wide], [narrow])).toEqual([]);
    expect(risks([role([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])], [wide])).toEqual([]);
  });

  it('rbac-widening: a binding gaining a subject or changing its role', () => {
    const one = binding([{ kind: 'ServiceAccount', name: 'verifier', namespace: 'agents' }]);
    const two = binding([
      { kind: 'ServiceAccount', name: 'verifier', namespace: 'agents' },
      { kind: 'Group', name: 'system:authenticated' },
    ]);
    expect(risks([one], [two])[0]?.details).toEqual(['binds Group system:authenticated']);
    expect(
      risks([one], [binding([{ kind: 'ServiceAccount', name: 'verifier', namespace: 'agents' }], 'cluster-admin')])[0]
        ?.subject,
    ).toEqual({ change: 'changed', count: 0, roleChanged: true });
  });

  it('networkpolicy-widening: a policy type dropped, a rule added, a policy removed', () => {
    const strict = netpol({ podSelector: {}, policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [] });
    const open = netpol({
      podSelector: {},
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: {} }] }],
    });
    const details = risks([strict], [open])[0]?.details ?? [];
    expect(details).toEqual([
      'policyTypes no longer include Egress: that direction is unrestricted',
      'ingress rule added or changed: {"from":[{"namespaceSelector":{}}]}',
    ]);
    expect(risks([strict], [])[0]?.rule).toBe('networkpolicy-widening');
    expect(risks([open], [strict])).toEqual([]);
  });

  it('networkpolicy-widening: a template switched to Unmanaged', () => {
    const r = risks([template({})], [template({}, { networkPolicyManagement: 'Unmanaged' })]);
    expect(r.map((x) => x.rule)).toEqual(['networkpolicy-widening']);
    expect(r[0]?.details[0]).toMatch(/^networkPolicyManagement Managed -> Unmanaged/);
  });

  it('runtimeclass-change: runtimeClassName dropped (isolation downgrade) and RuntimeClass removed or re-pointed', () => {
    // no `after`: the runtimeClassName is dropped, so pods fall back to the node's default runtime
    expect(
      risks([template({ runtimeClassName: 'gvisor' })], [template({})]).find((r) => r.rule === 'runtimeclass-change')
        ?.subject,
    ).toEqual({ change: 'changed', before: 'gvisor' });
    const rc = (handler: string): KubeObject => ({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'gvisor' },
      handler,
    });
    expect(risks([rc('runsc')], [])[0]?.rule).toBe('runtimeclass-change');
    expect(risks([rc('runsc')], [rc('runc')])[0]?.details).toEqual(['handler: "runsc" -> "runc"']);
  });

  it('image-change and release-change', () => {
    const r = risks(
      [template({}, {}, { 'app.kubernetes.io/version': 'v0.5.0' })],
      [
        {
          ...template({}, {}, { 'app.kubernetes.io/version': 'v0.5.6' }),
          spec: { podTemplate: { spec: { containers: [{ name: 'runtime', image: 'img:v2' }] } } },
        },
      ],
    );
    expect(r.map((x) => x.rule).sort()).toEqual(['image-change', 'release-change']);
    expect(r.find((x) => x.rule === 'image-change')?.details).toEqual(['containers/runtime: img:v1 -> img:v2']);
    expect(r.find((x) => x.rule === 'release-change')?.subject).toEqual({
      change: 'changed',
      before: 'v0.5.0',
      after: 'v0.5.6',
    });
  });

  it('warm-pool-roll names the pool and its update strategy; a label-only template edit does not roll', () => {
    const changed = template({ runtimeClassName: 'gvisor' });
    const recreate = risks([template({}), pool('Recreate')], [changed, pool('Recreate')]).find(
      (r) => r.rule === 'warm-pool-roll',
    );
    expect(recreate?.subject).toEqual({ change: 'changed', pool: 'pool', template: 'python', strategy: 'Recreate' });
    const replenish = risks([template({}), pool()], [changed, pool()]).find((r) => r.rule === 'warm-pool-roll');
    expect(replenish?.subject).toEqual({
      change: 'changed',
      pool: 'pool',
      template: 'python',
      strategy: 'OnReplenish',
    });
    expect(risks([template({}), pool()], [template({}, {}, { team: 'a' }), pool()])).toEqual([]);
  });

  it('warm-pool-roll: a pool pointed at another template', () => {
    const moved = {
      ...pool('Recreate'),
      spec: { replicas: 2, sandboxTemplateRef: { name: 'python-v2' }, updateStrategy: { type: 'Recreate' } },
    };
    expect(risks([pool('Recreate')], [moved])).toEqual([
      expect.objectContaining({
        rule: 'warm-pool-roll',
        subject: {
          change: 'changed',
          pool: 'pool',
          template: 'python-v2',
          previousTemplate: 'python',
          strategy: 'Recreate',
        },
      }),
    ]);
  });

  it('immutable-field: a Sandbox volumeClaimTemplates change', () => {
    const sandbox = (size: string): KubeObject => ({
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name: 'dev', namespace: 'agents' },
      spec: {
        podTemplate: { spec: { containers: [{ name: 'c', image: 'img:v1' }] } },
        volumeClaimTemplates: [
          { metadata: { name: 'workspace' }, spec: { resources: { requests: { storage: size } } } },
        ],
      },
    });
    const r = risks([sandbox('1Gi')], [sandbox('2Gi')]);
    expect(r.map((x) => x.rule)).toEqual(['immutable-field']);
    expect(r[0]?.details).toEqual(['spec.volumeClaimTemplates[name=workspace].spec.resources.requests.storage']);
  });

  describe('CRDs (pinned, from the releases loader)', () => {
    const KINDS: readonly SandboxKind[] = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'];
    let crds: KubeObject[];
    let sandboxV046: KubeObject;
    beforeAll(async () => {
      const rel = await loadRelease('v0.5.6');
      crds = KINDS.map((k) => crdObject(rel, k));
      sandboxV046 = crdObject(await loadRelease('v0.4.6'), 'Sandbox');
    });
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'agents' },
      data: { a: '1' },
    };
    /** The v0.5.6 Sandbox CRD with its v1alpha1 version edited by `edit` (undefined removes it). */
    const sandboxWithAlpha = (
      edit: (v: Record<string, unknown>) => Record<string, unknown> | undefined,
    ): KubeObject => {
      const spec = crds[0]!.spec as { versions: Array<Record<string, unknown>> };
      const versions = spec.versions.flatMap((v) =>
        v.name === 'v1alpha1' ? [edit({ ...v })].filter((x) => x !== undefined) : [v],
      );
      return { ...crds[0]!, spec: { ...spec, versions } };
    };

    it('crd-removed: each removed CRD is named, with the kind whose objects are all deleted with it', () => {
      const report = diffManifests({ label: 'base', objects: [...crds, cm] }, { label: 'head', objects: [cm] });
      expect(report.counts).toEqual({ added: 0, removed: 4, changed: 0, unchanged: 1 });
      expect(report.risks.map((r) => r.rule)).toEqual(['crd-removed', 'crd-removed', 'crd-removed', 'crd-removed']);
      expect(
        report.risks.find(
          (r) => r.object === 'apiextensions.k8s.io/v1/CustomResourceDefinition//sandboxes.agents.x-k8s.io',
        ),
      ).toEqual(
        expect.objectContaining({
          rule: 'crd-removed',
          object: 'apiextensions.k8s.io/v1/CustomResourceDefinition//sandboxes.agents.x-k8s.io',
          subject: {
            change: 'removed',
            kind: 'Sandbox',
            unserved: ['agents.x-k8s.io/v1beta1', 'agents.x-k8s.io/v1alpha1'],
          },
        }),
      );
      expect(report.risks.map((r) => [r.object.split('//')[1], r.subject?.kind])).toEqual([
        ['sandboxclaims.extensions.agents.x-k8s.io', 'SandboxClaim'],
        ['sandboxes.agents.x-k8s.io', 'Sandbox'],
        ['sandboxtemplates.extensions.agents.x-k8s.io', 'SandboxTemplate'],
        ['sandboxwarmpools.extensions.agents.x-k8s.io', 'SandboxWarmPool'],
      ]);
      expect(risks([cm], [...crds, cm])).toEqual([]);
    });

    it('crd-schema-change names a served version removed from a CRD that stays, or no longer served', () => {
      const removed = risks([crds[0]!], [sandboxWithAlpha(() => undefined)]);
      expect(removed.map((r) => [r.rule, r.subject])).toEqual([
        [
          'crd-schema-change',
          {
            change: 'changed',
            kind: 'Sandbox',
            unserved: ['agents.x-k8s.io/v1alpha1'],
            changes: 1,
            breaking: ['version-unserved'],
          },
        ],
      ]);
      expect(removed[0]?.details).toEqual(['Sandbox v1alpha1 removed']);
      const unserved = risks([crds[0]!], [sandboxWithAlpha((v) => ({ ...v, served: false }))]);
      expect(unserved.map((r) => [r.subject, r.details])).toEqual([
        [
          {
            change: 'changed',
            kind: 'Sandbox',
            unserved: ['agents.x-k8s.io/v1alpha1'],
            changes: 1,
            breaking: ['version-unserved'],
          },
          ['Sandbox v1alpha1: served true -> false'],
        ],
      ]);
    });

    it('crd-schema-change: an upgrade that adds a version (v0.4.6 -> v0.5.6) does not say a version was lost; a downgrade does', () => {
      const up = risks([sandboxV046], [crds[0]!]);
      expect(up.map((r) => r.rule)).toEqual(['crd-schema-change']);
      expect(up[0]?.subject?.unserved).toEqual([]);
      expect(up[0]?.subject?.changes).toBe(up[0]?.details.length);
      expect(up[0]?.details).toContain('Sandbox v1beta1 added (served, storage)');
      expect(risks([crds[0]!], [sandboxV046])[0]?.subject?.unserved).toEqual(['agents.x-k8s.io/v1beta1']);
    });
  });
});
