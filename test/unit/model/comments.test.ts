/**
 * Citations in the repository's own text point at things a reader of this repository can open: upstream facts as
 * `path@tag` (not the section numbers of a notes file), reported failures by their slug, the name their tests carry
 * (test/cases/<slug>*.test.ts), the design as docs/architecture.md; never a document outside the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SCANNED = ['src', 'scripts', 'test', 'test-cluster', 'examples', 'bench', 'docs', '.ci', '.github'];
const ROOT_FILES = [
  'README.md',
  'CONTRIBUTING.md',
  'package.json',
  'jest.config.js',
  'eslint.config.js',
  'typedoc.json',
];
const SKIPPED_DIRS = new Set(['node_modules', '.run', 'lib', 'fixture', 'api']);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|md|sh|ya?ml|proto|json|txt)$|^run$/;

/** Rules as [why, pattern]; the patterns are assembled from parts so this file does not match itself. */
const RULES: readonly (readonly [string, RegExp])[] = [
  ['upstream fact cited by a notes section, not path@tag', new RegExp(['FACTS', '(\\.md)? §'].join(''))],
  ['reported failure cited by number, not slug', new RegExp(['\\bcases?', ' #?\\d\\d\\b'].join(''), 'i')],
  ['reported failure cited by a path outside the repository', new RegExp(['shared/cases/', '\\d\\d-'].join(''))],
  [
    'document outside the repository',
    new RegExp(
      [
        '\\.\\./sh',
        'ared',
        '|DESI',
        'GN\\.md|NOTES-',
        'ECOSYSTEM|TEST-',
        'CLUSTER\\.md|REAL-',
        'NODE\\.md|FA',
        'CTS(-v1\\.0)?\\.md',
      ].join(''),
    ),
  ],
];

/** A `switch` label on a number is code, not a citation. */
const SWITCH_LABEL = /^\s*case \d+:/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return SKIPPED_DIRS.has(name) ? [] : files(full);
    return TEXT.test(name) ? [full] : [];
  });
}

/** `file:line: why: text` for every line of `text` that breaks a rule. */
function citationProblems(file: string, text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (SWITCH_LABEL.test(line)) return;
    for (const [why, pattern] of RULES)
      if (pattern.test(line)) out.push(`${file}:${i + 1}: ${why}: ${line.trim().slice(0, 120)}`);
  });
  return out;
}

test('the rules catch each citation form they forbid and pass the forms they ask for', () => {
  const bad = [
    ['(FACTS', '.md §1.8)'].join(''),
    ['FACTS', ' §10.3'].join(''),
    ['(case', ' 01)'].join(''),
    ['Case', ' 12-gvisor-runtimeclass-unschedulable'].join(''),
    ['(cases', ' 11, 14)'].join(''),
    ['see ../sh', 'ared/cases/', '14-router-podip-ssrf.md'].join(''),
    ['(DESIGN', '.md §5)'].join(''),
    ['../sh', 'ared/agent-sandbox/releases'].join(''),
    ['see NOTES', '-ECOSYSTEM.md'].join(''),
  ];
  for (const line of bad) expect(citationProblems('x.ts', line).length).toBeGreaterThan(0);
  const good = [
    '(`controllers/sandbox_controller.go@v0.5.6`)',
    '(case claim-ready-stale-generation)',
    "describe('router-podip-ssrf (construct side)', () => {",
    '      case 404:',
    ['      case', ' 10: {'].join(''),
    "freshNamespace(c, 'case17')",
    '(docs/architecture.md, "The verifier")',
  ];
  for (const line of good) expect(citationProblems('x.ts', line)).toEqual([]);
});

test('no file of the repository cites by notes section, case number or a document outside the repository', () => {
  const scanned = [
    ...SCANNED.filter((top) => existsSync(path.join(ROOT, top))).flatMap((top) => files(path.join(ROOT, top))),
    ...ROOT_FILES.map((f) => path.join(ROOT, f)),
  ];
  const problems = scanned.flatMap((f) => citationProblems(path.relative(ROOT, f), readFileSync(f, 'utf8')));
  expect(problems).toEqual([]);
});
