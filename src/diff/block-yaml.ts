/**
 * A reader for the plain block layout that synth (yaml 2), js-yaml `dump` and `kubectl get -o yaml` write: one document
 * of nested block mappings and sequences whose values are one-line plain or quoted scalars. It gives exactly what
 * js-yaml's `loadAll` with the core schema gives for such text (plain scalars are resolved by js-yaml's own core-schema
 * types), several times faster; anything else (comments, blank lines, flow collections other than `[]` and `{}`,
 * anchors, tags, block or multi-line scalars, repeated keys, non-ASCII or control characters, unusual indentation)
 * gives undefined, and the caller parses the text with js-yaml, which also reports its errors.
 */
import { CORE_SCHEMA, type Type } from 'js-yaml';

/** The implicit types js-yaml tries, in order, on a plain scalar of the core schema (null, bool, int, float). */
const IMPLICIT: readonly Type[] | undefined = (CORE_SCHEMA as unknown as { compiledImplicit?: Type[] })
  .compiledImplicit;

/** Anything but printable ASCII and newlines (tabs, carriage returns, control and non-ASCII characters). */
const NOT_PLAIN_ASCII = /[^\x20-\x7e\n]/;
/** A block mapping key read here: letters, digits and `_.-/`, starting with a letter or `_` (it holds no `:`). */
const KEY = /^[A-Za-z_][A-Za-z0-9_./-]{0,252}$/;
/** First characters that make a scalar something other than a plain one (flow, anchor, alias, tag, block, quote, reserved). */
const INDICATOR = /^[[\]{},#&*!|>'"%@`]/;
/** The escapes of double-quoted scalars read here (others decline). */
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', '"': '"', '/': '/', n: '\n', t: '\t', r: '\r' };

/** Returned by the readers below when the text is outside the layout. */
const DECLINE = Symbol('decline');
type Read = unknown;

/**
 * Whether the core schema's implicit types may read `raw` as other than a string: they accept only text starting with
 * `~`, `n`/`N` (null), `t`/`T`/`f`/`F` (bool), a digit, sign or `.` (int, float); any other plain scalar is a string.
 */
function mayResolve(raw: string): boolean {
  const c = raw.charCodeAt(0);
  return (
    (c >= 0x30 && c <= 0x39) || // 0-9
    c === 0x2b || // +
    c === 0x2d || // -
    c === 0x2e || // .
    c === 0x7e || // ~
    c === 0x6e || // n
    c === 0x4e || // N
    c === 0x74 || // t
    c === 0x54 || // T
    c === 0x66 || // f
    c === 0x46 // F
  );
}

/** The value of a plain scalar as js-yaml's core schema resolves it (its own types, in its order). */
function plainValue(raw: string): unknown {
  if (!mayResolve(raw)) return raw;
  for (const type of IMPLICIT!) if (type.resolve(raw)) return type.construct(raw);
  return raw;
}

/** A block mapping entry on `line` at `indent`: the key and the rest after `: ` (undefined for `key:`), or undefined. */
function entryAt(line: string, indent: number): [key: string, rest: string | undefined] | undefined {
  const colon = line.indexOf(':', indent);
  if (colon < 0) return undefined;
  const key = line.slice(indent, colon);
  if (!KEY.test(key)) return undefined;
  if (colon === line.length - 1) return [key, undefined];
  return line.charCodeAt(colon + 1) === 0x20 ? [key, line.slice(colon + 2)] : undefined;
}

/** A one-line scalar (the rest of a line after `key: ` or `- `), or DECLINE. */
function scalar(raw: string): Read {
  const c = raw.charCodeAt(0);
  if (c === 0x27 /* ' */) {
    if (raw.length < 2 || raw.charCodeAt(raw.length - 1) !== 0x27) return DECLINE;
    const inner = raw.slice(1, -1);
    if (!inner.includes("'")) return inner;
    return inner.replaceAll("''", '').includes("'") ? DECLINE : inner.replaceAll("''", "'");
  }
  if (c === 0x22 /* " */) {
    let out = '';
    let from = 1;
    for (let i = 1; i < raw.length; i++) {
      const ch = raw.charCodeAt(i);
      if (ch === 0x22) return i === raw.length - 1 ? out + raw.slice(from, i) : DECLINE;
      if (ch === 0x5c /* \ */) {
        const esc = ESCAPES[raw[i + 1] ?? ''];
        if (esc === undefined) return DECLINE;
        out += raw.slice(from, i) + esc;
        from = ++i + 1;
      }
    }
    return DECLINE;
  }
  if (raw === '[]') return [];
  if (raw === '{}') return {};
  if (
    raw === '' ||
    INDICATOR.test(raw) ||
    c === 0x3a /* : */ ||
    ((c === 0x2d /* - */ || c === 0x3f) /* ? */ && (raw.length === 1 || raw[1] === ' ')) ||
    raw.startsWith(' ') ||
    raw.endsWith(' ') ||
    raw.endsWith(':') ||
    raw.includes(': ') ||
    raw.includes(' #')
  )
    return DECLINE;
  return plainValue(raw);
}

/**
 * The value of one YAML document in the plain block layout (see the file comment), as `[value]` like js-yaml's
 * `loadAll`; undefined when the text is anything else. `text` may start with a bare `---` line.
 */
export function readBlockDocument(text: string): unknown[] | undefined {
  if (IMPLICIT === undefined || NOT_PLAIN_ASCII.test(text)) return undefined;
  const lines = text.split('\n');
  let pos = 0;
  if (lines[0]!.startsWith('---')) {
    if (lines[0] !== '---') return undefined;
    pos = 1;
  }
  let end = lines.length;
  while (end > pos && lines[end - 1] === '') end--;
  if (end === pos) return undefined;
  // Every line is content: no blank or comment lines (those belong to js-yaml).
  const indents = new Array<number>(end);
  for (let i = pos; i < end; i++) {
    const line = lines[i]!;
    let n = 0;
    while (line.charCodeAt(n) === 0x20) n++;
    if (n === line.length || line.charCodeAt(n) === 0x23 /* # */) return undefined;
    indents[i] = n;
  }
  const indentAt = (i: number): number => (i < end ? indents[i]! : -1);
  const isItem = (line: string, indent: number): boolean =>
    line.length > indent + 1 && line.charCodeAt(indent) === 0x2d && line.charCodeAt(indent + 1) === 0x20;

  /** A scalar value on its key's or item's line: the next line may not be indented deeper (a continuation). */
  const inlineValue = (raw: string, indent: number): Read => {
    pos++;
    return indentAt(pos) > indent ? DECLINE : scalar(raw);
  };

  /** The value of `key:` with nothing after it: a deeper mapping or sequence, a sequence at the key's indent, or null. */
  const nestedValue = (indent: number, inMapping: boolean): Read => {
    const next = indentAt(pos);
    if (next > indent) return isItem(lines[pos]!, next) ? sequence(next) : mapping(next, undefined);
    if (next === indent && inMapping && isItem(lines[pos]!, next)) return sequence(next);
    return null;
  };

  /** A block mapping at `indent`; `first` is its first entry when it opens on a sequence item's line. */
  function mapping(indent: number, first: [string, string | undefined] | undefined): Read {
    const out: Record<string, unknown> = {};
    let entry = first;
    for (;;) {
      if (entry === undefined) {
        entry = entryAt(lines[pos]!, indent);
        if (entry === undefined) return DECLINE;
      }
      const [raw, rest] = entry;
      const key = plainValue(raw);
      if (typeof key !== 'string' || key === '__proto__' || Object.hasOwn(out, key)) return DECLINE;
      let value: Read;
      if (rest === undefined) {
        pos++;
        value = nestedValue(indent, true);
      } else value = inlineValue(rest, indent);
      if (value === DECLINE) return DECLINE;
      out[key] = value;
      const next = indentAt(pos);
      if (next < indent) return out;
      if (next > indent) return DECLINE;
      entry = undefined;
    }
  }

  /** A block sequence whose `- ` marks are at `indent`. */
  function sequence(indent: number): Read {
    const out: unknown[] = [];
    while (indentAt(pos) === indent && isItem(lines[pos]!, indent)) {
      // the item's content starts right after `- `: a mapping opening on this line, else a scalar
      const line = lines[pos]!;
      const entry = entryAt(line, indent + 2);
      const value = entry !== undefined ? mapping(indent + 2, entry) : inlineValue(line.slice(indent + 2), indent);
      if (value === DECLINE) return DECLINE;
      out.push(value);
    }
    return out; // what follows is the enclosing mapping's to check
  }

  if (indentAt(pos) !== 0 || isItem(lines[pos]!, 0)) return undefined;
  const value = mapping(0, undefined);
  return value === DECLINE || pos !== end ? undefined : [value];
}
