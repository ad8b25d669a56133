/**
 * The block-layout reader (src/diff/block-yaml.ts) is a fast path in front of js-yaml: what it reads must be exactly
 * what js-yaml's `loadAll` with the core schema gives, and everything outside the layout must be declined (undefined)
 * so js-yaml parses it and reports its errors with file and line.
 */
import { isDeepStrictEqual } from 'node:util';
import { CORE_SCHEMA, dump, loadAll } from 'js-yaml';
import { stringify } from 'yaml';
import { readBlockDocument } from '../../../src/diff/block-yaml.js';
import { ManifestParseError, parseDocument } from '../../../src/diff/sources.js';
import { thrownBy } from '../thrown.js';
import { seededRandom as random } from '../seeded-random.js';

const jsYaml = (text: string): unknown[] => loadAll(text, undefined, { schema: CORE_SCHEMA });

/** Strings that resolve, quote or escape in every way the layout meets (and some it declines). */
const TRICKY = [
  'plain',
  'two words',
  'a:b',
  'a: b',
  'a #b',
  'a#b',
  'http://example.dev/x?y=1',
  'ends:',
  '-leading',
  '- item',
  '?q',
  ':colon',
  'true',
  'True',
  'FALSE',
  'yes',
  'null',
  'Null',
  '~',
  '',
  ' lead',
  'trail ',
  '0',
  '010',
  '0x1F',
  '0o17',
  '0b101',
  '1_000',
  '1e3',
  '.5',
  '+1',
  '-1',
  '-.inf',
  '.NaN',
  '12:30',
  '2026-11-29T10:00:00Z',
  '00000000-0000-4000-8000-000000000001',
  "it's",
  'say "hi"',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  'café',
  '{"index":3,"tier":"silver"}',
  '[a, b]',
  '*alias',
  '&anchor',
  '!tag',
  '|',
  '>',
  '%x',
  '@x',
  '`x',
  '---',
  '...',
];

/** A random JSON value of depth at most `depth`, keys and strings drawn from {@link TRICKY} and plain names. */
function value(next: () => number, depth: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const r = next();
  if (depth > 0 && r < 0.3)
    return Object.fromEntries(
      Array.from({ length: 1 + Math.floor(next() * 4) }, () => [
        next() < 0.7 ? pick(['name', 'spec', 'app.kubernetes.io/name', 'x_y', 'k8s.io/v1', 'a-b']) : pick(TRICKY),
        value(next, depth - 1),
      ]),
    );
  if (depth > 0 && r < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth - 1));
  if (r < 0.6) return pick([0, 1, -1, 8080, 1.5, true, false, null]);
  return pick(TRICKY);
}

describe('readBlockDocument', () => {
  test('reads what js-yaml dump and yaml 2 write exactly as js-yaml parses it', () => {
    const next = random(16);
    let read = 0;
    for (let i = 0; i < 600; i++) {
      const doc = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` }, data: value(next, 4) };
      for (const text of [
        `---\n${dump(doc, { lineWidth: -1, noRefs: true })}`,
        `---\n${dump(doc, { sortKeys: true, noRefs: true })}`,
        stringify(doc),
      ]) {
        const fast = readBlockDocument(text);
        if (fast === undefined) continue;
        read += 1;
        expect(isDeepStrictEqual(fast, jsYaml(text))).toBe(true);
      }
    }
    // the fast path is taken for most of these documents, not only the trivial ones
    expect(read).toBeGreaterThan(900);
  });

  test('reads the layout of synthesized and live objects, scalars resolved by the core schema', () => {
    const text = [
      '---',
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: p',
      '  uid: 00000000-0000-4000-8000-000000000001',
      '  labels: {}',
      'spec:',
      '  containers:',
      '  - name: a',
      '    ports:',
      '    - containerPort: 8080',
      '      protocol: TCP',
      '    args: []',
      '    env:',
      '      - name: X',
      '        value: "say \\"hi\\"\\n"',
      "      - value: 'it''s'",
      '  numbers:',
      '    - 0x1F',
      '    - 1e3',
      '    - -1',
      '    - .inf',
      '    - 010',
      '    - 1_000',
      '  nothing:',
      '  tilde: ~',
      '  bools: [TRUE, False]',
      '',
    ].join('\n');
    // a flow sequence with items is declined; without it the rest is read
    expect(readBlockDocument(text)).toBeUndefined();
    const plain = text.replace('  bools: [TRUE, False]\n', '  bools:\n  - TRUE\n  - False\n');
    const fast = readBlockDocument(plain);
    expect(fast).toBeDefined();
    expect(isDeepStrictEqual(fast, jsYaml(plain))).toBe(true);
  });

  test.each([
    ['a comment line', 'a: 1\n# note\nb: 2\n'],
    ['a comment after a value', 'a: 1 # note\n'],
    ['a blank line', 'a: 1\n\nb: 2\n'],
    ['a repeated key (js-yaml refuses it)', 'a: 1\nb: 2\na: 3\n'],
    ['an anchor and alias', 'a: &x 1\nb: *x\n'],
    ['a merge key', 'a:\n  x: 1\nb:\n  <<: {x: 2}\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a document tag', '--- !x\na: 1\n'],
    ['a block scalar', 'a: |\n  text\n'],
    ['a multi-line plain scalar', 'a: one\n  two\n'],
    ['a multi-line quoted scalar', 'a: "one\n  two"\n'],
    ['a flow mapping', 'a: {x: 1}\n'],
    ['a key read as a bool', 'true: 1\n'],
    ['a quoted key', '"a": 1\n'],
    ['a __proto__ key', '__proto__: 1\n'],
    ['a key without a space after the colon', 'a:1\n'],
    ['an escape not read here', 'a: "\\x41"\n'],
    ['a tab', 'a:\t1\n'],
    ['a carriage return', 'a: 1\r\nb: 2\r\n'],
    ['non-ASCII text', 'a: café\n'],
    ['a top-level sequence', '- a\n- b\n'],
    ['a top-level scalar', 'text\n'],
    ['an empty document', '---\n'],
    ['an item indented after its dash', 'a:\n  -   x: 1\n      y: 2\n'],
    ['a deeper line after a mapping entry (bad indentation)', 'a: 1\n  b: 2\n'],
    ['a mapping dedented below its first key', 'a:\n    x: 1\n  y: 2\n'],
    ['trailing spaces', 'a: 1 \n'],
    ['two spaces after the colon', 'a:  1\n'],
  ])('declines %s', (_label, text) => {
    expect(readBlockDocument(text)).toBeUndefined();
  });

  test('a declined document that does not parse still reports file and line (js-yaml)', () => {
    const doc = { file: 'all.yaml', line: 10, text: '---\napiVersion: v1\nkind: ConfigMap\nkind: Secret\n' };
    expect(readBlockDocument(doc.text)).toBeUndefined();
    const err = thrownBy(() => parseDocument(doc), ManifestParseError, 'ManifestUnparsable');
    expect([err.file, err.line]).toEqual(['all.yaml', 14]);
  });

  test('a document read by the fast path gives the same objects through parseDocument', () => {
    const text = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  port: "8080"\n  n: 8080\n';
    expect(readBlockDocument(text)).toBeDefined();
    expect(isDeepStrictEqual(parseDocument({ file: 'a.yaml', line: 0, text }), jsYaml(text))).toBe(true);
  });
});
