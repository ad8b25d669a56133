/**
 * Case diff-defaults-noise: server defaults, status, managedFields and key order must not
 * show as changes; an env reorder must. Defaults come from the pinned v0.5.6 CRDs, loaded and sha256-verified from the mirror.
 */
import { diffManifests, schemaLookupFromRelease, type ManifestSet } from '../../src/diff/index.js';
import { loadRelease, type KubeObject } from '../../src/releases/index.js';

const pool = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxWarmPool',
  metadata: { name: 'pool', namespace: 'agents' },
  spec,
});

const template = (spec: Record<string, unknown>, env: Array<{ name: string; value: string }>): KubeObject => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxTemplate',
  metadata: { name: 'python', namespace: 'agents' },
  spec: {
    podTemplate: {
      spec: {
        containers: [{ name: 'runtime', image: 'registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.5.6', env }],
      },
    },
    ...spec,
  },
});

/** The live objects as the API server returns them: defaults filled, status and server metadata added, keys in another order. */
function live(): KubeObject[] {
  return [
    {
      status: {
        readyReplicas: 1,
        replicas: 1,
        selector: 'agents.x-k8s.io/warm-pool-sandbox=1a2b3c4d',
        observedGeneration: 1,
      },
      spec: { updateStrategy: { type: 'OnReplenish' }, sandboxTemplateRef: { name: 'python' }, replicas: 1 },
      metadata: {
        uid: '6f1c1f0e-0000-4000-8000-000000000001',
        resourceVersion: '4711',
        generation: 1,
        creationTimestamp: '2026-11-29T10:00:00Z',
        managedFields: [
          { manager: 'agentplane', operation: 'Apply', apiVersion: 'extensions.agents.x-k8s.io/v1beta1' },
        ],
        namespace: 'agents',
        name: 'pool',
      },
      kind: 'SandboxWarmPool',
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    },
    {
      spec: {
        volumeClaimTemplatesPolicy: 'Disallowed',
        envVarsInjectionPolicy: 'Disallowed',
        networkPolicyManagement: 'Managed',
        podTemplate: {
          spec: {
            containers: [
              {
                env: [
                  { value: '2', name: 'B' },
                  { value: '1', name: 'A' },
                ],
                image: 'registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.5.6',
                name: 'runtime',
              },
            ],
          },
        },
      },
      metadata: {
        labels: { 'agents.x-k8s.io/sandbox-template-ref-hash': '9f8e7d6c' },
        resourceVersion: '4700',
        generation: 1,
        managedFields: [{ manager: 'agentplane' }],
        name: 'python',
        namespace: 'agents',
      },
      kind: 'SandboxTemplate',
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    },
  ];
}

describe('case diff-defaults-noise', () => {
  let schemaFor: ReturnType<typeof schemaLookupFromRelease>;
  beforeAll(async () => {
    schemaFor = schemaLookupFromRelease(await loadRelease('v0.5.6'));
  });

  it('reports no change when the only differences are defaults, status, server metadata and key order', () => {
    const synth: ManifestSet = {
      label: 'dist',
      objects: [
        pool({ sandboxTemplateRef: { name: 'python' } }),
        template({}, [
          { name: 'B', value: '2' },
          { name: 'A', value: '1' },
        ]),
      ],
    };
    const report = diffManifests({ label: 'live', objects: live() }, synth, { schemaFor });
    expect(report.objects).toEqual([]);
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 2 });
    expect(report.risks).toEqual([]);
  });

  it('reports an env reorder [B, A] -> [A, B] as a change (list order carries meaning)', () => {
    const synth: ManifestSet = {
      label: 'dist',
      objects: [
        pool({ sandboxTemplateRef: { name: 'python' } }),
        template({}, [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ]),
      ],
    };
    const report = diffManifests({ label: 'live', objects: live() }, synth, { schemaFor });
    expect(report.counts.changed).toBe(1);
    const [changed] = report.objects;
    expect(changed?.kind).toBe('SandboxTemplate');
    expect(changed?.fields).toEqual([
      expect.objectContaining({
        op: 'moved',
        path: expect.stringMatching(/^spec\.podTemplate\.spec\.containers\[name=runtime\]\.env\[name=[AB]\]$/),
      }),
    ]);
    expect(changed?.unified).toMatch(/-\s+- name: B/);
  });

  it('still reports a real change next to the defaults (replicas 1 -> 3)', () => {
    const synth: ManifestSet = {
      label: 'dist',
      objects: [pool({ sandboxTemplateRef: { name: 'python' }, replicas: 3 })],
    };
    const report = diffManifests({ label: 'live', objects: [live()[0]!] }, synth, { schemaFor });
    expect(report.objects[0]?.fields).toEqual([{ path: 'spec.replicas', op: 'changed', before: 1, after: 3 }]);
  });

  it('without the pinned schema the same inputs do show the defaults as changes (the schema is what removes the noise)', () => {
    const synth: ManifestSet = { label: 'dist', objects: [pool({ sandboxTemplateRef: { name: 'python' } })] };
    const report = diffManifests({ label: 'live', objects: [live()[0]!] }, synth);
    expect(report.objects[0]?.fields.map((f) => f.path).sort()).toEqual(['spec.replicas', 'spec.updateStrategy']);
  });
});
