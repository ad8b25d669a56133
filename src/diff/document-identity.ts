/**
 * The identity of a YAML document read from its text without parsing it, for documents that are the same text in
 * BASE and HEAD (compare.ts never parses those). Only the plain block layout synth writes is read: top-level
 * `apiVersion:` and `kind:` lines and `name:`/`namespace:` directly under `metadata:`, each with a plain or simply
 * quoted scalar. Anything else (flow style, JSON, anchors, tags, comments after a value, multi-line scalars, repeated
 * keys, `List` kinds) gives undefined and the caller parses the document instead.
 */

/** What {@link scanIdentity} reads: the fields of an object key. */
export interface ScannedIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
const QUOTED = /^"([A-Za-z0-9][A-Za-z0-9._/-]*)"$|^'([A-Za-z0-9][A-Za-z0-9._/-]*)'$/;
const TOP_KEY = /^([A-Za-z_][A-Za-z0-9_.-]*):(?: (.*))?$/;

/** A plain or simply quoted one-line scalar that reads as a string (not a boolean, null or number: js-yaml also reads `0b1` as one), or undefined. */
function scalar(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (PLAIN.test(raw))
    return /^(true|false|null|~|[-+]?[0-9][0-9._]*([eE][-+]?[0-9]+)?|0b[01]+|0x[0-9a-fA-F]+|0o[0-7]+)$/i.test(raw)
      ? undefined
      : raw;
  const m = QUOTED.exec(raw);
  return m === null ? undefined : (m[1] ?? m[2]);
}

/** {@link TOP_KEY} read in place at a line start (sticky: no slice of the line). */
const KEY_AT = /([A-Za-z_][A-Za-z0-9_.-]*):(?: (.*))?(?=\n|$)/y;

/** {@link TOP_KEY}'s match of the line starting at `at`, read in place. */
function keyAt(text: string, at: number): RegExpExecArray | null {
  KEY_AT.lastIndex = at;
  return KEY_AT.exec(text);
}

/** Whether the line starting at `at` is a `key: value` line as {@link TOP_KEY} reads it (no match array built). */
function isKeyLineAt(text: string, at: number): boolean {
  KEY_AT.lastIndex = at;
  return KEY_AT.test(text);
}

/** Spaces at `at` (a line start). */
function spacesAt(text: string, at: number): number {
  let n = 0;
  while (text.charCodeAt(at + n) === 32) n++;
  return n;
}

/** Whether the line whose indentation ends at `at` holds content (not blank, not a comment). */
function contentAt(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return !(Number.isNaN(c) || c === 10 || c === 35);
}

/** Spaces at `at` (a line start) and whether the line holds content (not blank, not a comment). */
function indentAt(text: string, at: number): { n: number; content: boolean } {
  const n = spacesAt(text, at);
  return { n, content: contentAt(text, at + n) };
}

/** Where the line after the one starting at `at` starts, or -1. */
function nextLine(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl < 0 ? -1 : nl + 1;
}

/** Per indent `k`: a newline followed by at most `k` spaces and no more (see {@link nextLineIndentedAtMost}). */
const indentedAtMost: RegExp[] = [];
/** Texts from this length on are skipped through by the regex; a small document line by line (fewer calls). */
const SKIP_BY_REGEX_CHARS = 8 * 1024;

/**
 * Where the first line after the one starting at `at` that is indented at most `k` spaces starts, or -1. In a large
 * text the lines between are skipped by the regex engine, not one by one (a CRD is thousands of deeper lines).
 */
function nextLineIndentedAtMost(text: string, at: number, k: number): number {
  if (text.length < SKIP_BY_REGEX_CHARS) {
    for (let l = nextLine(text, at); l >= 0; l = nextLine(text, l)) {
      let n = 0;
      while (n <= k && text.charCodeAt(l + n) === 32) n++;
      if (n <= k) return l;
    }
    return -1;
  }
  const re = (indentedAtMost[k] ??= new RegExp(`\\n {0,${k}}(?! )`, 'g'));
  re.lastIndex = at;
  const m = re.exec(text);
  return m === null ? -1 : m.index + 1;
}

/** Whether the value on the line at `at` (a key at `indent`) ends there: the next content line is not indented deeper (a continuation). */
function endsAt(text: string, at: number, indent: number): boolean {
  for (let l = nextLine(text, at); l >= 0 && l < text.length; l = nextLine(text, l)) {
    const n = spacesAt(text, l);
    if (contentAt(text, l + n)) return n <= indent;
  }
  return true;
}

/** The line starting at `at`, without its newline. */
function lineAt(text: string, at: number): string {
  const nl = text.indexOf('\n', at);
  return text.slice(at, nl < 0 ? text.length : nl);
}

/**
 * The identity of the document `text` (leading `---` line allowed), or undefined when it is not read this simply:
 * {@link headerIdentity} for synth's layout, else {@link scanIdentityByLines}.
 */
export const scanIdentity = (text: string): ScannedIdentity | undefined =>
  headerIdentity(text) ?? scanIdentityByLines(text);

/** A plain scalar as {@link scalar} reads it, in a regex. */
const PLAIN_SRC = '[A-Za-z0-9][A-Za-z0-9._/-]*';
/** Synth's header: `apiVersion`, `kind`, then `metadata` with `name` (and `namespace`) first, each ending its line. */
const HEADER = new RegExp(
  `(?:---\\n)?apiVersion: (${PLAIN_SRC})\\nkind: (${PLAIN_SRC})\\nmetadata:\\n  name: (${PLAIN_SRC})\\n` +
    `(?:  namespace: (${PLAIN_SRC})\\n)?(?=[A-Za-z_]|  [A-Za-z_][A-Za-z0-9_.-]*:[ \\n]|$)`,
  'y',
);
/** After the header, where {@link scanIdentityByLines} would decline or read more: see {@link headerIdentity}. */
const AFTER_HEADER = new RegExp(
  [
    '[\\t\\r\\u2028\\u2029]', // characters it declines (or where its regexes stop a line)
    '\\n(?:apiVersion|kind|metadata|  name|  namespace)[: \\n]', // an identity key again (or a child named so anywhere)
    '\\n (?! )', // a line indented one space (less than metadata's children)
    '\\n  (?=[^ \\n#])(?![A-Za-z_][A-Za-z0-9_.-]*:(?:[ \\n]|$))', // a line at metadata's indent that is not `key:`
    '\\n(?=[^ \\n#])(?![A-Za-z_][A-Za-z0-9_.-]*:(?:[ \\n]|$))', // a top-level line that is not `key:`
  ].join('|'),
  'g',
);
/** The keys of the top-level lines (each a `key:` line once {@link AFTER_HEADER} found no other). */
const TOP_KEYS = /^[A-Za-z_][A-Za-z0-9_.-]*(?=:)/gm;

/**
 * The identity of a small document in synth's layout, with a few regex searches instead of a walk over its lines (a
 * diff reads thousands, most while the code is still cold); undefined when {@link scanIdentityByLines} might read it
 * differently, so it gives the same answer whenever it gives one (test/unit/diff/shared-documents.test.ts). Lines at
 * two spaces are held to metadata's rules everywhere (stricter than needed outside metadata, never looser).
 */
export function headerIdentity(text: string): ScannedIdentity | undefined {
  if (text.length > SKIP_BY_REGEX_CHARS) return undefined;
  HEADER.lastIndex = 0;
  const m = HEADER.exec(text);
  if (m === null) return undefined;
  AFTER_HEADER.lastIndex = m[0].length - 1;
  if (AFTER_HEADER.test(text)) return undefined;
  const keys = text.match(TOP_KEYS)!;
  if (new Set(keys).size !== keys.length) return undefined; // a key given twice
  const [apiVersion, kind, name, namespace] = [scalar(m[1]), scalar(m[2]), scalar(m[3]), scalar(m[4])];
  if (apiVersion === undefined || kind === undefined || name === undefined || kind.endsWith('List')) return undefined;
  if (m[4] !== undefined && namespace === undefined) return undefined;
  return { apiVersion, kind, name, ...(namespace !== undefined ? { namespace } : {}) };
}

/**
 * {@link scanIdentity} by walking the text: only lines at column 0 and the direct children of `metadata:` are looked
 * at, without splitting the text.
 */
export function scanIdentityByLines(text: string): ScannedIdentity | undefined {
  if (text.includes('\t') || text.includes('\r')) return undefined;
  let at = 0;
  if (text.startsWith('---')) {
    if (lineAt(text, 0) !== '---') return undefined;
    at = nextLine(text, 0);
  }
  const keys: string[] = [];
  let apiVersionRaw: string | undefined;
  let kindRaw: string | undefined;
  let metaName: string | undefined;
  let metaNamespace: string | undefined;
  // top-level lines only: nested content is skipped
  for (; at >= 0 && at < text.length; at = nextLineIndentedAtMost(text, at, 0)) {
    const c = text.charCodeAt(at);
    if (c === 32 || c === 10 || c === 35) continue; // nested content, blank lines and comments
    const m = keyAt(text, at);
    if (m === null || keys.includes(m[1]!)) return undefined;
    keys.push(m[1]!);
    if (m[1] === 'apiVersion' || m[1] === 'kind') {
      if (scalar(m[2]) === undefined || !endsAt(text, at, 0)) return undefined;
      if (m[1] === 'apiVersion') apiVersionRaw = m[2];
      else kindRaw = m[2];
    } else if (m[1] === 'metadata') {
      if (m[2] !== undefined && m[2] !== '') return undefined;
      let childIndent = -1;
      for (
        let l = nextLine(text, at);
        l >= 0 && l < text.length;
        l = childIndent < 0 ? nextLine(text, l) : nextLineIndentedAtMost(text, l, childIndent)
      ) {
        const n = spacesAt(text, l);
        if (!contentAt(text, l + n)) continue;
        if (n === 0) break;
        if (childIndent < 0) childIndent = n;
        if (n < childIndent) return undefined;
        if (n !== childIndent) continue;
        // only name and namespace are read; any other child need only be a `key:` line
        if (!text.startsWith('name:', l + n) && !text.startsWith('namespace:', l + n)) {
          if (!isKeyLineAt(text, l + n)) return undefined;
          continue;
        }
        const child = keyAt(text, l + n);
        if (child === null) return undefined;
        const value = scalar(child[2]);
        if (
          value === undefined ||
          !endsAt(text, l, n) ||
          (child[1] === 'name' ? metaName : metaNamespace) !== undefined
        )
          return undefined;
        if (child[1] === 'name') metaName = value;
        else metaNamespace = value;
      }
    }
  }
  const apiVersion = scalar(apiVersionRaw);
  const kind = scalar(kindRaw);
  if (
    apiVersion === undefined ||
    kind === undefined ||
    !keys.includes('metadata') ||
    metaName === undefined ||
    kind.endsWith('List')
  )
    return undefined;
  return { apiVersion, kind, name: metaName, ...(metaNamespace !== undefined ? { namespace: metaNamespace } : {}) };
}

/** A direct child of a block mapping key: its raw value on the key's line (undefined when empty) and where its line starts. */
interface BlockChild {
  readonly raw: string | undefined;
  readonly at: number;
  readonly indent: number;
}

/**
 * The direct children of the block mapping whose key is on the line at `at` (indented `indent`), or undefined when
 * they are not laid out plainly (a child less indented than the first, a line that is not `key: value`, a repeated
 * key). Sequence items at the children's indent (`- ...` under a key with an empty value) are skipped.
 */
function blockChildren(text: string, at: number, indent: number): Map<string, BlockChild> | undefined {
  const out = new Map<string, BlockChild>();
  let childIndent = -1;
  let last: BlockChild | undefined;
  for (
    let l = nextLine(text, at);
    l >= 0 && l < text.length;
    l = childIndent < 0 ? nextLine(text, l) : nextLineIndentedAtMost(text, l, childIndent)
  ) {
    const { n, content } = indentAt(text, l);
    if (!content) continue;
    if (n <= indent) break;
    if (childIndent < 0) childIndent = n;
    if (n < childIndent) return undefined;
    if (n !== childIndent) continue;
    const line = lineAt(text, l + n);
    if (line === '-' || line.startsWith('- ')) {
      if (last === undefined || (last.raw !== undefined && last.raw !== '')) return undefined;
      continue;
    }
    const m = TOP_KEY.exec(line);
    if (m === null || out.has(m[1]!)) return undefined;
    out.set(m[1]!, (last = { raw: m[2], at: l, indent: n }));
  }
  return out;
}

/** The scalar value of a child read by {@link blockChildren}, when it is a plain or simply quoted one-line scalar. */
const childScalar = (text: string, c: BlockChild | undefined): string | undefined =>
  c !== undefined && endsAt(text, c.at, c.indent) ? scalar(c.raw) : undefined;

/** What {@link scanCrdScope} reads from a CustomResourceDefinition: the kind it defines and whether it is cluster-scoped. */
export interface ScannedCrdScope {
  readonly group: string;
  readonly kind: string;
  readonly clusterScoped: boolean;
}

/**
 * `spec.group`, `spec.names.kind` and `spec.scope` of a CustomResourceDefinition document, read from its plain block
 * layout without parsing it (a CRD is hundreds of KiB, and the diff needs its scope for every object of its kind);
 * undefined when they are not laid out that simply, or the scope is neither `Cluster` nor `Namespaced`.
 */
export function scanCrdScope(text: string): ScannedCrdScope | undefined {
  if (scanIdentity(text)?.kind !== 'CustomResourceDefinition') return undefined;
  let spec: number | undefined;
  for (
    let at = text.startsWith('---') ? nextLine(text, 0) : 0;
    at >= 0 && at < text.length;
    at = nextLineIndentedAtMost(text, at, 0)
  )
    if (text.startsWith('spec:', at) && (lineAt(text, at) === 'spec:' || lineAt(text, at) === 'spec: ')) {
      spec = at;
      break;
    }
  if (spec === undefined) return undefined;
  const children = blockChildren(text, spec, 0);
  const names = children?.get('names');
  if (children === undefined || names === undefined || (names.raw !== undefined && names.raw !== '')) return undefined;
  const group = childScalar(text, children.get('group'));
  const scope = childScalar(text, children.get('scope'));
  const nameChildren = blockChildren(text, names.at, names.indent);
  const kind = nameChildren && childScalar(text, nameChildren.get('kind'));
  if (group === undefined || kind === undefined || (scope !== 'Cluster' && scope !== 'Namespaced')) return undefined;
  return { group, kind, clusterScoped: scope === 'Cluster' };
}
