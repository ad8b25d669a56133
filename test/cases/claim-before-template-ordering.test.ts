/**
 * Case claim-before-template-ordering (construct side): whatever the declaration order, synthesis orders CRDs →
 * Namespace → RBAC → controller → RuntimeClass → SandboxTemplate → SandboxWarmPool → SandboxClaim by file prefix and
 * Argo CD sync wave; a claim naming a pool absent from the environment fails with the construct path.
 */
import { jest } from '@jest/globals';
import { EnvironmentInvalidError, synthesizeEnvironment } from '../../src/index.js';
import { newEnvironment, podSpec, release } from '../unit/constructs/fixture.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

describe('case claim-before-template-ordering: claim before template', () => {
  test('a claim declared first is still applied after its template and pool', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { defaultNamespace: 'sbx' });
    env.addClaim('c1', { pool: 'py-pool', lifecycle: { ttlSecondsAfterFinished: 600 } }); // declared first, by name
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const tpl = env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() });
    env.addWarmPool('py-pool', { template: tpl, replicas: 1 });
    const s = synthesizeEnvironment(env);

    const kinds = s.objects.map((o) => o.object.kind);
    const firstIndex = (k: string) => kinds.indexOf(k);
    const lastIndex = (k: string) => kinds.lastIndexOf(k);
    const order = [
      'CustomResourceDefinition',
      'Namespace',
      'ClusterRole',
      'Deployment',
      'RuntimeClass',
      'SandboxTemplate',
      'SandboxWarmPool',
      'SandboxClaim',
    ];
    for (let i = 1; i < order.length; i++) expect(lastIndex(order[i - 1]!)).toBeLessThan(firstIndex(order[i]!));

    const wave = (kind: string) =>
      Number(
        (s.objects.find((o) => o.object.kind === kind)!.object.metadata!['annotations'] as Record<string, string>)[
          'argocd.argoproj.io/sync-wave'
        ],
      );
    expect([wave('SandboxTemplate'), wave('SandboxWarmPool'), wave('SandboxClaim')]).toEqual([6, 7, 9]);
    expect(s.files.map((f) => f.path.split('/')[1])).toEqual([
      '00-crds.yaml',
      '01-namespaces.yaml',
      '02-rbac.yaml',
      '03-controller.yaml',
      '04-runtime-classes.yaml',
      '06-templates.yaml',
      '07-warm-pools.yaml',
      '09-claims.yaml',
      '10-environment.yaml',
      'environment.json',
    ]);
    // the file names sort in apply order, so a per-file applier cannot reorder them
    const names = s.files.map((f) => f.path);
    expect([...names].sort()).toEqual(names);
    const claim = s.objects.find((o) => o.object.kind === 'SandboxClaim')!.object;
    expect(claim).toMatchObject({
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      spec: { warmPoolRef: { name: 'py-pool' } },
    });
  });

  test('on v0.4.6 the claim names the template and the pool (v1alpha1)', async () => {
    const env = newEnvironment(await release('v0.4.6'), 'old');
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const pool = env.addWarmPool('pool', { template: env.addTemplate('py', { runtimeClass: rc, podSpec: podSpec() }) });
    env.addClaim('c1', { pool, lifecycle: { ttlSecondsAfterFinished: 600 } });
    const claim = synthesizeEnvironment(env).objects.find((o) => o.object.kind === 'SandboxClaim')!.object;
    expect(claim).toMatchObject({
      apiVersion: 'extensions.agents.x-k8s.io/v1alpha1',
      spec: { sandboxTemplateRef: { name: 'py' }, warmpool: 'pool' },
    });
  });

  test('a claim naming a pool the environment lacks fails synthesis with its construct path', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    env.addClaim('c1', { pool: 'py-pool', lifecycle: { ttlSecondsAfterFinished: 600 } });
    let err: unknown;
    try {
      synthesizeEnvironment(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EnvironmentInvalidError);
    expect((err as EnvironmentInvalidError).reason).toBe('EnvironmentInvalid');
    expect((err as EnvironmentInvalidError).problems.map((p) => [p.path, p.reason])).toEqual([
      ['sbx/c1', 'MissingReference'],
    ]);
  });
});
