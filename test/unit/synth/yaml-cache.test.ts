import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadRelease, type KubeObject } from '../../../src/releases/index.js';
import { yamlDocument, yamlStream } from '../../../src/synth/index.js';
import { SHARED_MIRROR, tempDir } from '../releases/helpers.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SANDBOX_CRD = 'k8s/crds/agents.x-k8s.io_sandboxes.yaml';

/** The emitted YAML of the v0.5.6 Sandbox CRD, computed in a fresh process (no in-memory copy) with `cacheRoot`. */
function streamInFreshProcess(cacheRoot: string): string {
  const script = `
    const { loadRelease } = await import(${JSON.stringify(join(ROOT, 'src/releases/index.ts'))});
    const { yamlStream } = await import(${JSON.stringify(join(ROOT, 'src/synth/yaml.ts'))});
    const r = await loadRelease('v0.5.6', { mirror: ${JSON.stringify(SHARED_MIRROR)}, cacheDir: ${JSON.stringify(cacheRoot)} });
    process.stdout.write(yamlStream(r.objects.get(${JSON.stringify(SANDBOX_CRD)}), { cacheRoot: ${JSON.stringify(cacheRoot)} }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

describe('large documents are emitted once and kept in the derived cache', () => {
  test('the cached text is byte-identical to yamlDocument; a damaged entry is emitted again and rewritten', async () => {
    const cache = tempDir('yaml');
    try {
      const release = await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
      const crds = release.objects.get(SANDBOX_CRD)!;
      const expected = crds.map((o) => `---\n${yamlDocument(o)}`).join('');
      expect(expected.length).toBeGreaterThan(300_000);
      expect(yamlStream(crds, { cacheRoot: cache.dir })).toBe(expected);
      const dir = join(cache.dir, '.derived', 'yaml-documents');
      const [entry] = readdirSync(dir);
      expect(readdirSync(dir)).toHaveLength(1);
      const entryPath = join(dir, entry!);
      const intact = readFileSync(entryPath);

      expect(streamInFreshProcess(cache.dir)).toBe(expected); // read from the entry

      const bytes = Buffer.from(intact);
      bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0x01;
      writeFileSync(entryPath, bytes);
      expect(streamInFreshProcess(cache.dir)).toBe(expected); // damaged: emitted again
      expect(readFileSync(entryPath)).toEqual(intact); // and rewritten
    } finally {
      cache.cleanup();
    }
  });

  test('a changed document gets its own text; documents JSON does not describe exactly are never cached', async () => {
    const cache = tempDir('yaml');
    try {
      const release = await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
      const crd = structuredClone(release.objects.get(SANDBOX_CRD)![0]!) as KubeObject;
      const before = yamlStream([crd], { cacheRoot: cache.dir });
      crd.metadata!.annotations = { 'argocd.argoproj.io/sync-wave': '0' };
      const after = yamlStream([crd], { cacheRoot: cache.dir });
      expect(after).not.toBe(before);
      expect(after).toBe(`---\n${yamlDocument(crd)}`);

      const dated = { ...crd, spec: { ...(crd.spec as object), at: new Date(0) } };
      const holes = { ...crd, spec: { ...(crd.spec as object), list: [1, undefined] } };
      const dir = join(cache.dir, '.derived', 'yaml-documents');
      const entries = readdirSync(dir).length;
      expect(yamlStream([dated], { cacheRoot: cache.dir })).toBe(`---\n${yamlDocument(dated)}`);
      expect(yamlStream([holes], { cacheRoot: cache.dir })).toBe(`---\n${yamlDocument(holes)}`);
      expect(readdirSync(dir)).toHaveLength(entries);
      expect(existsSync(join(cache.dir, 'v0.5.6', SANDBOX_CRD))).toBe(true);
    } finally {
      cache.cleanup();
    }
  });

  test('with a cache root, a small document is kept too, and its cached text is the emitted one', () => {
    const cache = tempDir('yaml');
    try {
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { on: 'yes', n: '1' } };
      const expected = `---\n${yamlDocument(cm)}`;
      expect(yamlStream([cm], { cacheRoot: cache.dir })).toBe(expected);
      const dir = join(cache.dir, '.derived', 'yaml-documents');
      expect(readdirSync(dir)).toHaveLength(1);
      const entryPath = join(dir, readdirSync(dir)[0]!);
      // the entry, not the emitter, answers the next call: a payload changed with a valid header is what comes back
      const text = readFileSync(entryPath, 'utf8');
      const header = JSON.parse(text.slice(0, text.indexOf('\n'))) as { key: string };
      const payload = JSON.stringify('kept: true\n');
      const sha = createHash('sha256').update(payload).digest('hex');
      writeFileSync(entryPath, `${JSON.stringify({ key: header.key, payloadSha256: sha })}\n${payload}`);
      expect(yamlStream([cm], { cacheRoot: cache.dir })).toBe('---\nkept: true\n');
      expect(yamlStream([cm])).toBe(expected); // without a cache root: emitted
    } finally {
      cache.cleanup();
    }
  });
});
