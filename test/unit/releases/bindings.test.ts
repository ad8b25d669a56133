import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Testing } from 'cdk8s';
import * as core046 from '../../../imports/v046-agents.x-k8s.io.js';
import * as core056 from '../../../imports/v056-agents.x-k8s.io.js';
import * as ext046 from '../../../imports/v046-extensions.agents.x-k8s.io.js';
import * as ext056 from '../../../imports/v056-extensions.agents.x-k8s.io.js';
import { bindingEntries, generateBindings } from '../../../scripts/import-bindings.js';
import { releaseFacts } from '../../../src/releases/index.js';
import { SHARED_MIRROR, tempDir } from './helpers.js';

const CORE = 'agents.x-k8s.io';
const EXT = 'extensions.agents.x-k8s.io';

describe('generated CRD bindings (imports/)', () => {
  test.each([
    ['v0.5.6 Sandbox v1beta1', core056.Sandbox.GVK, `${CORE}/v1beta1`, 'Sandbox'],
    ['v0.5.6 Sandbox v1alpha1', core056.SandboxV1Alpha1.GVK, `${CORE}/v1alpha1`, 'Sandbox'],
    ['v0.5.6 SandboxClaim v1beta1', ext056.SandboxClaim.GVK, `${EXT}/v1beta1`, 'SandboxClaim'],
    ['v0.5.6 SandboxClaim v1alpha1', ext056.SandboxClaimV1Alpha1.GVK, `${EXT}/v1alpha1`, 'SandboxClaim'],
    ['v0.5.6 SandboxTemplate v1beta1', ext056.SandboxTemplate.GVK, `${EXT}/v1beta1`, 'SandboxTemplate'],
    ['v0.5.6 SandboxTemplate v1alpha1', ext056.SandboxTemplateV1Alpha1.GVK, `${EXT}/v1alpha1`, 'SandboxTemplate'],
    ['v0.5.6 SandboxWarmPool v1beta1', ext056.SandboxWarmPool.GVK, `${EXT}/v1beta1`, 'SandboxWarmPool'],
    ['v0.5.6 SandboxWarmPool v1alpha1', ext056.SandboxWarmPoolV1Alpha1.GVK, `${EXT}/v1alpha1`, 'SandboxWarmPool'],
    ['v0.4.6 Sandbox v1alpha1', core046.Sandbox.GVK, `${CORE}/v1alpha1`, 'Sandbox'],
    ['v0.4.6 SandboxClaim v1alpha1', ext046.SandboxClaim.GVK, `${EXT}/v1alpha1`, 'SandboxClaim'],
    ['v0.4.6 SandboxTemplate v1alpha1', ext046.SandboxTemplate.GVK, `${EXT}/v1alpha1`, 'SandboxTemplate'],
    ['v0.4.6 SandboxWarmPool v1alpha1', ext046.SandboxWarmPool.GVK, `${EXT}/v1alpha1`, 'SandboxWarmPool'],
  ])('%s class has the static GVK of its kind and version', (_name, gvk, apiVersion, kind) => {
    expect(gvk).toEqual({ apiVersion, kind });
  });

  test('every kind of every version of every imported CRD has exactly one class, in the module of its release and group (case import-same-group-overwrite)', () => {
    const gvks = (mod: Record<string, unknown>) =>
      Object.values(mod)
        .filter((v): v is { GVK: { apiVersion: string; kind: string } } => typeof v === 'function' && 'GVK' in v)
        .map((c) => `${c.GVK.apiVersion}/${c.GVK.kind}`)
        .sort();
    const modules = {
      'v0.4.6': { [CORE]: core046, [EXT]: ext046 },
      'v0.5.6': { [CORE]: core056, [EXT]: ext056 },
    } as const;
    for (const tag of ['v0.4.6', 'v0.5.6'] as const) {
      for (const group of [CORE, EXT] as const) {
        const expected = Object.values(releaseFacts(tag).crds)
          .filter((c) => c.group === group)
          .flatMap((c) => c.versions.map((v) => `${group}/${v.name}/${c.kind}`))
          .sort();
        expect({ tag, group, classes: gvks(modules[tag][group] as Record<string, unknown>) }).toEqual({
          tag,
          group,
          classes: expected,
        });
      }
    }
    expect(gvks(ext056)).toHaveLength(6); // three kinds × v1alpha1, v1beta1: none overwritten
    expect(gvks(core046)).toEqual([`${CORE}/v1alpha1/Sandbox`]);
  });

  test('the classes synthesize their kind, and v1beta1-only fields exist only in v0.5.6 classes', () => {
    const chart = Testing.chart();
    new ext056.SandboxWarmPool(chart, 'pool', {
      metadata: { name: 'pool' },
      spec: {
        replicas: 2,
        sandboxTemplateRef: { name: 't' },
        updateStrategy: { type: ext056.SandboxWarmPoolSpecUpdateStrategyType.RECREATE },
      },
    });
    expect(Testing.synth(chart)).toEqual([
      {
        apiVersion: `${EXT}/v1beta1`,
        kind: 'SandboxWarmPool',
        metadata: { name: 'pool' },
        spec: { replicas: 2, sandboxTemplateRef: { name: 't' }, updateStrategy: { type: 'Recreate' } },
      },
    ]);
    const source056 = readFileSync(join(process.cwd(), 'imports/v056-agents.x-k8s.io.ts'), 'utf8');
    const source046 = readFileSync(join(process.cwd(), 'imports/v046-agents.x-k8s.io.ts'), 'utf8');
    expect(source056).toContain('readonly operatingMode?: SandboxSpecOperatingMode;');
    expect(source046).not.toContain('operatingMode');
  });

  test('cdk8s.yaml has one module prefix per release and names pinned CRD files only; imports/ holds one module per prefix and group', () => {
    const entries = bindingEntries(readFileSync(join(process.cwd(), 'cdk8s.yaml'), 'utf8'));
    expect(entries.map((e) => e.prefix)).toEqual(['v056', 'v056', 'v056', 'v056', 'v046', 'v046', 'v046', 'v046']);
    for (const e of entries) {
      const crdFiles = Object.values(releaseFacts(e.tag).crds).map((c) => c.file);
      expect(crdFiles).toContain(e.path);
    }
    const expected = [
      ...new Set(entries.map((e) => `${e.prefix}-${e.path.includes('/agents.x-k8s.io_') ? CORE : EXT}.ts`)),
    ].sort();
    expect(readdirSync(join(process.cwd(), 'imports')).sort()).toEqual(expected);
  });

  test('the committed imports/ are exactly what `npm run import` generates from the verified release files', async () => {
    const tmp = tempDir('bindings');
    try {
      const out = join(tmp.dir, 'imports');
      const report = await generateBindings(readFileSync(join(process.cwd(), 'cdk8s.yaml'), 'utf8'), out, {
        mirror: SHARED_MIRROR,
        cacheDir: join(tmp.dir, 'cache'),
      });
      expect(report.lines[0]).toBe(
        'v056 <- v0.5.6/k8s/crds/agents.x-k8s.io_sandboxes.yaml: kept 1 CustomResourceDefinition(s), skipped 0 other document(s) and 0 empty document(s)',
      );
      const committed = readdirSync(join(process.cwd(), 'imports')).sort();
      expect(readdirSync(out).sort()).toEqual(committed);
      for (const f of committed) {
        expect({ f, same: readFileSync(join(out, f)).equals(readFileSync(join(process.cwd(), 'imports', f))) }).toEqual(
          { f, same: true },
        );
      }
    } finally {
      tmp.cleanup();
    }
  }, 120_000);
});
