/**
 * Large documents in a diff (CRDs): a shared CRD's scope is read from its text without parsing it (scanCrdScope),
 * and the values of a document over 64 KiB are kept in a derived entry (useParseCache) that a later process reads.
 * What must hold: the scanned scope is the parsed one, layouts the scanner does not read are parsed, a cached parse
 * gives the same report as parsing, a damaged entry is parsed again, and a parse error still names file and line.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CORE_SCHEMA, dump, loadAll } from 'js-yaml';
import { diffManifests, documentSet, ManifestParseError, splitDocuments } from '../../../src/diff/index.js';
import { scanCrdScope } from '../../../src/diff/document-identity.js';
import { useParseCache } from '../../../src/diff/sources.js';
import { thrownBy } from '../thrown.js';

/** A CRD of `kind` whose schema defaults `spec.mode`, padded with `pad` described properties (to pass 64 KiB). */
function crd(kind: string, scope: string, defaultMode: string, pad = 0): Record<string, unknown> {
  const plural = `${kind.toLowerCase()}s`;
  const padding = Object.fromEntries(
    Array.from({ length: pad }, (_, i) => [`p${i}`, { type: 'string', description: `padding field ${i} `.repeat(8) }]),
  );
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.dev` },
    spec: {
      group: 'example.dev',
      names: { kind, listKind: `${kind}List`, plural, shortNames: [plural], singular: kind.toLowerCase() },
      scope,
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { mode: { type: 'string', default: defaultMode }, size: { type: 'integer' }, ...padding },
                },
              },
            },
          },
        },
      ],
    },
  };
}
const widget = (name: string, size: number, mode?: string): Record<string, unknown> => ({
  apiVersion: 'example.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'agents' },
  spec: { size, ...(mode !== undefined ? { mode } : {}) },
});
const stream = (...objects: unknown[]): string =>
  objects.map((o) => `---\n${dump(o, { lineWidth: -1, noRefs: true })}`).join('');
const set = (label: string, text: string) => documentSet(label, splitDocuments('all.yaml', text));

describe('scanCrdScope', () => {
  it('reads group, kind and scope of the plain block layout, as the parser reads them', () => {
    for (const [text, scope] of [
      [stream(crd('Widget', 'Namespaced', 'a')), false],
      [stream(crd('Gadget', 'Cluster', 'a')), true],
      // kubectl's layout: sequence items at the key's indent
      [
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.dev\nspec:\n  group: example.dev\n  names:\n    kind: Gadget\n    plural: gadgets\n  scope: Cluster\n  versions:\n  - name: v1\n    served: true\n',
        true,
      ],
    ] as const) {
      const [obj] = loadAll(text, undefined, { schema: CORE_SCHEMA }) as Array<{
        spec: { group: string; names: { kind: string }; scope: string };
      }>;
      expect(scanCrdScope(text)).toEqual({ group: obj!.spec.group, kind: obj!.spec.names.kind, clusterScoped: scope });
      expect(obj!.spec.scope === 'Cluster').toBe(scope);
    }
  });

  it('skips nested lines without missing a child: deeper keys, comments and blank lines as the parser reads them', () => {
    const head =
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.dev\n';
    const deeper = '  versions:\n  - name: v1\n    scope: Namespaced\n    schema:\n      scope: Namespaced\n';
    for (const text of [
      `${head}spec:\n  group: example.dev\n${deeper}  names:\n    kind: Gadget\n    scope: Namespaced\n  scope: Cluster\n`,
      `${head}spec:\n  group: example.dev\n${deeper}\n# note\n   \n  names:\n    kind: Gadget\n\n  scope: Cluster\n`,
      `${head}spec:\n${deeper}  group: example.dev\n  names:\n\n    # c\n    kind: Gadget\n  scope: Cluster\n`,
    ]) {
      const [obj] = loadAll(text, undefined, { schema: CORE_SCHEMA }) as Array<{
        spec: { group: string; names: { kind: string }; scope: string };
      }>;
      expect(scanCrdScope(text)).toEqual({ group: obj!.spec.group, kind: obj!.spec.names.kind, clusterScoped: true });
    }
    // a child less indented than the first one, after deeper lines: not this layout
    const dedented = `${head}spec:\n  group: example.dev\n${deeper} scope: Cluster\n  names:\n    kind: Gadget\n`;
    expect(scanCrdScope(dedented)).toBeUndefined();
  });

  it('leaves every other layout to the parser', () => {
    const head =
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.dev\n';
    for (const text of [
      `${head}spec: {group: example.dev, names: {kind: Gadget}, scope: Cluster}\n`, // flow style
      `${head}spec:\n  group: example.dev\n  names: {kind: Gadget}\n  scope: Cluster\n`, // flow names
      `${head}spec:\n  group: example.dev\n  names:\n    kind: Gadget\n  scope: Cluster # c\n`, // comment after the value
      `${head}spec:\n  group: example.dev\n  names:\n    kind: Gadget\n  scope: Cluster\n  scope: Namespaced\n`, // repeated key
      `${head}spec:\n  group: example.dev\n  names:\n    kind: Gadget\n  scope: "Clu\\u0073ter"\n`, // escape
      `${head}spec:\n  group: example.dev\n  names:\n    kind: Gadget\n  scope: cluster\n`, // not a scope
      `${head}spec:\n  group: example.dev\n  names:\n    kind: Gadget\n`, // no scope
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nspec:\n  group: g\n  names:\n    kind: K\n  scope: Cluster\n', // not a CRD
    ])
      expect([text, scanCrdScope(text)]).toEqual([text, undefined]);
  });

  it('keys a shared object by the scanned scope: a stray namespace on a cluster-scoped kind is dropped', () => {
    const gadgetCrd = crd('Gadget', 'Cluster', 'a');
    const gadget = { apiVersion: 'example.dev/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'x' }, spec: {} };
    const changed = { ...gadget, metadata: { name: 'g' }, spec: { size: 2 } };
    const report = diffManifests(set('base', stream(gadgetCrd, gadget)), set('head', stream(gadgetCrd, changed)));
    expect(report.objects.map((o) => [o.key, o.change])).toEqual([['example.dev/v1/Gadget//g', 'changed']]);
  });
});

describe('the parse cache of large documents', () => {
  afterEach(() => useParseCache(undefined));

  it('gives the same report from a cached parse, defaults of a changed CRD included, and reparses a damaged entry', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'agentplane-diff-parse-'));
    const [oldCrd, newCrd] = [crd('Widget', 'Namespaced', 'a', 400), crd('Widget', 'Namespaced', 'b', 400)];
    expect(stream(oldCrd).length).toBeGreaterThan(64 * 1024);
    // BASE and HEAD share widget w1 (mode defaulted) and change w2's size; HEAD's CRD changes the default.
    const inputs = (): [ReturnType<typeof set>, ReturnType<typeof set>] => [
      set('base', stream(oldCrd, widget('w1', 1), widget('w2', 1))),
      set('head', stream(newCrd, widget('w1', 1), widget('w2', 2))),
    ];
    const summary = (r: ReturnType<typeof diffManifests>): unknown =>
      r.objects.map((o) => [o.key, o.fields.map((f) => [f.path, f.before, f.after])]);
    const parsed = summary(diffManifests(...inputs()));
    expect(parsed).toContainEqual(['example.dev/v1/Widget/agents/w1', [['spec.mode', 'a', 'b']]]);

    useParseCache(root);
    expect(summary(diffManifests(...inputs()))).toEqual(parsed); // fills the cache
    const dir = path.join(root, '.derived', 'diff-parse');
    const entries = readdirSync(dir);
    expect(entries).toHaveLength(2); // the two CRDs, not the small documents
    expect(summary(diffManifests(...inputs()))).toEqual(parsed); // read from the cache

    // A flipped byte in an entry's payload: not used, parsed again, same report.
    const entry = path.join(dir, entries[0]!);
    writeFileSync(entry, readFileSync(entry, 'utf8').replace('"v1"', '"v2"'));
    expect(summary(diffManifests(...inputs()))).toEqual(parsed);
    expect(readFileSync(entry, 'utf8')).toContain('"v1"');
  });

  it('never stores a document that does not parse: the error names file and line', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'agentplane-diff-parse-'));
    useParseCache(root);
    const big = stream(crd('Widget', 'Namespaced', 'a', 400));
    const broken = `${big}---\n${big.slice(4).replace('kind: CustomResourceDefinition', 'kind: [unclosed')}`;
    const err = thrownBy(
      () => diffManifests(set('base', big), set('head', broken)),
      ManifestParseError,
      'ManifestUnparsable',
    );
    // where js-yaml stops in the broken document alone, shifted by the lines before it in the file
    const docStart = big.split('\n').length - 1;
    let mark = -1;
    try {
      loadAll(broken.slice(big.length), undefined, { schema: CORE_SCHEMA });
    } catch (e) {
      mark = (e as { mark: { line: number } }).mark.line;
    }
    expect(mark).toBeGreaterThan(0);
    expect([err.file, err.line]).toEqual(['all.yaml', docStart + mark + 1]);
    expect(() => diffManifests(set('base', big), set('head', broken))).toThrow(ManifestParseError);
    // nothing stored: the broken document never parsed, the shared CRD was never asked for
    const dir = path.join(root, '.derived', 'diff-parse');
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });
});
