/**
 * Doc comments stay attached to what they document: a `/** … *\/` block directly followed by another one documents
 * nothing (an edit split it from its declaration), and every public `add*` method of a construct has its own.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../../src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** `file:line` of every doc block whose next line opens another doc block. */
function orphanedDocs(file: string, text: string): string[] {
  const lines = text.split('\n');
  return lines.flatMap((line, i) =>
    line.trimEnd().endsWith('*/') && lines[i + 1]?.trimStart().startsWith('/**') && docOpens(lines, i)
      ? [`${file}:${i + 1}`]
      : [],
  );
}

/** Whether the comment ending on line `end` opened with `/**`. */
function docOpens(lines: readonly string[], end: number): boolean {
  for (let i = end; i >= 0; i--) if (lines[i]!.includes('/*')) return lines[i]!.includes('/**');
  return false;
}

/** `file:line` of every public `addXxx(` method declaration not directly under a doc comment. */
function undocumentedAdders(file: string, text: string): string[] {
  const lines = text.split('\n');
  return lines.flatMap((line, i) =>
    /^ {2}add[A-Z]\w*\(/.test(line) && !lines[i - 1]?.trimEnd().endsWith('*/') ? [`${file}:${i + 1}`] : [],
  );
}

const files = tsFiles(SRC).map((f) => [path.relative(SRC, f), readFileSync(f, 'utf8')] as const);

test('the check finds a split doc comment and passes an attached one', () => {
  expect(orphanedDocs('x.ts', '/** a */\n/** b */\nconst x = 1;')).toEqual(['x.ts:1']);
  expect(orphanedDocs('x.ts', '/* licence */\n/** b */\nconst x = 1;')).toEqual([]);
  expect(orphanedDocs('x.ts', '/** b */\nconst x = 1;')).toEqual([]);
});

test('no doc comment in src is split from its declaration', () => {
  expect(files.flatMap(([f, text]) => orphanedDocs(f, text))).toEqual([]);
});

test('every public add* method in src is documented', () => {
  expect(files.flatMap(([f, text]) => undocumentedAdders(f, text))).toEqual([]);
});
