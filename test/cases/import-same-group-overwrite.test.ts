/**
 * Case import-same-group-overwrite: the three extension CRDs ship as separate files of one
 * group; imported one input per file, cdk8s writes one module per group and only the last kind survives. The import step
 * (scripts/import-bindings.ts) groups the CRDs of entries sharing a prefix by (group, version) across files, refuses
 * one group/version/kind defined twice with different schemas (naming both inputs) and refuses an entry without a CRD.
 * The committed bindings are checked kind by kind in test/unit/releases/bindings.test.ts.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BindingsError, generateBindings } from '../../scripts/import-bindings.js';
import { SHARED_MIRROR, tempDir } from '../unit/releases/helpers.js';

const work = tempDir('case18');
const opts = { mirror: SHARED_MIRROR, cacheDir: join(work.dir, 'cache') };
afterAll(() => work.cleanup());

const EXT_FILES = ['sandboxclaims', 'sandboxtemplates', 'sandboxwarmpools'].map(
  (k) => `k8s/crds/extensions.agents.x-k8s.io_${k}.yaml`,
);
const yamlOf = (entries: readonly string[]): string => `imports:\n${entries.map((e) => `  - ${e}\n`).join('')}`;

async function refusal(cdk8sYaml: string): Promise<BindingsError> {
  const err = await generateBindings(cdk8sYaml, join(work.dir, 'never'), opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BindingsError);
  return err as BindingsError;
}

describe('case import-same-group-overwrite', () => {
  test('three extension files under one prefix (no aliases) give one module exporting all three kinds at both versions', async () => {
    const out = join(work.dir, 'ext');
    await generateBindings(yamlOf([...EXT_FILES, EXT_FILES[0]!].map((f) => `ext:=releases/v0.5.6/${f}`)), out, opts);
    expect(readdirSync(out)).toEqual(['ext-extensions.agents.x-k8s.io.ts']);
    const source = readFileSync(join(out, 'ext-extensions.agents.x-k8s.io.ts'), 'utf8');
    const classes = [...source.matchAll(/^export class (\w+) extends ApiObject \{/gm)].map((m) => m[1]).sort();
    expect(classes).toEqual([
      'SandboxClaim',
      'SandboxClaimV1Alpha1',
      'SandboxTemplate',
      'SandboxTemplateV1Alpha1',
      'SandboxWarmPool',
      'SandboxWarmPoolV1Alpha1',
    ]);
  }, 180_000);

  test('two inputs defining agents.x-k8s.io/v1beta1 Sandbox with different schemas are refused, naming both', async () => {
    const err = await refusal(
      yamlOf([
        'core:=releases/v0.5.0/k8s/crds/agents.x-k8s.io_sandboxes.yaml',
        'core:=releases/v0.5.6/k8s/crds/agents.x-k8s.io_sandboxes.yaml',
      ]),
    );
    expect(err.reason).toBe('conflicting-schema');
    expect(err.subject).toEqual({
      module: 'core',
      kind: 'agents.x-k8s.io/v1beta1 Sandbox',
      sources: ['v0.5.0/k8s/crds/agents.x-k8s.io_sandboxes.yaml', 'v0.5.6/k8s/crds/agents.x-k8s.io_sandboxes.yaml'],
    });
  }, 60_000);

  test('the same CRDs under different prefixes do not collide (one module each)', async () => {
    const out = join(work.dir, 'two');
    await generateBindings(
      yamlOf([
        'a:=releases/v0.5.0/k8s/crds/agents.x-k8s.io_sandboxes.yaml',
        'b:=releases/v0.5.6/k8s/crds/agents.x-k8s.io_sandboxes.yaml',
      ]),
      out,
      opts,
    );
    expect(readdirSync(out).sort()).toEqual(['a-agents.x-k8s.io.ts', 'b-agents.x-k8s.io.ts']);
  }, 180_000);

  test('an entry whose file holds no CRD is refused', async () => {
    const err = await refusal(yamlOf(['ctl:=releases/v0.5.6/k8s/controller.yaml']));
    expect(err.reason).toBe('no-crd');
    expect(err.subject).toMatchObject({ module: 'ctl', sources: ['v0.5.6/k8s/controller.yaml'] });
    expect(err.subject.found?.[0]).toBe('Namespace/agent-sandbox-system');
  }, 60_000);
});
