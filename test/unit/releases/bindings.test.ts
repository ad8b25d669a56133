import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Testing } from 'cdk8s';
import * as sandbox046 from '../../../imports/sandbox-v046-agents.x-k8s.io.js';
import * as sandbox056 from '../../../imports/sandbox-v056-agents.x-k8s.io.js';
import * as claim046 from '../../../imports/sandboxclaim-v046-extensions.agents.x-k8s.io.js';
import * as claim056 from '../../../imports/sandboxclaim-v056-extensions.agents.x-k8s.io.js';
import * as template046 from '../../../imports/sandboxtemplate-v046-extensions.agents.x-k8s.io.js';
import * as template056 from '../../../imports/sandboxtemplate-v056-extensions.agents.x-k8s.io.js';
import * as pool046 from '../../../imports/sandboxwarmpool-v046-extensions.agents.x-k8s.io.js';
import * as pool056 from '../../../imports/sandboxwarmpool-v056-extensions.agents.x-k8s.io.js';
import { bindingEntries, generateBindings } from '../../../scripts/import-bindings.js';
import { releaseFacts } from '../../../src/releases/index.js';
import { SHARED_MIRROR, tempDir } from './helpers.js';

const CORE = 'agents.x-k8s.io';
const EXT = 'extensions.agents.x-k8s.io';

describe('generated CRD bindings (imports/)', () => {
  test.each([
    ['v0.5.6 Sandbox v1beta1', sandbox056.Sandbox.GVK, `${CORE}/v1beta1`, 'Sandbox'],
    ['v0.5.6 Sandbox v1alpha1', sandbox056.SandboxV1Alpha1.GVK, `${CORE}/v1alpha1`, 'Sandbox'],
    ['v0.5.6 SandboxClaim v1beta1', claim056.SandboxClaim.GVK, `${EXT}/v1beta1`, 'SandboxClaim'],
    ['v0.5.6 SandboxClaim v1alpha1', claim056.SandboxClaimV1Alpha1.GVK, `${EXT}/v1alpha1`, 'SandboxClaim'],
    ['v0.5.6 SandboxTemplate v1beta1', template056.SandboxTemplate.GVK, `${EXT}/v1beta1`, 'SandboxTemplate'],
    ['v0.5.6 SandboxTemplate v1alpha1', template056.SandboxTemplateV1Alpha1.GVK, `${EXT}/v1alpha1`, 'SandboxTemplate'],
    ['v0.5.6 SandboxWarmPool v1beta1', pool056.SandboxWarmPool.GVK, `${EXT}/v1beta1`, 'SandboxWarmPool'],
    ['v0.5.6 SandboxWarmPool v1alpha1', pool056.SandboxWarmPoolV1Alpha1.GVK, `${EXT}/v1alpha1`, 'SandboxWarmPool'],
    ['v0.4.6 Sandbox v1alpha1', sandbox046.Sandbox.GVK, `${CORE}/v1alpha1`, 'Sandbox'],
    ['v0.4.6 SandboxClaim v1alpha1', claim046.SandboxClaim.GVK, `${EXT}/v1alpha1`, 'SandboxClaim'],
    ['v0.4.6 SandboxTemplate v1alpha1', template046.SandboxTemplate.GVK, `${EXT}/v1alpha1`, 'SandboxTemplate'],
    ['v0.4.6 SandboxWarmPool v1alpha1', pool046.SandboxWarmPool.GVK, `${EXT}/v1alpha1`, 'SandboxWarmPool'],
  ])('%s class has the static GVK of its kind and version', (_name, gvk, apiVersion, kind) => {
    expect(gvk).toEqual({ apiVersion, kind });
  });

  test('v0.4.6 modules have no v1beta1 classes; each module has exactly one class per served version', () => {
    const apiObjectClasses = (mod: Record<string, unknown>) =>
      Object.entries(mod).filter(([, v]) => typeof v === 'function' && 'GVK' in (v as object)).map(([k]) => k).sort();
    expect(apiObjectClasses(sandbox046)).toEqual(['Sandbox']);
    expect(apiObjectClasses(sandbox056)).toEqual(['Sandbox', 'SandboxV1Alpha1']);
    expect(apiObjectClasses(pool056)).toEqual(['SandboxWarmPool', 'SandboxWarmPoolV1Alpha1']);
  });

  test('the classes synthesize their kind, and v1beta1-only fields exist only in v0.5.6 classes', () => {
    const chart = Testing.chart();
    new pool056.SandboxWarmPool(chart, 'pool', {
      metadata: { name: 'pool' },
      spec: { replicas: 2, sandboxTemplateRef: { name: 't' }, updateStrategy: { type: pool056.SandboxWarmPoolSpecUpdateStrategyType.RECREATE } },
    });
    expect(Testing.synth(chart)).toEqual([{
      apiVersion: `${EXT}/v1beta1`, kind: 'SandboxWarmPool', metadata: { name: 'pool' },
      spec: { replicas: 2, sandboxTemplateRef: { name: 't' }, updateStrategy: { type: 'Recreate' } },
    }]);
    const source056 = readFileSync(join(process.cwd(), 'imports/sandbox-v056-agents.x-k8s.io.ts'), 'utf8');
    const source046 = readFileSync(join(process.cwd(), 'imports/sandbox-v046-agents.x-k8s.io.ts'), 'utf8');
    expect(source056).toContain('readonly operatingMode?: SandboxSpecOperatingMode;');
    expect(source046).not.toContain('operatingMode');
  });

  test('cdk8s.yaml has one module prefix per CRD and names pinned CRD files only; imports/ holds exactly those modules', () => {
    const entries = bindingEntries(readFileSync(join(process.cwd(), 'cdk8s.yaml'), 'utf8'));
    expect(entries.map((e) => e.prefix)).toEqual([
      'sandbox-v056', 'sandboxclaim-v056', 'sandboxtemplate-v056', 'sandboxwarmpool-v056',
      'sandbox-v046', 'sandboxclaim-v046', 'sandboxtemplate-v046', 'sandboxwarmpool-v046',
    ]);
    for (const e of entries) {
      const crdFiles = Object.values(releaseFacts(e.tag).crds).map((c) => c.file);
      expect(crdFiles).toContain(e.path);
    }
    const expected = entries.map((e) => `${e.prefix}-${e.path.includes('/agents.x-k8s.io_') ? CORE : EXT}.ts`).sort();
    expect(readdirSync(join(process.cwd(), 'imports')).sort()).toEqual(expected);
  });

  test('the committed imports/ are exactly what `npm run import` generates from the verified release files', async () => {
    const tmp = tempDir('bindings');
    try {
      const out = join(tmp.dir, 'imports');
      const report = await generateBindings(readFileSync(join(process.cwd(), 'cdk8s.yaml'), 'utf8'), out, { mirror: SHARED_MIRROR, cacheDir: join(tmp.dir, 'cache') });
      expect(report.lines[0]).toBe('sandbox-v056 <- v0.5.6/k8s/crds/agents.x-k8s.io_sandboxes.yaml: kept 1 CustomResourceDefinition(s), skipped 0 other document(s) and 0 empty document(s)');
      const committed = readdirSync(join(process.cwd(), 'imports')).sort();
      expect(readdirSync(out).sort()).toEqual(committed);
      for (const f of committed) {
        expect({ f, same: readFileSync(join(out, f)).equals(readFileSync(join(process.cwd(), 'imports', f))) }).toEqual({ f, same: true });
      }
    } finally {
      tmp.cleanup();
    }
  }, 120_000);
});
