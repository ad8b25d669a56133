/**
 * Input size is not bounded by the call stack: one manifest file of 200,000 documents (and a List of 200,000 items)
 * is read and diffed whole. Before, spreading such arrays into `push(...)` threw "Maximum call stack size exceeded".
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { diffManifests, readManifestDir } from '../../../src/diff/index.js';

const N = 200_000;
const configMap = (i: number, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\n  namespace: agents\ndata:\n  k: "${value}"\n`;

function dirWith(file: string, text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-large-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, file), text);
  return dir;
}

test('a 200,000-document file is read and diffed: one changed object found', async () => {
  const docs = (changed: number): string =>
    Array.from({ length: N }, (_, i) => configMap(i, i === changed ? 'new' : 'old')).join('---\n');
  const base = await readManifestDir(dirWith('all.yaml', docs(-1)));
  const head = await readManifestDir(dirWith('all.yaml', docs(123_456)));
  expect(base.documents).toHaveLength(N);
  const result = diffManifests(base, head);
  expect(result.objects.map((o) => [o.kind, o.name, o.change])).toEqual([['ConfigMap', 'c123456', 'changed']]);
  expect(result.counts).toEqual({ added: 0, removed: 0, changed: 1, unchanged: N - 1 });
}, 120_000);

test('a List of 200,000 items is read as 200,000 objects', async () => {
  const items = Array.from({ length: N }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `c${i}`, namespace: 'agents' },
  }));
  const set = await readManifestDir(dirWith('list.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items })));
  expect(set.objects).toHaveLength(N);
}, 120_000);
