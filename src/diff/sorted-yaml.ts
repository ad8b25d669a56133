/**
 * The YAML text of the unified view: js-yaml's `dump` with keys sorted, no line folding and no references. Objects
 * whose scalars are printable ASCII on one line, integers, booleans and null (what a manifest holds) are written here,
 * byte for byte as js-yaml 4 writes them (its block layout, its plain-or-single-quoted choice, its own implicit types
 * deciding what must be quoted), several times faster than js-yaml's dumper in a fresh process; anything else
 * (floats, multi-line or non-ASCII strings, long keys, other values) goes to js-yaml.
 */
import { DEFAULT_SCHEMA, dump, type Type } from 'js-yaml';

/** The implicit types js-yaml's dumper tests a string against before writing it plain (DEFAULT_SCHEMA's). */
const IMPLICIT: readonly Type[] | undefined = (DEFAULT_SCHEMA as unknown as { compiledImplicit?: Type[] })
  .compiledImplicit;
/** js-yaml's compatibility quoting: YAML 1.1 booleans and base-60 numbers are single-quoted. */
const YAML11_BOOLEANS: ReadonlySet<string> = new Set([
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'on',
  'On',
  'ON',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'off',
  'Off',
  'OFF',
]);
const BASE60 = /^[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?$/;
/** Characters a plain scalar may not start with (YAML indicators and space). */
const NOT_FIRST = new Set(Array.from(' -?:,[]{}#&*!|=>\'"%@`', (c) => c.charCodeAt(0)));
/** js-yaml writes a key over 1024 characters as an explicit `? ` pair: left to it. */
const MAX_KEY = 1024;

const DECLINE = Symbol('decline');
type Dumped = string | typeof DECLINE;

/** js-yaml's `isPlainSafe` for printable ASCII in block context (`prev` is -1 before the first character). */
function plainSafe(c: number, prev: number): boolean {
  const ns = c !== 0x20;
  return (
    (c !== 0x23 /* # */ && !(prev === 0x3a /* : */ && !ns)) ||
    (prev >= 0x21 && c === 0x23) || // `x#` is plain, ` #` is not
    (prev === 0x3a && ns)
  );
}

/** A string as js-yaml writes it (plain or single-quoted), or DECLINE for anything but printable one-line ASCII. */
function scalar(s: string): Dumped {
  if (s.length === 0) return "''";
  let plain = true;
  let prev = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return DECLINE;
    if (plain) plain = plainSafe(c, prev);
    prev = c;
  }
  if (YAML11_BOOLEANS.has(s) || BASE60.test(s)) return `'${s}'`;
  const last = s.charCodeAt(s.length - 1);
  plain = plain && !NOT_FIRST.has(s.charCodeAt(0)) && last !== 0x20 && last !== 0x3a;
  if (plain && !IMPLICIT!.some((t) => t.resolve(s))) return s;
  return `'${s.replaceAll("'", "''")}'`;
}

const indent = (level: number): string => `\n${'  '.repeat(level)}`;

/** js-yaml's `writeNode` for block context, on the values read here. */
function node(value: unknown, level: number, compact: boolean): Dumped {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isInteger(value) && !Object.is(value, -0) ? String(value) : DECLINE;
    case 'string':
      return scalar(value);
    case 'object':
      break;
    default:
      return DECLINE;
  }
  if (Array.isArray(value)) {
    let out = '';
    for (const item of value) {
      const d = node(item, level + 1, true);
      if (d === DECLINE) return DECLINE;
      if (!compact || out !== '') out += indent(level);
      out += (d.charCodeAt(0) === 10 ? '-' : '- ') + d;
    }
    return out || '[]';
  }
  if (Object.prototype.toString.call(value) !== '[object Object]') return DECLINE;
  const obj = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(obj).sort()) {
    const k = scalar(key);
    const v = obj[key];
    if (k === DECLINE || k.length > MAX_KEY || v === undefined) return DECLINE;
    const d = node(v, level + 1, false);
    if (d === DECLINE) return DECLINE;
    out += (!compact || out !== '' ? indent(level) : '') + k + (d.charCodeAt(0) === 10 ? ':' : ': ') + d;
  }
  return out || '{}';
}

/** The text {@link toYamlSorted} gives, when written here; undefined when the value is left to js-yaml. */
export function writeSortedYaml(value: unknown): string | undefined {
  const fast = IMPLICIT === undefined ? DECLINE : node(value, 0, true);
  return fast === DECLINE ? undefined : `${fast}\n`;
}

/** `dump(value, { sortKeys: true, lineWidth: -1, noRefs: true })`, written here when the value allows (see the file comment). */
export function toYamlSorted(value: unknown): string {
  return writeSortedYaml(value) ?? dump(value, { sortKeys: true, lineWidth: -1, noRefs: true });
}
