/**
 * Documents that are the same text on both sides (src/diff/pairing.ts): read by key without parsing and counted as
 * unchanged; what must still hold: a duplicate key against a changed document is refused, the warm-pool rule finds a
 * pool whose text did not change, layouts the key scanner does not read are parsed, and the scanner never reads a
 * key that the parser would read differently.
 */
import { loadAll, CORE_SCHEMA } from 'js-yaml';
import { diffManifests, documentSet, ObjectIdentityError, splitDocuments } from '../../../src/diff/index.js';
import { headerIdentity, scanIdentity, scanIdentityByLines } from '../../../src/diff/document-identity.js';
import { thrownBy } from '../thrown.js';

const set = (label: string, text: string) => documentSet(label, splitDocuments('all.yaml', text));
const template = (image: string): string =>
  `apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxTemplate\nmetadata:\n  name: python\n  namespace: agents\nspec:\n  podTemplate:\n    spec:\n      containers:\n      - name: runtime\n        image: ${image}\n`;
const pool = `apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxWarmPool\nmetadata:\n  name: pool\n  namespace: agents\nspec:\n  sandboxTemplateRef:\n    name: python\n  updateStrategy:\n    type: Recreate\n`;
const cm = (name: string, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: agents\n  labels:\n    name: not-this\n  name: ${name}\ndata:\n  k: ${value}\n`;

describe('documents shared by both sides', () => {
  it('counts a shared document unchanged and compares the one that differs', () => {
    const report = diffManifests(
      set('base', `---\n${cm('a', '1')}---\n${cm('b', '1')}`),
      set('head', `---\n${cm('a', '1')}---\n${cm('b', '2')}`),
    );
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1 });
    expect(report.objects.map((o) => [o.key, o.fields.map((f) => f.path)])).toEqual([
      ['v1/ConfigMap/agents/b', ['data.k']],
    ]);
  });

  it('refuses a changed document whose key a shared document already holds', () => {
    const base = set('base', `---\n${cm('a', '1')}`);
    const head = set('head', `---\n${cm('a', '1')}---\n${cm('a', '2')}`);
    const err = thrownBy(() => diffManifests(base, head), ObjectIdentityError, 'ObjectIdentityInvalid');
    expect([err.problem, err.set, err.key]).toEqual(['duplicate', 'head', 'v1/ConfigMap/agents/a']);
  });

  it('merges a changed copy that parses to the same object as a shared document', () => {
    const flow = `--- {apiVersion: v1, kind: ConfigMap, metadata: {namespace: agents, labels: {name: not-this}, name: a}, data: {k: 1}}\n`;
    const report = diffManifests(set('base', `---\n${cm('a', '1')}`), set('head', `---\n${cm('a', '1')}${flow}`));
    expect(report.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1 });
  });

  it('warm-pool-roll names a pool whose text is the same on both sides', () => {
    const report = diffManifests(
      set('base', `---\n${template('img:v1')}---\n${pool}`),
      set('head', `---\n${template('img:v2')}---\n${pool}`),
    );
    expect(report.risks.filter((r) => r.rule === 'warm-pool-roll')).toEqual([
      expect.objectContaining({
        object: 'extensions.agents.x-k8s.io/v1beta1/SandboxWarmPool/agents/pool',
        subject: { change: 'changed', pool: 'pool', template: 'python', strategy: 'Recreate' },
      }),
    ]);
  });

  it("reads synth's header by regex with the answer of the walk over the lines, and leaves the rest to the walk", () => {
    // synth's layout takes the fast path and gives what the walk gives
    for (const text of [
      `---\n${cm('a', '1').replace('  namespace: agents\n  labels:\n    name: not-this\n  name: a\n', '  name: a\n  namespace: agents\n')}`,
      `---\n${template('x')}`,
      `---\n${pool}`,
    ]) {
      expect(headerIdentity(text)).toBeDefined();
      expect(headerIdentity(text)).toEqual(scanIdentityByLines(text));
    }
    // layouts the walk reads but the fast path must not take
    const walkOnly = [
      `---\n${cm('a', '1')}`, // namespace and labels before name
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n# c\n  namespace: b\n', // a comment inside metadata
      'apiVersion: v1\nkind: Role\nmetadata:\n  name: a\nrules:\n  - verbs: []\n', // a sequence at two spaces
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'a'\n", // a quoted name
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: "x\u2028y"\n', // a line separator
    ];
    for (const text of walkOnly) {
      expect([text, headerIdentity(text)]).toEqual([text, undefined]);
      expect(scanIdentityByLines(text)).toBeDefined();
    }
    // what neither reads (repeated keys, a second name, a line indented one space, a non-key line)
    const neither = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nspec: 1\nspec: 2\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {}\n  name: b\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n labels: {}\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n- x\n',
      'apiVersion: v1\nkind: ConfigMapList\nmetadata:\n  name: a\n',
    ];
    for (const text of neither)
      expect([text, headerIdentity(text), scanIdentityByLines(text)]).toEqual([text, undefined, undefined]);
    // edits of synth's layout: wherever the fast path answers, the walk gives the same answer
    const base = `---\n${template('img:v1')}`.replace(
      '  namespace: agents\n',
      '  namespace: agents\n  labels:\n    a: b\n',
    );
    const pieces = [
      '\n',
      ' ',
      '  ',
      ':',
      '#',
      '-',
      'x',
      '\t',
      '\nkind: K',
      '\n  name: b',
      '\nspec: 1',
      '\n ',
      '\n  - x',
      '"',
    ];
    let seed = 1;
    const rnd = (k: number): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % k;
    let taken = 0;
    for (let i = 0; i < 3000; i++) {
      let text = base;
      for (let e = 0; e <= rnd(2); e++) {
        const at = rnd(text.length);
        text = text.slice(0, at) + pieces[rnd(pieces.length)]! + text.slice(at + rnd(2));
      }
      const fast = headerIdentity(text);
      if (fast === undefined) continue;
      taken++;
      expect([text, fast]).toEqual([text, scanIdentityByLines(text)]);
    }
    expect(taken).toBeGreaterThan(300);
  });

  it('reads the key of the plain block layout, and leaves every other layout to the parser', () => {
    expect(scanIdentity(`---\n${cm('a', '1')}`)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'a',
      namespace: 'agents',
    });
    expect(scanIdentity(`---\n${template('x')}`)).toEqual({
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      name: 'python',
      namespace: 'agents',
    });
    const unread = [
      '--- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n', // flow style on the marker line
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n', // flow metadata
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # comment\n', // comment after the value
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n    b\n', // multi-line plain scalar: "a b"
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n a\n', // anchor
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "a\\u0062"\n', // escape
      'apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata:\n  name: a\n', // repeated key
      'apiVersion: v1\nkind: ConfigMapList\nmetadata:\n  name: a\nitems: []\n', // List kinds are expanded by the parser
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 123\n', // a number, not a string
      '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}\n', // JSON
      'apiVersion: v1\nkind: ConfigMap\n', // no name
      ...['True', 'null', 'NULL', '0x1F', '0o7', '1e5', '1_000', '.5', '0b1'].map(
        (v) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${v}\n`, // not a string in the core schema
      ),
    ];
    for (const text of unread) expect([text, scanIdentity(text)]).toEqual([text, undefined]);
    // Wherever the scanner reads a key, it is the key the parser reads.
    for (const text of [
      `---\n${cm('a', '1')}`,
      `---\n${template('x')}`,
      `---\n${pool}`,
      'apiVersion: \'v1\'\nkind: "Secret"\nmetadata:\n  # c\n  name: s\n\n  annotations:\n    namespace: x\n',
      // plain scalars that start like a boolean, null or number but are strings
      ...['n', 'f1', 'yes', 'No', 'NaN', 'true-ish', 'nullable'].map(
        (v) => `apiVersion: v1\nkind: ${v}\nmetadata:\n  name: ${v}\n  namespace: t${v}\n`,
      ),
    ]) {
      const [obj] = loadAll(text, undefined, { schema: CORE_SCHEMA }) as Array<{
        apiVersion: string;
        kind: string;
        metadata: { name: string; namespace?: string };
      }>;
      expect(scanIdentity(text)).toEqual({
        apiVersion: obj!.apiVersion,
        kind: obj!.kind,
        name: obj!.metadata.name,
        ...(obj!.metadata.namespace ? { namespace: obj!.metadata.namespace } : {}),
      });
    }
  });
});
