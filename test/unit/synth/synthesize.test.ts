import { jest } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiObject } from 'cdk8s';
import { parse, parseAllDocuments } from 'yaml';
import { DESCRIPTOR_CONFIGMAP, parseEnvironmentDescriptor, PHASES } from '../../../src/constructs/index.js';
import {
  DuplicateObjectError,
  EnvironmentInvalidError,
  SchemaViolationError,
  synthesizeEnvironment,
  yamlDocument,
} from '../../../src/synth/index.js';
import { newEnvironment, podSpec, release } from '../constructs/fixture.js';
import { exampleSynthesis, fileHashes, goldenOf, synthExample, type ExampleName } from './helpers.js';
import { thrownBy } from '../thrown.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const GOLDEN_DIR = join(process.cwd(), 'test/unit/synth/golden');

describe('synthesizeEnvironment on the examples', () => {
  test('dev-gvisor: numbered phase files, environment.json, apply order', async () => {
    const s = await exampleSynthesis('dev-gvisor');
    expect(s.files.map((f) => f.path)).toEqual([
      'dev-gvisor/00-crds.yaml',
      'dev-gvisor/01-namespaces.yaml',
      'dev-gvisor/02-rbac.yaml',
      'dev-gvisor/03-controller.yaml',
      'dev-gvisor/04-runtime-classes.yaml',
      'dev-gvisor/06-templates.yaml',
      'dev-gvisor/10-environment.yaml',
      'dev-gvisor/11-verify.yaml',
      'dev-gvisor/environment.json',
    ]);
    const phases = s.objects.map((o) => PHASES.indexOf(o.phase));
    expect(phases).toEqual([...phases].sort((a, b) => a - b));
    for (const o of s.objects) {
      const annotations = o.object.metadata!['annotations'] as Record<string, string>;
      expect(annotations['argocd.argoproj.io/sync-wave']).toBe(String(PHASES.indexOf(o.phase)));
      expect(annotations['kubectl.kubernetes.io/last-applied-configuration']).toBeUndefined();
    }
  });

  test('prod-kata: templates, pool and policies each in their phase', async () => {
    const s = await exampleSynthesis('prod-kata');
    const byFile = Object.fromEntries(
      s.files.map((f) => [
        f.path,
        f.path.endsWith('.json')
          ? []
          : parseAllDocuments(f.content).map((d) => d.toJS() as { kind: string; metadata: { name: string } }),
      ]),
    );
    expect(byFile['prod-kata/06-templates.yaml']!.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'SandboxTemplate/agent',
      'SandboxTemplate/shell',
    ]);
    expect(byFile['prod-kata/07-warm-pools.yaml']!.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'SandboxWarmPool/agent-pool',
    ]);
    expect(byFile['prod-kata/05-policies.yaml']!.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'NetworkPolicy/agent-sandbox-policy',
      'NetworkPolicy/shell-sandbox-policy',
    ]);
    // pods of a pool must never start before their policy exists: policies sort (and sync) before templates and pools
    expect(PHASES.indexOf('policies')).toBeLessThan(PHASES.indexOf('templates'));
    expect(byFile['prod-kata/08-router.yaml']).toBeUndefined();
    const templates = byFile['prod-kata/06-templates.yaml'] as unknown as Array<{
      spec: { networkPolicyManagement: string };
    }>;
    expect(templates.map((t) => t.spec.networkPolicyManagement)).toEqual(['Unmanaged', 'Unmanaged']);
  });

  test('the descriptor ConfigMap holds exactly environment.json, which parses with the descriptor schema', async () => {
    const s = await exampleSynthesis('prod-kata');
    const json = s.files.find((f) => f.path === 'prod-kata/environment.json')!.content;
    const cm = s.objects.find((o) => o.object.kind === 'ConfigMap' && o.object.metadata?.name === DESCRIPTOR_CONFIGMAP)!
      .object as unknown as { data: Record<string, string> };
    expect(cm.data['environment.json']).toBe(json);
    const d = parseEnvironmentDescriptor(JSON.parse(json));
    expect(d.release).toMatchObject({
      tag: 'v1.0.3',
      commit: '527d9346fe1d237dea5c003f3c720531c7bab1df',
      family: 'v1.0',
    });
    expect(
      d.templates.map((t) => `${t.namespace}/${t.name}:${t.runtimeClassName}:${t.networkPolicyManagement}`),
    ).toEqual(['sandboxes/agent:kata-qemu:Unmanaged', 'sandboxes/shell:kata-qemu:Unmanaged']);
    expect(d.warmPools).toEqual([
      { namespace: 'sandboxes', name: 'agent-pool', template: 'agent', replicas: 3, updateStrategy: 'Recreate' },
    ]);
    expect(d.router).toBeNull();
    expect(d.networkPolicies.map((np) => [np.name, np.ingressFrom, np.egress.map((e) => e.description)])).toEqual([
      ['agent-sandbox-policy', [], ['package proxy', 'artifact store']],
      ['shell-sandbox-policy', [], ['package proxy', 'artifact store']],
    ]);
    expect(d.capabilities).toContainEqual({ capability: 'warm-pool/sandboxes/agent-pool', required: 'verified' });
    expect(d.capabilities).toContainEqual({ capability: 'suspend-resume', required: 'compatible' });
    expect(d.images['controller']).toBe('registry.example.internal/k8s/agent-sandbox/agent-sandbox-controller:v1.0.3');
  });

  test('two independent runs give byte-identical files (case synth-determinism)', async () => {
    const [a, b] = [await synthExample('prod-kata'), await synthExample('prod-kata')];
    expect(fileHashes(a)).toEqual(fileHashes(b));
  });

  test.each(['dev-gvisor', 'prod-kata'] as ExampleName[])(
    '%s matches its golden file (own objects in full, upstream objects by digest)',
    async (name) => {
      const golden = goldenOf(await exampleSynthesis(name));
      const path = join(GOLDEN_DIR, `${name}.json`);
      if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(path, `${JSON.stringify(golden, null, 2)}\n`);
      expect(existsSync(path)).toBe(true); // regenerate with UPDATE_GOLDEN=1 after reviewing the change
      expect(golden).toEqual(JSON.parse(readFileSync(path, 'utf8')));
    },
  );
});

describe('synthesizeEnvironment checks', () => {
  test('a custom object with an unknown field fails schema validation with its construct path', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'bad', { install: false });
    new ApiObject(env, 'raw-pool', {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'p', namespace: 'agent-sandboxes' },
      spec: { replicas: 1, sandboxTemplateRef: { name: 't' }, updateStrategy: { typ: 'Recreate' } },
    });
    const err = (() => {
      try {
        synthesizeEnvironment(env);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(SchemaViolationError);
    expect((err as SchemaViolationError).reason).toBe('SchemaViolation');
    expect((err as SchemaViolationError).violations).toEqual([
      expect.objectContaining({
        path: 'bad/raw-pool',
        object: {
          group: 'extensions.agents.x-k8s.io',
          kind: 'SandboxWarmPool',
          namespace: 'agent-sandboxes',
          name: 'p',
        },
        field: expect.stringMatching(/^spec\.updateStrategy(\.typ)?$/),
        reason: 'UnknownField',
      }),
    ]);
  });

  test('constructs write only v1beta1 custom objects on v0.5.6', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'env', { install: false });
    const rc = env.addRuntimeClass('g', { preset: 'gvisor', allNodes: true });
    env.addWarmPool('pool', { template: env.addTemplate('t', { runtimeClass: rc, podSpec: podSpec() }) });
    const s = synthesizeEnvironment(env);
    const custom = s.objects.filter((o) => o.object.apiVersion.includes('agents.x-k8s.io'));
    expect(custom.map((o) => o.object.apiVersion)).toEqual([
      'extensions.agents.x-k8s.io/v1beta1',
      'extensions.agents.x-k8s.io/v1beta1',
    ]);
  });

  test('two objects with the same identity are refused, both paths named', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'dup', { install: false });
    const rc = env.addRuntimeClass('g1', { preset: 'gvisor', allNodes: true });
    env.addRuntimeClass('g2', { preset: 'gvisor', scheduling: { nodeSelector: { a: 'b' } } });
    void rc;
    const err = thrownBy(() => synthesizeEnvironment(env), DuplicateObjectError, 'DuplicateObject');
    expect(err.duplicates).toEqual([
      {
        object: { group: 'node.k8s.io', kind: 'RuntimeClass', name: 'gvisor' },
        paths: [expect.stringMatching(/^dup\/g1\/Resource/), expect.stringMatching(/^dup\/g2\/Resource/)],
      },
    ]);
  });

  test('a construct validation problem stops synthesis with the path', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'conf', { install: false });
    const rc = env.addRuntimeClass('g', { preset: 'gvisor', allNodes: true });
    const t = env.addTemplate('t', { runtimeClass: rc, podSpec: podSpec(), networkPolicyManagement: 'Managed' });
    env.addNetworkPolicy('np', { template: t });
    const err = thrownBy(() => synthesizeEnvironment(env), EnvironmentInvalidError, 'EnvironmentInvalid');
    // one problem, at the template's construct path
    expect(err.problems.map((p) => [p.path, p.reason])).toEqual([['conf/t', 'Conflict']]);
  });

  test('YAML is 1.1-quoted, keys sorted, list order kept', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'yaml', { install: false });
    const rc = env.addRuntimeClass('g', { preset: 'gvisor', allNodes: true });
    env.addTemplate('t', {
      runtimeClass: rc,
      podSpec: podSpec(undefined, {
        env: [
          { name: 'Z', value: 'on' },
          { name: 'A', value: 'yes' },
        ],
      }),
    });
    const file = synthesizeEnvironment(env).files.find((f) => f.path === 'yaml/06-templates.yaml')!.content;
    expect(file).toContain('value: "on"');
    expect(file).toContain('value: "yes"');
    const tmpl = parse(file.replace(/^---\n/, '')) as {
      spec: { podTemplate: { spec: { containers: Array<{ env: Array<{ name: string }> }> } } };
    };
    expect(tmpl.spec.podTemplate.spec.containers[0]!.env.map((e) => e.name)).toEqual(['Z', 'A']);
    expect(Object.keys(tmpl)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
  });

  test('objects that share a reference are written in full, without YAML anchors', () => {
    const shared = { ports: [{ port: 53, protocol: 'UDP' }] };
    const text = yamlDocument({ a: shared, b: shared });
    expect(text).not.toMatch(/[&*]a1/);
    expect(parse(text)).toEqual({ a: shared, b: shared });
  });

  test('the CRDs written are the pinned upstream CRDs plus only AgentPlane labels and annotations', async () => {
    const s = await exampleSynthesis('dev-gvisor');
    const crds = parseAllDocuments(s.files.find((f) => f.path === 'dev-gvisor/00-crds.yaml')!.content).map(
      (d) => d.toJS() as Record<string, any>,
    );
    expect(crds).toHaveLength(4);
    for (const crd of crds) {
      const file = Object.values(s.release.facts.crds).find((c) => c.crdName === crd.metadata.name)!.file;
      const upstream = s.release.objects.get(file)![0] as Record<string, any>;
      const ours = (key: string) =>
        key.startsWith('agentplane.dev/') ||
        key.startsWith('app.kubernetes.io/') ||
        key.startsWith('argocd.argoproj.io/');
      const strip = (m: Record<string, string> | undefined) =>
        Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !ours(k)));
      expect({
        ...crd,
        metadata: { ...crd.metadata, labels: strip(crd.metadata.labels), annotations: strip(crd.metadata.annotations) },
      }).toEqual({
        ...upstream,
        metadata: {
          ...upstream.metadata,
          labels: strip(upstream.metadata.labels),
          annotations: strip(upstream.metadata.annotations),
        },
      });
    }
  });
});
