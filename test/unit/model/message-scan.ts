/**
 * The syntax-tree scan behind the guards on message text (no-message-logic for src, no-prose-assertions for tests):
 * what counts as message text, and which expressions are logic on it. See no-message-logic.test.ts for the rules.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const MESSAGE_PROPERTIES = new Set(['message', 'detail', 'hint']);
export const MESSAGE_NAME = /^(msg|message|detail|hint)$|Message$|Detail$/;
const SEARCHES = new Set(['startsWith', 'endsWith', 'includes', 'match', 'matchAll', 'search', 'indexOf']);
/** Calls that keep a string's text (`x.message.toLowerCase()` is still the message). */
const TEXT_PRESERVING = new Set(['toLowerCase', 'toUpperCase', 'trim', 'trimStart', 'trimEnd', 'normalize']);

export function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

export function unwrap(node: ts.Expression): ts.Expression {
  let n = node;
  for (;;) {
    if (ts.isParenthesizedExpression(n) || ts.isNonNullExpression(n) || ts.isAsExpression(n)) n = n.expression;
    else if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      TEXT_PRESERVING.has(n.expression.name.text)
    )
      n = n.expression.expression;
    else return n;
  }
}

/** Name of the enclosing function (declaration, method, or the variable a function expression is assigned to). */
function enclosingFunction(node: ts.Node): string {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name) return n.name.getText();
    if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && ts.isVariableDeclaration(n.parent))
      return n.parent.name.getText();
  }
  return '(top level)';
}

/** Every piece of logic on message text in one source text, as `file#function:line: expression`. */
export function messageLogic(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const derived = new Set<string>();
  const isMessage = (node: ts.Expression): boolean => {
    const n = unwrap(node);
    if (ts.isPropertyAccessExpression(n)) return MESSAGE_PROPERTIES.has(n.name.text);
    if (ts.isElementAccessExpression(n))
      return ts.isStringLiteral(n.argumentExpression) && MESSAGE_PROPERTIES.has(n.argumentExpression.text);
    if (ts.isIdentifier(n)) return MESSAGE_NAME.test(n.text) || derived.has(n.text);
    if (ts.isConditionalExpression(n)) return isMessage(n.whenTrue) || isMessage(n.whenFalse);
    return false;
  };
  // Variables initialised from message text carry it (one pass per file; names are rarely reused for other text).
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isMessage(node.initializer))
      derived.add(node.name.text);
    ts.forEachChild(node, collect);
  };
  collect(sf);
  const out: string[] = [];
  const hit = (node: ts.Node): void => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    out.push(`${file}#${enclosingFunction(node)}:${line}: ${node.getText(sf).slice(0, 100)}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      if (SEARCHES.has(method) && isMessage(node.expression.expression)) hit(node);
      if (method === 'test' && node.arguments[0] && isMessage(node.arguments[0])) hit(node);
    }
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      const equality =
        op === ts.SyntaxKind.EqualsEqualsEqualsToken ||
        op === ts.SyntaxKind.ExclamationEqualsEqualsToken ||
        op === ts.SyntaxKind.EqualsEqualsToken ||
        op === ts.SyntaxKind.ExclamationEqualsToken;
      const stringy = (e: ts.Expression): boolean => ts.isStringLiteralLike(e) || ts.isTemplateExpression(e);
      if (equality && ((isMessage(node.left) && stringy(node.right)) || (isMessage(node.right) && stringy(node.left))))
        hit(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const PROSE_PROPERTIES = new Set([...MESSAGE_PROPERTIES, 'summary']);
const THROW_MATCHERS = new Set(['toThrow', 'toThrowError']);

/** Whether `node` is message text (a `message`/`detail`/`hint`/`summary` property or a message-named variable). */
function isProse(node: ts.Expression): boolean {
  const n = unwrap(node);
  if (ts.isPropertyAccessExpression(n)) return PROSE_PROPERTIES.has(n.name.text);
  if (ts.isIdentifier(n)) return MESSAGE_NAME.test(n.text);
  return false;
}

/**
 * Whether an expectation's subject is message text: the text itself, `a && x.message`, a list of it
 * (`xs.map((x) => x.message)`, `[x.severity, x.message]`).
 */
function proseSubject(node: ts.Expression): boolean {
  const n = unwrap(node);
  if (isProse(n)) return true;
  if (ts.isBinaryExpression(n)) return proseSubject(n.right);
  if (ts.isConditionalExpression(n)) return proseSubject(n.whenTrue) || proseSubject(n.whenFalse);
  if (ts.isArrayLiteralExpression(n)) return n.elements.some((e) => proseSubject(e));
  if (ts.isCallExpression(n)) {
    const fnArg = n.arguments.find((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a));
    if (fnArg && (ts.isArrowFunction(fnArg) || ts.isFunctionExpression(fnArg)) && !ts.isBlock(fnArg.body))
      if (proseSubject(fnArg.body as ts.Expression)) return true;
    if (ts.isPropertyAccessExpression(n.expression)) return proseSubject(n.expression.expression);
  }
  return false;
}

const literalText = (n: ts.Expression): boolean =>
  ts.isStringLiteralLike(n) || ts.isTemplateExpression(n) || ts.isRegularExpressionLiteral(n) || ts.isNewExpression(n);

/** Whether `node`'s subtree holds literal text (a string, template or regular expression literal). */
function holdsText(node: ts.Node): boolean {
  if (ts.isStringLiteralLike(node) || ts.isTemplateExpression(node) || ts.isRegularExpressionLiteral(node)) return true;
  return ts.forEachChild(node, holdsText) ?? false;
}

/** Whether an object literal in `node` gives a message property literal text (`toMatchObject({ message: '…' })`). */
function messageProperty(node: ts.Node): boolean {
  if (
    ts.isPropertyAssignment(node) &&
    ts.isIdentifier(node.name) &&
    PROSE_PROPERTIES.has(node.name.text) &&
    holdsText(node.initializer)
  )
    return true;
  return ts.forEachChild(node, messageProperty) ?? false;
}

/** The `expect(…)` call at the root of a matcher chain, and whether the chain negates (`.not`). */
function expectation(call: ts.CallExpression): { subject: ts.Expression | undefined; negated: boolean } {
  let negated = false;
  let n: ts.Expression = call.expression;
  for (;;) {
    if (ts.isPropertyAccessExpression(n)) {
      if (n.name.text === 'not') negated = true;
      n = n.expression;
    } else if (ts.isCallExpression(n)) {
      if (ts.isIdentifier(n.expression) && n.expression.text === 'expect') return { subject: n.arguments[0], negated };
      n = n.expression;
    } else return { subject: undefined, negated };
  }
}

/**
 * The reason of a `// prose: <why>` comment before the statement holding `node`: an assertion that must read the text
 * because the text is the subject (an upstream component's own words, a rendering under test).
 */
function proseMarker(sf: ts.SourceFile, node: ts.Node): string | undefined {
  let n: ts.Node | undefined = node;
  while (n && !ts.isStatement(n)) n = n.parent;
  if (!n) return undefined;
  const text = sf.getFullText();
  for (const c of ts.getLeadingCommentRanges(text, n.getFullStart()) ?? []) {
    const m = /\/\/ prose: (.+)/.exec(text.slice(c.pos, c.end));
    if (m) return m[1]!.trim();
  }
  return undefined;
}

/**
 * Assertions on message text in one test file, as `file:line: expression`: a `toThrow` given text or a pattern, an
 * expectation on a message compared with literal text, an object pattern giving a message literal text, and the
 * logic `messageLogic` finds (picking a finding by its words). A negated expectation (a secret never appears) is not
 * prose: its words can change freely.
 */
export function proseAssertions(file: string, text: string): { unmarked: string[]; marked: string[] } {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const marks: string[] = [];
  const hit = (node: ts.Node): void => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    const marked = proseMarker(sf, node);
    if (marked !== undefined) marks.push(`${file}:${line}: ${marked}`);
    else out.push(`${file}:${line}: ${node.getText(sf).replace(/\s+/g, ' ').slice(0, 100)}`);
  };
  const logicLines = new Set(messageLogic(file, text).map((h) => Number(/:(\d+):/.exec(h)![1])));
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      logicLines.has(sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1) &&
      ts.isPropertyAccessExpression(node.expression) &&
      isProse(node.expression.expression)
    )
      hit(node);
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const matcher = node.expression.name.text;
      const { subject, negated } = expectation(node);
      if (subject !== undefined && !negated) {
        const args = node.arguments;
        if (THROW_MATCHERS.has(matcher) && args.some((a) => literalText(unwrap(a)))) hit(node);
        else if (!THROW_MATCHERS.has(matcher) && proseSubject(subject) && args.some(holdsText)) hit(node);
        else if (args.some(messageProperty)) hit(node);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { unmarked: [...new Set(out)].sort(), marked: [...new Set(marks)].sort() };
}
