/**
 * Logic matches reasons, never sentences: no file in src branches on the text of a message. Read from each file's
 * syntax tree (TypeScript's parser), so a message that is only built, printed or passed on does not count. Message
 * text is a property `message`, `detail` or `hint`, a variable named like one (`msg`, `errorMessage`), or a variable
 * initialised from either (`const d = r.detail.toLowerCase()`). Logic on it is
 * - a string search on it: `.startsWith`, `.endsWith`, `.includes`, `.match`, `.matchAll`, `.search`, `.indexOf`;
 * - a regular expression tested against it: `/…/.test(x.message)`;
 * - an (in)equality with a string: `x.message === '…'`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(import.meta.dirname, '../../../src');

/**
 * Functions allowed to read message text, as `file#function`, each because its text is the only signal there is:
 * kube-apiserver's 500 for a webhook whose TLS handshake failed has no reason or details, only Go's error text
 * (test/cluster/cases/conversion-cabundle-drift.webhook-tls.test.ts).
 */
const ALLOWED: ReadonlySet<string> = new Set(['adapter/kubernetes/errors.ts#isWebhookTlsFailure']);

const MESSAGE_PROPERTIES = new Set(['message', 'detail', 'hint']);
const MESSAGE_NAME = /^(msg|message|detail|hint)$|Message$|Detail$/;
const SEARCHES = new Set(['startsWith', 'endsWith', 'includes', 'match', 'matchAll', 'search', 'indexOf']);
/** Calls that keep a string's text (`x.message.toLowerCase()` is still the message). */
const TEXT_PRESERVING = new Set(['toLowerCase', 'toUpperCase', 'trim', 'trimStart', 'trimEnd', 'normalize']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

function unwrap(node: ts.Expression): ts.Expression {
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

const FOUND = sources(SRC).flatMap((f) => messageLogic(path.relative(SRC, f), readFileSync(f, 'utf8')));
const where = (h: string): string => h.slice(0, h.indexOf(':'));

test('the scan catches each form of logic on message text and passes messages that are only built or passed on', () => {
  const bad = [
    "if (e.message.startsWith('claim')) x();",
    'const f = findings.filter((f) => f.message.includes("stale"));',
    'const m = err.message.match(/(\\d+)h/);',
    'if (/forbidden|403/i.test(failed.message)) y();',
    "if (r.detail === 'timeout') z();",
    'const d = r.detail.toLowerCase(); if (/no such host/.test(d)) z();',
    "function f(msg: string) { return msg.endsWith('!'); }",
    "const t = r.kind === 'failed' ? r.error.message : r.message; if (t.indexOf('x') >= 0) z();",
  ];
  for (const line of bad) expect(messageLogic('x.ts', line)).toHaveLength(1);
  const good = [
    'const text = `${what}: ${err.message}`;',
    "if (e.message !== undefined) out.push(e.message.split('\\n')[0]);",
    "if (e.reason === 'ClaimStale') x();",
    'if (/^\\d+$/.test(port)) y();',
    "if (body.includes('no such host')) z();",
  ];
  for (const line of good) expect(messageLogic('x.ts', line)).toEqual([]);
});

test('no file in src branches on message text outside the allowed functions', () => {
  expect(FOUND.filter((h) => !ALLOWED.has(where(h)))).toEqual([]);
});

test('every allowed function still reads message text (the list stays as short as the need)', () => {
  expect([...ALLOWED].filter((a) => !FOUND.some((h) => where(h) === a))).toEqual([]);
});
