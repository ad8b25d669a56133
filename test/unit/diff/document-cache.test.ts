/**
 * The document cache shared by BASE and HEAD: a document whose text is the same on both sides is parsed once and
 * the comparison skips the pair without normalizing. What must not change: the result (a changed CRD default still
 * shows on objects whose text did not change), parse error positions, files with directives, and environments that
 * hold the same document.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  diffManifests,
  ManifestParseError,
  parseManifests,
  readManifestDir,
  splitDocuments,
  type DocumentCache,
} from '../../../src/diff/index.js';

const pool = (name: string, extra = ''): string =>
  `apiVersion: example.dev/v1\nkind: Pool\nmetadata:\n  name: ${name}\n  namespace: agents\nspec:\n  template: t${extra}\n`;

/** A CRD of kind Pool whose `spec.replicas` defaults to `replicas`. */
const crd = (replicas: number): string => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: pools.example.dev
spec:
  group: example.dev
  names: {kind: Pool, plural: pools}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              template: {type: string}
              replicas: {type: integer, default: ${replicas}}
`;

describe('document cache', () => {
  it('parses a document that is the same text on both sides once, and both sides hold the same object', () => {
    const documents: DocumentCache = new Map();
    const base = parseManifests('base.yaml', `---\n${pool('a')}---\n${pool('b')}`, documents);
    const head = parseManifests('head.yaml', `---\n${pool('a')}---\n${pool('b', '\n  replicas: 2')}`, documents);
    expect(documents.size).toBe(3);
    expect(head[0]).toBe(base[0]);
    expect(head[1]).not.toBe(base[1]);
    expect(head[1]!.spec).toEqual({ template: 't', replicas: 2 });
  });

  it('gives the same objects as a parse without the cache, including a first document without ---, comments and a List', () => {
    const text = `${pool('a')}# between\n---\n# only a comment\n--- {apiVersion: v1, kind: ConfigMapList, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}]}\n---\n${pool('b')}`;
    expect(parseManifests('x.yaml', text, new Map())).toEqual(parseManifests('x.yaml', text));
    expect(parseManifests('x.yaml', text).map((o) => o.metadata?.name)).toEqual(['a', 'c', 'b']);
  });

  it('reports a parse error at its line in the file, not in the document', () => {
    const text = `---\n${pool('a')}---\n${pool('b')}  bad: [unclosed\n`;
    // js-yaml reports an unclosed flow sequence where the text ends: the line after `bad:` (1-based: index + 2).
    const line = text.split('\n').findIndex((l) => l.includes('bad:')) + 2;
    for (const cache of [new Map(), undefined]) {
      let error: unknown;
      try {
        parseManifests('x.yaml', text, cache);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ManifestParseError);
      expect((error as ManifestParseError).reason).toBe('ManifestUnparsable');
      expect([(error as ManifestParseError).file, (error as ManifestParseError).line]).toEqual(['x.yaml', line]);
      expect((error as ManifestParseError).column).toBeGreaterThan(0);
    }
  });

  it('splits at document-start lines, each document with its first line, whatever ends the lines', () => {
    for (const eol of ['\n', '\r\n']) {
      const text = ['a: 1', '---', 'b: 2', 'c: 3', '--- ', 'd: 4', '----', 'e: 5', '---', ''].join(eol);
      const docs = splitDocuments('x.yaml', text);
      expect(docs.map((d) => [d.line, d.text.split(eol)[0]])).toEqual([
        [0, 'a: 1'],
        [1, '---'],
        [4, '--- '],
        [8, '---'],
      ]);
    }
  });

  it('parses a file with a %YAML directive or a ... document end whole, as before', () => {
    const documents: DocumentCache = new Map();
    const text = `%YAML 1.2\n---\n${pool('a')}...\n---\n${pool('b')}`;
    expect(parseManifests('x.yaml', text, documents).map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    expect(documents.size).toBe(0);
  });

  it('finds a ... document end below the first line, and splits a file whose % and ... are inside values', () => {
    const documents: DocumentCache = new Map();
    const ended = `---\n${pool('a')}...\n---\n${pool('b')}`;
    expect(parseManifests('x.yaml', ended, documents).map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    expect(documents.size).toBe(0);
    const inValues = `---\n${pool('a')}data:\n  share: 50%\n  note: wait...\n---\n${pool('b')}`;
    expect(parseManifests('x.yaml', inValues, documents).map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    expect(documents.size).toBe(2);
  });

  it('still compares an object whose text did not change when the CRD default it is filled from changed', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-doccache-'));
    for (const [side, replicas] of [
      ['base', 1],
      ['head', 3],
    ] as const) {
      mkdirSync(path.join(dir, side));
      writeFileSync(path.join(dir, side, 'all.yaml'), `---\n${crd(replicas)}---\n${pool('a')}`);
    }
    return (async () => {
      const documents: DocumentCache = new Map();
      const [base, head] = [
        await readManifestDir(path.join(dir, 'base'), 'base', { documents }),
        await readManifestDir(path.join(dir, 'head'), 'head', { documents }),
      ];
      expect(head.objects[1]).toBe(base.objects[1]);
      const report = diffManifests(base, head);
      const poolDiff = report.objects.find((o) => o.kind === 'Pool');
      expect(poolDiff?.fields).toEqual([{ path: 'spec.replicas', op: 'changed', before: 1, after: 3 }]);
      expect(report.counts).toEqual({ added: 0, removed: 0, changed: 2, unchanged: 0 });
    })();
  });

  it('keeps one shared document apart per environment', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-doccache-envs-'));
    for (const env of ['dev', 'prod']) {
      mkdirSync(path.join(dir, env));
      writeFileSync(
        path.join(dir, env, 'environment.json'),
        JSON.stringify({ apiVersion: 'agentplane.dev/v1alpha1', kind: 'EnvironmentDescriptor', name: env }),
      );
      writeFileSync(path.join(dir, env, '01.yaml'), `---\n${pool('a')}`);
    }
    const documents: DocumentCache = new Map();
    const set = await readManifestDir(dir, dir, { documents });
    expect(set.objects[0]).toBe(set.objects[1]);
    expect(set.environments).toEqual(['dev', 'prod']);
    const onlyDev = { label: 'dev-only', objects: [set.objects[0]!], environments: ['dev'] };
    const report = diffManifests(onlyDev, set);
    expect(report.objects.map((o) => [o.key, o.change])).toEqual([['prod:example.dev/v1/Pool/agents/a', 'added']]);
  });
});
