/**
 * Diffs that know Jobs (case hook-job-ttl-and-immutability): what Kubernetes and Argo CD write on a live Job is no
 * change; a change to an immutable Job field is an `immutable-field` risk unless the delivery replaces the Job.
 */
import { diffManifests, normalizeObject, type Risk } from '../../../src/diff/index.js';
import type { KubeObject } from '../../../src/releases/index.js';

const diff = (base: KubeObject[], head: KubeObject[]) =>
  diffManifests({ label: 'base', objects: base }, { label: 'head', objects: head });
const rules = (risks: readonly Risk[]): string[] => risks.map((r) => r.rule);

const LABELS = { 'app.kubernetes.io/name': 'agentplane-verifier' };

/** The Job as AgentPlane declares it. */
function declared(image = 'registry.example/verifier:1.2.0', annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'agentplane-verifier',
      namespace: 'sbx',
      labels: LABELS,
      ...(annotations ? { annotations } : {}),
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: 900,
      template: {
        metadata: { labels: LABELS },
        spec: { restartPolicy: 'Never', containers: [{ name: 'verify', image }] },
      },
    },
  };
}

/** The same Job as the API server returns it after Argo CD ran it as a hook: controller fields, defaults, finalizer, status. */
function live(image = 'registry.example/verifier:1.2.0', annotations?: Record<string, string>): KubeObject {
  const uid = '0b6c1f0e-0000-4000-8000-00000000000a';
  const podLabels = {
    ...LABELS,
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': 'agentplane-verifier',
    'controller-uid': uid,
    'job-name': 'agentplane-verifier',
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'agentplane-verifier',
      namespace: 'sbx',
      uid,
      resourceVersion: '812',
      generation: 1,
      creationTimestamp: '2026-12-04T10:00:00Z',
      finalizers: ['argocd.argoproj.io/hook-finalizer'],
      labels: LABELS,
      ...(annotations ? { annotations } : {}),
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: 900,
      completionMode: 'NonIndexed',
      completions: 1,
      parallelism: 1,
      manualSelector: false,
      podReplacementPolicy: 'TerminatingOrFailed',
      suspend: false,
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
      template: {
        metadata: { labels: podLabels },
        spec: { restartPolicy: 'Never', containers: [{ name: 'verify', image }] },
      },
    },
    status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
  };
}

describe('Jobs in a diff', () => {
  test('a live Job equals its declaration: hook finalizer, controller labels, selector and defaults are ignored', () => {
    const report = diff([live()], [declared()]);
    expect(report.objects).toEqual([]);
    expect(report.risks).toEqual([]);
    const n = normalizeObject(live());
    expect(n.metadata?.finalizers).toBeUndefined();
    expect(n.spec).not.toHaveProperty('selector');
    expect(n.spec).not.toHaveProperty('podReplacementPolicy');
  });

  test('other finalizers, a declared selector and non-default values are still compared', () => {
    const other = live();
    other.metadata!.finalizers = ['argocd.argoproj.io/hook-finalizer', 'example.com/keep'];
    expect(normalizeObject(other).metadata?.finalizers).toEqual(['example.com/keep']);
    const manual = live();
    (manual.spec as Record<string, unknown>).manualSelector = true;
    expect(normalizeObject(manual).spec).toHaveProperty('selector');
    const indexed = declared();
    (indexed.spec as Record<string, unknown>).parallelism = 3;
    expect(rules(diff([declared()], [indexed]).risks)).toEqual([]);
    expect(diff([declared()], [indexed]).objects.some((o) => o.change === 'changed')).toBe(true);
    // with a podFailurePolicy the default is Failed: TerminatingOrFailed is then a choice
    const withPolicy = (policy: string): KubeObject => {
      const j = declared();
      Object.assign(j.spec as object, { podFailurePolicy: { rules: [] }, podReplacementPolicy: policy });
      return j;
    };
    expect(normalizeObject(withPolicy('Failed')).spec).not.toHaveProperty('podReplacementPolicy');
    expect(normalizeObject(withPolicy('TerminatingOrFailed')).spec).toHaveProperty('podReplacementPolicy');
  });

  test('a pod template change of a Job kept under its name is an immutable-field risk', () => {
    const r = diff([declared()], [declared('registry.example/verifier:1.3.0')]).risks;
    expect(rules(r).sort()).toEqual(['image-change', 'immutable-field']);
    const imm = r.find((x) => x.rule === 'immutable-field')!;
    expect(imm.subject).toEqual({ change: 'changed', kind: 'Job', fields: ['spec.template'] });
    expect(imm.details).toEqual(['spec.template.spec.containers[name=verify].image']);
    // against live state too
    expect(rules(diff([live()], [declared('registry.example/verifier:1.3.0')]).risks).sort()).toEqual([
      'image-change',
      'immutable-field',
    ]);
  });

  test('no immutable-field risk when the delivery replaces the Job', () => {
    const hook = {
      'argocd.argoproj.io/hook': 'PostSync',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    };
    const replacing: Array<Record<string, string>> = [
      hook,
      {
        'argocd.argoproj.io/hook': 'PostSync',
        'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded,BeforeHookCreation',
      },
      { 'kustomize.toolkit.fluxcd.io/force': 'enabled' },
      { 'argocd.argoproj.io/sync-options': 'Force=true,Replace=true' },
    ];
    for (const annotations of replacing) {
      const r = diff([declared(undefined, annotations)], [declared('registry.example/verifier:1.3.0', annotations)]);
      expect(rules(r.risks)).toEqual(['image-change']);
    }
    // a hook deleted only on success keeps a failed run: its next creation collides with it
    const kept = { 'argocd.argoproj.io/hook': 'PostSync', 'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded' };
    expect(rules(diff([declared(undefined, kept)], [declared('x:2', kept)]).risks)).toContain('immutable-field');
    // a Flux Job named by its template hash: the new name is a new object, the old one goes
    const renamed = declared('registry.example/verifier:1.3.0');
    renamed.metadata!.name = 'agentplane-verifier-0123456789';
    const report = diff([declared()], [renamed]);
    expect(rules(report.risks)).toEqual([]);
    expect(report.objects.map((o) => o.change).sort()).toEqual(['added', 'removed']);
  });

  test('siblings: a workload selector and a binding roleRef are immutable too', () => {
    const deployment = (app: string): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'router', namespace: 'sbx' },
      spec: {
        selector: { matchLabels: { app } },
        template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'r', image: 'r:1' }] } },
      },
    });
    const dep = diff([deployment('a')], [deployment('b')]).risks.find((r) => r.rule === 'immutable-field');
    expect(dep?.subject?.fields).toEqual(['spec.selector']);
    // a Deployment's template is not immutable
    const img = deployment('a');
    (img.spec as any).template.spec.containers[0].image = 'r:2';
    expect(rules(diff([deployment('a')], [img]).risks)).toEqual(['image-change']);
    const binding = (role: string): KubeObject => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'v', namespace: 'sbx' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
      subjects: [],
    });
    expect(rules(diff([binding('a')], [binding('b')]).risks)).toEqual(['rbac-widening', 'immutable-field']);
  });
});
