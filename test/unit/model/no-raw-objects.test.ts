/**
 * No upstream object shape above the adapter (docs/architecture.md, "The capability adapter"): files under src/verify and src/cli see Kubernetes objects
 * only as the adapter's typed views. Read from each file's syntax tree (TypeScript's parser), so comments and strings
 * such as a `field: 'spec.template…'` in evidence do not count. A file breaks the rule when it
 * - imports the adapter's raw `Obj` type;
 * - reads `spec`, `status` or `metadata` off an object (`x.spec`, `x?.status`, `x['metadata']`), other than the few
 *   fields below that are views' or HTTP answers' own;
 * - asserts an inline object type (`as { … }`), the way raw JSON is cast into shape.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(import.meta.dirname, '../../../src');
const SCANNED = ['verify', 'cli'];
const RAW_FIELDS = new Set(['spec', 'status', 'metadata']);

/**
 * Reads of those names that are not raw Kubernetes JSON, as `file: expression`: an HTTP answer's status code, the
 * router's `/healthz` body, and the template view's `spec` (TemplateView.spec, handed unread to the pinned CRD's
 * validator).
 */
const ALLOWED: ReadonlySet<string> = new Set([
  'verify/probes/router.ts: r.value.status',
  "verify/probes/router.ts: parsed['status']",
  'verify/runtime-prober.ts: v.status',
  'verify/probes/template.ts: tpl.spec',
]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

function containsTypeLiteral(node: ts.Node): boolean {
  if (ts.isTypeLiteralNode(node)) return true;
  return ts.forEachChild(node, (c) => (containsTypeLiteral(c) ? true : undefined)) ?? false;
}

/** Every breach of the rule in one source text, as `file:line: what`. */
export function breaches(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node, what: string): void => {
    const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
    out.push(`${file}:${line}: ${what}`);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && n.importClause) {
      const named = n.importClause.namedBindings;
      if (named && ts.isNamedImports(named))
        for (const el of named.elements)
          if ((el.propertyName ?? el.name).text === 'Obj') at(el, 'imports the raw Obj type');
    }
    if (ts.isPropertyAccessExpression(n) && RAW_FIELDS.has(n.name.text)) {
      const expr = n.getText(sf).replace(/\?\./g, '.');
      if (!ALLOWED.has(`${file}: ${expr}`)) at(n, `reads ${expr}`);
    }
    if (ts.isElementAccessExpression(n) && ts.isStringLiteral(n.argumentExpression))
      if (RAW_FIELDS.has(n.argumentExpression.text) && !ALLOWED.has(`${file}: ${n.getText(sf)}`))
        at(n, `reads ${n.getText(sf)}`);
    if (ts.isAsExpression(n) && containsTypeLiteral(n.type)) at(n, `casts to an inline type: ${n.type.getText(sf)}`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('no raw Kubernetes JSON above the adapter', () => {
  test('files under src/verify and src/cli read views only', () => {
    const found = SCANNED.flatMap((layer) =>
      sources(path.join(SRC, layer)).flatMap((f) =>
        breaches(path.relative(SRC, f).split(path.sep).join('/'), readFileSync(f, 'utf8')),
      ),
    );
    expect(found).toEqual([]);
  });

  test('the scan sees each kind of breach, and not field names in strings or comments', () => {
    const text = [
      "import type { Obj } from '../adapter/kubernetes/cluster.js';",
      'const a = pod.status?.phase;',
      "const b = claim['spec'];",
      'const c = (o as { handler?: string }).handler;',
      "const d = { field: 'spec.template.spec.containers[0].image' }; // reads .metadata.name",
    ].join('\n');
    expect(breaches('verify/x.ts', text)).toEqual([
      'verify/x.ts:1: imports the raw Obj type',
      'verify/x.ts:2: reads pod.status',
      "verify/x.ts:3: reads claim['spec']",
      'verify/x.ts:4: casts to an inline type: { handler?: string }',
    ]);
  });
});
