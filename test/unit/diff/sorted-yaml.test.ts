/**
 * The unified view's YAML (src/diff/sorted-yaml.ts) is written without js-yaml for plain manifest values: the text must
 * be exactly js-yaml's `dump` with sorted keys, no folding and no references, and values outside that subset must be
 * left to js-yaml (same text, by the slow path).
 */
import { dump } from 'js-yaml';
import { toYamlSorted, writeSortedYaml } from '../../../src/diff/sorted-yaml.js';
import { seededRandom as random } from '../seeded-random.js';

const jsYaml = (v: unknown): string => dump(v, { sortKeys: true, lineWidth: -1, noRefs: true });

/** Strings every quoting rule meets: indicators first and last, `: ` and ` #`, implicit types, YAML 1.1 words. */
const STRINGS = [
  'plain',
  'two words',
  'a:b',
  'a: b',
  'a:',
  'a #b',
  'a#b',
  '#a',
  'http://example.dev/x?y=1',
  '-leading',
  '- item',
  '?q',
  ':colon',
  'true',
  'False',
  'yes',
  'On',
  'n',
  'null',
  '~',
  '',
  ' lead',
  'trail ',
  '0',
  '010',
  '0x1F',
  '1_000',
  '1e3',
  '.5',
  '+1',
  '-.inf',
  '.NaN',
  '12:30',
  '190:20:30',
  '2026-11-29',
  '2026-11-29T10:00:00Z',
  '<<',
  '=',
  "it's",
  "'quoted'",
  'say "hi"',
  'back\\slash',
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
  'café',
  'line\nbreak',
  'tab\there',
  'x'.repeat(1100),
];

/** Values the fast path declines (js-yaml writes them another way, or they are not manifest values). */
const DECLINED_STRINGS = new Set(['café', 'line\nbreak', 'tab\there']);

function value(next: () => number, depth: number, declinable = true): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const string = (): string => {
    const s = pick(STRINGS);
    return declinable || !DECLINED_STRINGS.has(s) ? s : 'plain';
  };
  const r = next();
  if (depth > 0 && r < 0.3)
    return Object.fromEntries(
      Array.from({ length: Math.floor(next() * 4) }, () => [
        next() < 0.6 ? pick(['name', 'spec', 'app.kubernetes.io/name', 'x_y', 'B', 'a-b', '10']) : string(),
        value(next, depth - 1, declinable),
      ]),
    );
  if (depth > 0 && r < 0.5)
    return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth - 1, declinable));
  if (r < 0.62)
    return pick(declinable ? [0, 1, -1, 8080, 2 ** 60, 1.5, -0, true, false, null, NaN] : [0, -1, 2 ** 60, true, null]);
  return string();
}

describe('toYamlSorted', () => {
  test('writes plain manifest values itself, exactly as js-yaml dump writes them', () => {
    const next = random(11);
    for (let i = 0; i < 3000; i++) {
      // keys are drawn from the same strings; a key over 1024 characters is js-yaml's (an explicit pair)
      const v = JSON.parse(
        JSON.stringify({ kind: 'ConfigMap', data: value(next, 5, false) }).replaceAll('x'.repeat(1100), 'x'),
      );
      expect([i, writeSortedYaml(v)]).toEqual([i, jsYaml(v)]);
    }
  });

  test('writes exactly what js-yaml dump writes, for every value, fast path or not', () => {
    const next = random(7);
    for (let i = 0; i < 3000; i++) {
      const v = { kind: 'ConfigMap', data: value(next, 5) };
      expect([i, toYamlSorted(v)]).toEqual([i, jsYaml(v)]);
    }
  });

  test('writes a manifest with nested lists and maps as js-yaml does', () => {
    const obj = {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      metadata: { name: 'env-1', namespace: 'team-1', labels: { 'app.kubernetes.io/version': 'v0.5.6' } },
      spec: {
        podTemplate: {
          spec: {
            containers: [
              {
                name: 'runtime',
                image: 'registry.example/sandboxd:v0.5.7',
                ports: [{ containerPort: 8080, name: 'rest' }],
                env: [
                  { name: 'B', value: '2' },
                  { name: 'A', value: '1' },
                ],
                args: [['nested'], [], {}],
              },
            ],
          },
        },
        egress: [],
        selector: {},
      },
    };
    expect(toYamlSorted(obj)).toBe(jsYaml(obj));
  });

  test.each([
    ['a float', { a: 1.5 }],
    ['negative zero', { a: -0 }],
    ['a multi-line string', { a: 'one\ntwo\n' }],
    ['non-ASCII text', { a: 'café' }],
    ['a key over 1024 characters', { ['k'.repeat(1100)]: 1 }],
    ['an undefined member', { a: undefined, b: 1 }],
    ['a Date', { a: new Date(0) }],
  ])('leaves %s to js-yaml, with the same text', (_label, v) => {
    expect(writeSortedYaml(v)).toBeUndefined();
    expect(toYamlSorted(v)).toBe(jsYaml(v));
  });
});
