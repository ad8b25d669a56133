/**
 * Case hook-job-ttl-and-immutability: a verifier Job delivered as an Argo CD PostSync hook never carries a TTL (the TTL
 * controller could delete it before Argo CD records its result, argoproj/argo-cd#21055); asking for one fails synthesis
 * naming both settings. Delivered by Flux, a changed image is a new Job under a new name (its pod template is immutable,
 * rwlove/home-ops#13277 stalled on it), not an update Kubernetes refuses. The diff ignores the hook finalizer
 * (argoproj/gitops-engine#646) and what Kubernetes writes on a Job, and flags an immutable template change.
 */
import { jest } from '@jest/globals';
import { VerifierDeliveryError, type VerifierDelivery } from '../../src/constructs/index.js';
import { diffManifests } from '../../src/diff/index.js';
import type { KubeObject } from '../../src/releases/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

jest.setTimeout(120_000);

const V12 = 'registry.example/agentplane-verifier:1.2.0';
const V13 = 'registry.example/agentplane-verifier:1.3.0';

async function objects(delivery: VerifierDelivery, image: string): Promise<KubeObject[]> {
  const e = newEnvironment(await release('v0.5.6'), 'env', { defaultNamespace: 'sbx' });
  const rc = e.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  e.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
  e.addVerifierJob('verify', { image, delivery });
  return e.toJson() as KubeObject[];
}
const jobOf = (objs: KubeObject[]): KubeObject => objs.find((o) => o.kind === 'Job')!;

describe('hook-job-ttl-and-immutability', () => {
  test('argocd delivery: PostSync, BeforeHookCreation, backoffLimit 0, a deadline, no TTL', async () => {
    const job = jobOf(await objects('argocd', V12));
    expect(job.metadata?.annotations).toMatchObject({
      'argocd.argoproj.io/hook': 'PostSync',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900 });
    expect(job.spec).not.toHaveProperty('ttlSecondsAfterFinished');
  });

  test('a TTL with hook delivery fails synthesis with a typed error naming both settings', async () => {
    const e = newEnvironment(await release('v0.5.6'), 'env', { defaultNamespace: 'sbx' });
    const err = thrownBy(
      () => e.addVerifierJob('verify', { image: V12, delivery: 'argocd', ttlSecondsAfterFinished: 0 }),
      VerifierDeliveryError,
      'TtlWithHookDelivery',
    );
    expect(err.path).toBe('env/verify');
    expect(err.settings).toEqual(['delivery', 'ttlSecondsAfterFinished']);
    expect(err.values).toEqual({ delivery: 'argocd', ttlSecondsAfterFinished: 0 });
  });

  test('flux delivery: :1.2.0 -> :1.3.0 is a new Job under a new name, no immutable-field risk', async () => {
    const before = await objects('flux', V12);
    const after = await objects('flux', V13);
    const a = jobOf(before);
    const b = jobOf(after);
    expect(a.metadata?.name).toMatch(/^agentplane-verifier-[0-9a-f]{10}$/);
    expect(b.metadata?.name).not.toBe(a.metadata?.name);
    expect(b.spec).not.toHaveProperty('ttlSecondsAfterFinished');
    const report = diffManifests({ label: 'base', objects: before }, { label: 'head', objects: after });
    const jobs = report.objects.filter((o) => o.key.includes('Job'));
    expect(jobs.map((o) => o.change).sort()).toEqual(['added', 'removed']);
    expect(report.risks.map((r) => r.rule)).not.toContain('immutable-field');
  });

  test('plain delivery keeps its name: the same change is an immutable-field risk; argocd replaces the hook', async () => {
    const plain = diffManifests(
      { label: 'base', objects: await objects('plain', V12) },
      { label: 'head', objects: await objects('plain', V13) },
    );
    expect(plain.risks.filter((r) => r.rule === 'immutable-field').map((r) => r.subject?.fields)).toEqual([
      ['spec.template'],
    ]);
    const argo = diffManifests(
      { label: 'base', objects: await objects('argocd', V12) },
      { label: 'head', objects: await objects('argocd', V13) },
    );
    expect(argo.risks.map((r) => r.rule)).toContain('image-change');
    expect(argo.risks.map((r) => r.rule)).not.toContain('immutable-field');
  });

  test('against a live hook Job: the hook finalizer and controller-written fields are no change', async () => {
    const declared = jobOf(await objects('argocd', V12));
    const uid = '5d3b0c2a-0000-4000-8000-000000000001';
    const spec = declared.spec as { template: { metadata: { labels: Record<string, string> } } };
    const live: KubeObject = {
      ...declared,
      metadata: {
        ...declared.metadata,
        uid,
        resourceVersion: '99',
        finalizers: ['argocd.argoproj.io/hook-finalizer'],
      },
      spec: {
        ...(declared.spec as object),
        completions: 1,
        parallelism: 1,
        completionMode: 'NonIndexed',
        suspend: false,
        manualSelector: false,
        podReplacementPolicy: 'TerminatingOrFailed',
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
        template: {
          ...spec.template,
          metadata: {
            labels: {
              ...spec.template.metadata.labels,
              'batch.kubernetes.io/controller-uid': uid,
              'batch.kubernetes.io/job-name': String(declared.metadata?.name),
              'controller-uid': uid,
              'job-name': String(declared.metadata?.name),
            },
          },
        },
      },
      status: { succeeded: 1 },
    };
    const report = diffManifests({ label: 'live', objects: [live] }, { label: 'head', objects: [declared] });
    expect(report.objects).toEqual([]);
    expect(report.risks).toEqual([]);
  });
});
