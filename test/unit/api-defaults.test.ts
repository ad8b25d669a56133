/**
 * Every optional member of the public props and options interfaces documents its default with a `@default` tag (the
 * API reference shows it): the Props interfaces of src/constructs with the object shapes their members use (inline,
 * or interfaces of src/constructs), and the Props and Options interfaces the package's entry points export. Read from
 * the sources with the TypeScript parser (no type checker: names are followed through imports and re-exports).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const CONSTRUCTS = join(ROOT, 'src/constructs');
const ENTRY_POINTS = ['src/index.ts', 'src/adapter/adapter.ts', 'src/verify/index.ts', 'src/diff/index.ts'];

const files = new Map<string, ts.SourceFile>();
function parse(path: string): ts.SourceFile {
  let file = files.get(path);
  if (file === undefined) {
    file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
    files.set(path, file);
  }
  return file;
}

/** The source file a relative module specifier names (`./x.js` -> `x.ts`); undefined for packages. */
function moduleOf(from: ts.SourceFile, specifier: ts.Expression | undefined): ts.SourceFile | undefined {
  if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return undefined;
  return parse(resolve(dirname(from.fileName), specifier.text.replace(/\.js$/, '.ts')));
}

const isExported = (s: ts.Statement): boolean =>
  ts.canHaveModifiers(s) && (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

type Shape = ts.InterfaceDeclaration | ts.TypeAliasDeclaration;

/** The interface or type alias `name` means in `file`: declared there, imported or re-exported. */
function declarationOf(file: ts.SourceFile, name: string, seen = new Set<string>()): Shape | undefined {
  const key = `${file.fileName}#${name}`;
  if (seen.has(key)) return undefined;
  seen.add(key);
  for (const s of file.statements) {
    if ((ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) && s.name.text === name) return s;
    if (ts.isExportDeclaration(s)) {
      if (s.exportClause === undefined) {
        const target = moduleOf(file, s.moduleSpecifier);
        const found = target && declarationOf(target, name, seen);
        if (found) return found;
      } else if (ts.isNamedExports(s.exportClause)) {
        const el = s.exportClause.elements.find((e) => e.name.text === name);
        if (el === undefined) continue;
        const original = el.propertyName?.getText() ?? name;
        const target = s.moduleSpecifier ? moduleOf(file, s.moduleSpecifier) : file;
        if (target !== undefined && (target !== file || original !== name))
          return declarationOf(target, original, seen);
      }
    }
    if (ts.isImportDeclaration(s) && s.importClause?.namedBindings && ts.isNamedImports(s.importClause.namedBindings)) {
      const el = s.importClause.namedBindings.elements.find((e) => e.name.text === name);
      const target = el && moduleOf(file, s.moduleSpecifier);
      if (el && target) return declarationOf(target, el.propertyName?.getText() ?? name, seen);
    }
  }
  return undefined;
}

/** The names a module exports (declarations, named re-exports, `export *`). */
function exportedNames(file: ts.SourceFile, seen = new Set<string>()): string[] {
  if (seen.has(file.fileName)) return [];
  seen.add(file.fileName);
  const names: string[] = [];
  for (const s of file.statements) {
    if (ts.isExportDeclaration(s)) {
      if (s.exportClause === undefined) {
        const target = moduleOf(file, s.moduleSpecifier);
        if (target) names.push(...exportedNames(target, seen));
      } else if (ts.isNamedExports(s.exportClause)) names.push(...s.exportClause.elements.map((e) => e.name.text));
    } else if (isExported(s) && (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s))) names.push(s.name.text);
  }
  return names;
}

function constructFiles(dir: string): ts.SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? constructFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [parse(join(dir, e.name))] : [],
  );
}

/**
 * The optional members reachable from the public interfaces (`<Interface>.<member>`), and those of them without
 * `@default` (`<file>:<Interface>.<member>`).
 */
function scan(): { optional: string[]; missing: string[] } {
  const roots = new Set<ts.InterfaceDeclaration>();
  for (const entry of ENTRY_POINTS) {
    const file = parse(join(ROOT, entry));
    for (const name of exportedNames(file)) {
      const d = /(Props|Options)$/.test(name) ? declarationOf(file, name) : undefined;
      if (d !== undefined && ts.isInterfaceDeclaration(d)) roots.add(d);
    }
  }
  for (const file of constructFiles(CONSTRUCTS))
    for (const s of file.statements)
      if (ts.isInterfaceDeclaration(s) && /Props$/.test(s.name.text) && isExported(s)) roots.add(s);

  const optional: string[] = [];
  const missing: string[] = [];
  const visited = new Set<ts.Node>();
  const inConstructs = (node: ts.Node): boolean =>
    !relative(CONSTRUCTS, node.getSourceFile().fileName).startsWith('..');

  /** `nested`: also the object shapes the members' types use (construct props), not only the members themselves. */
  function visitShape(shape: ts.InterfaceDeclaration | ts.TypeLiteralNode, label: string, nested: boolean): void {
    if (visited.has(shape)) return;
    visited.add(shape);
    if (ts.isInterfaceDeclaration(shape))
      for (const clause of shape.heritageClauses ?? [])
        for (const t of clause.types) {
          const base = declarationOf(shape.getSourceFile(), t.expression.getText());
          if (base !== undefined && ts.isInterfaceDeclaration(base)) visitShape(base, base.name.text, nested);
        }
    for (const m of shape.members) {
      if (!ts.isPropertySignature(m)) continue;
      const name = `${label}.${m.name.getText()}`;
      if (m.questionToken !== undefined) {
        optional.push(name);
        if (!ts.getJSDocTags(m).some((t) => t.tagName.text === 'default'))
          missing.push(`${relative(ROOT, m.getSourceFile().fileName)}:${name}`);
      }
      if (nested && m.type !== undefined) visitType(m.type, name);
    }
  }

  /** Inline object types anywhere in `node`, and the construct interfaces and type aliases it names. */
  function visitType(node: ts.Node, label: string): void {
    if (ts.isTypeLiteralNode(node)) return visitShape(node, label, true);
    if (ts.isTypeReferenceNode(node)) {
      const d = declarationOf(node.getSourceFile(), node.typeName.getText());
      if (d !== undefined && inConstructs(d)) {
        if (ts.isInterfaceDeclaration(d)) visitShape(d, d.name.text, true);
        else if (!visited.has(d)) {
          visited.add(d);
          visitType(d.type, d.name.text);
        }
      }
    }
    ts.forEachChild(node, (child) => visitType(child, label));
  }

  for (const r of roots) visitShape(r, r.name.text, inConstructs(r));
  return { optional: optional.sort(), missing: missing.sort() };
}

const result = scan();

test('every optional member of the public props and options interfaces has a @default tag', () => {
  expect(result.missing).toEqual([]);
});

test('the scan reaches construct props, their nested shapes and the entry points’ options', () => {
  // A scan that found nothing would pass the test above vacuously.
  expect(result.optional).toEqual(
    expect.arrayContaining([
      'AgentEnvironmentProps.claimLifecycle',
      'AgentSandboxInstallProps.controller',
      'ControllerDeploymentProps.replicas',
      'ClaimLifecycle.shutdownPolicy',
      'ControllerResources.limits.cpu',
      'FetchOptions.mirror',
      'VerifyOptions.cleanupWaitMs',
      'KubeSessionsOptions.labels',
      'DiffOptions.scopeFor',
      'VerifierAccessProps.portForward',
    ]),
  );
});
