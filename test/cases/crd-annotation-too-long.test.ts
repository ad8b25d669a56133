/**
 * Case crd-annotation-too-long: CRDs whose pinned manifest exceeds 256 KiB are marked for server-side apply
 * (`argocd.argoproj.io/sync-options: ServerSideApply=true`) and the output says to use `kubectl apply --server-side`;
 * no last-applied annotation is ever emitted; any object whose JSON would exceed the 262144-byte annotation limit
 * under client-side apply is marked too (with a note), or fails synthesis in strict mode.
 * Measured on the pinned files: the v0.5.x Sandbox and SandboxTemplate CRDs are 393 KB and 407 KB as YAML
 * (132 KB and 136 KB as compact JSON); the v0.4.6 ones are 197 KB and 204 KB.
 */
import { jest } from '@jest/globals';
import { ApiObject } from 'cdk8s';
import { ObjectTooLargeError, synthesizeEnvironment } from '../../src/index.js';
import { newEnvironment, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const SSA = 'argocd.argoproj.io/sync-options';

function marked(s: ReturnType<typeof synthesizeEnvironment>): string[] {
  return s.objects
    .filter((o) => (o.object.metadata!['annotations'] as Record<string, string>)[SSA] === 'ServerSideApply=true')
    .map((o) => String(o.object.metadata?.name))
    .sort();
}

describe('case crd-annotation-too-long: CRDs too large for client-side apply', () => {
  test.each(['v0.5.0', 'v0.5.6'] as const)(
    '%s: the Sandbox and SandboxTemplate CRDs are marked and the notes say --server-side',
    async (tag) => {
      const s = synthesizeEnvironment(newEnvironment(await release(tag), 'sbx'));
      expect(marked(s)).toEqual(['sandboxes.agents.x-k8s.io', 'sandboxtemplates.extensions.agents.x-k8s.io']);
      expect(s.notes[0]).toContain('apply the files of sbx/ with kubectl apply --server-side');
      expect(s.descriptor.install!.serverSideApply).toEqual([
        'sandboxes.agents.x-k8s.io',
        'sandboxtemplates.extensions.agents.x-k8s.io',
      ]);
    },
  );

  test('v0.4.6: no CRD is over the threshold, none is marked', async () => {
    const s = synthesizeEnvironment(newEnvironment(await release('v0.4.6'), 'sbx'));
    expect(marked(s)).toEqual([]);
    expect(s.notes).toEqual([]);
  });

  test('a last-applied annotation never reaches the output', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    new ApiObject(env, 'cm', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'x',
        namespace: 'agent-sandboxes',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}' },
      },
    });
    const s = synthesizeEnvironment(env);
    expect(s.files.map((f) => f.content).join('')).not.toContain('last-applied-configuration');
  });

  test('an object over the annotation limit is marked with a note, or refused in strict mode', async () => {
    const rel = await release('v0.5.6');
    const big = (name: string) => {
      const env = newEnvironment(rel, name, { install: false });
      new ApiObject(env, 'cm', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'big', namespace: 'agent-sandboxes' },
        data: { blob: 'x'.repeat(300_000) },
      });
      return env;
    };
    const s = synthesizeEnvironment(big('loose'));
    expect(marked(s)).toEqual(['big']);
    expect(s.notes).toEqual([
      expect.stringMatching(
        /^ConfigMap big is 300\d{3} bytes as JSON, over the 262144-byte annotation limit of client-side apply: marked ServerSideApply=true/,
      ),
    ]);
    const strict = thrownBy(
      () => synthesizeEnvironment(big('strict'), { strict: true }),
      ObjectTooLargeError,
      'ObjectTooLarge',
    );
    expect([strict.limit, strict.limitBytes, strict.objects.map((o) => o.object.name)]).toEqual([
      'client-side-apply',
      262144,
      ['big'],
    ]);
  });
});
