/**
 * The layer rule of docs/architecture.md, "Layers", read from the import statements of every file in src (TypeScript's own
 * pre-processor, so static, dynamic and re-export imports all count): model imports nothing of ours, every other layer
 * only the layers below it, and no file imports itself back through a cycle.
 *
 *   model <- releases <- adapter <- verify      releases <- constructs <- synth      releases <- diff, gitops
 *   cli on top
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(import.meta.dirname, '../../../src');

/** The layers each layer may import (itself always allowed). `index` is src/index.ts, the public API. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  model: [],
  releases: ['model'],
  constructs: ['releases', 'model'],
  adapter: ['releases', 'model'],
  verify: ['adapter', 'releases', 'model'],
  diff: ['releases', 'model'],
  gitops: ['releases', 'model'],
  synth: ['constructs', 'releases', 'model'],
  cli: ['synth', 'verify', 'diff', 'adapter', 'constructs', 'releases', 'model'],
  index: ['synth', 'verify', 'diff', 'gitops', 'adapter', 'constructs', 'releases', 'model'],
};

/**
 * Single-file edges allowed across the rule: the verifier reads the environment descriptor with the schema its writer
 * owns (a leaf module importing only zod).
 */
const EDGES: readonly string[] = ['verify/environment.ts -> constructs/descriptor.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

function layerOf(file: string): string {
  const rel = path.relative(SRC, file).split(path.sep);
  return rel.length === 1 ? rel[0]!.replace(/\.ts$/, '') : rel[0]!;
}

/** The files of src that `file` imports (relative specifiers only; packages and generated `imports/` are not layers). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => {
      const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
      return statSync(target, { throwIfNoEntry: false })?.isDirectory() ? path.join(target, 'index.ts') : target;
    })
    .filter((target) => target.startsWith(`${SRC}${path.sep}`));
}

const FILES = sources(SRC);
const GRAPH = new Map(FILES.map((f) => [f, importsOf(f)]));

describe('layers', () => {
  test('every import target exists', () => {
    const missing = [...GRAPH].flatMap(([from, tos]) =>
      tos.filter((to) => !GRAPH.has(to)).map((to) => `${path.relative(SRC, from)} -> ${path.relative(SRC, to)}`),
    );
    expect(missing).toEqual([]);
  });

  test('every layer is in the map', () => {
    expect([...new Set(FILES.map(layerOf))].filter((l) => !(l in ALLOWED))).toEqual([]);
  });

  test('model imports nothing of ours outside model, and every layer imports only the layers below it', () => {
    const violations = [...GRAPH].flatMap(([from, tos]) => {
      const layer = layerOf(from);
      return tos
        .filter((to) => layerOf(to) !== layer && !ALLOWED[layer]!.includes(layerOf(to)))
        .map((to) => `${path.relative(SRC, from)} -> ${path.relative(SRC, to)}`)
        .filter((edge) => !EDGES.includes(edge));
    });
    expect(violations).toEqual([]);
  });

  test('no import cycles between files', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string): void => {
      state.set(file, 'open');
      stack.push(file);
      for (const to of GRAPH.get(file) ?? []) {
        if (state.get(to) === 'open')
          cycles.push([...stack.slice(stack.indexOf(to)), to].map((f) => path.relative(SRC, f)).join(' -> '));
        else if (!state.has(to)) visit(to);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const f of FILES) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  test('the rule is checked on real imports: model is imported by every other layer', () => {
    const importers = new Set(
      [...GRAPH].filter(([, tos]) => tos.some((to) => layerOf(to) === 'model')).map(([from]) => layerOf(from)),
    );
    expect([...importers].filter((l) => l !== 'model' && l !== 'index').sort()).toEqual([
      'adapter',
      'cli',
      'constructs',
      'diff',
      'gitops',
      'releases',
      'synth',
      'verify',
    ]);
  });
});
