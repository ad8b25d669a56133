/**
 * Where two long strings differ, for the one-line field view of the renderers: a ConfigMap value holding a JSON or YAML
 * document that changed deep inside must not print the same truncated prefix on both sides.
 */

/** Characters of unchanged text shown before and after the difference of a single-line string. */
const CONTEXT = 20;
/** Characters of unchanged text, at most, shown before the difference on its line of a multi-line string. */
const LINE_CONTEXT = 60;
/** Characters of the differing part shown, at most, on each side (the rest is cut with `…`). */
const MAX_CHANGE = 60;

/** The place of the first difference (`line 4` for multi-line strings, `char 213` otherwise, 1-based) and the window on each side. */
export interface StringWindow {
  readonly at: string;
  readonly before: string;
  readonly after: string;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function commonSuffix(a: string, b: string, prefix: number): number {
  const n = Math.min(a.length, b.length) - prefix;
  let i = 0;
  while (i < n && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  return i;
}

/** `str[start, end)` as a JSON string literal, with `…` inside the quotes where text is cut off. */
function quoted(str: string, start: number, end: number): string {
  return `"${start > 0 ? '…' : ''}${JSON.stringify(str.slice(start, end)).slice(1, -1)}${end < str.length ? '…' : ''}"`;
}

/**
 * The windows of two different strings around their difference. Single-line strings: {@link CONTEXT} characters either
 * side of the differing part. Multi-line strings: the changed line(s), from the start of the first changed line (at most
 * {@link LINE_CONTEXT} characters before the difference) to the end of the last (at most {@link CONTEXT} characters
 * after it). The differing part is cut at {@link MAX_CHANGE} characters. Each window is a JSON string literal
 * (newlines escaped) with `…` where text is left out.
 */
export function stringWindow(before: string, after: string): StringWindow {
  const prefix = commonPrefix(before, after);
  const suffix = commonSuffix(before, after, prefix);
  const multiLine = before.includes('\n') || after.includes('\n');
  const lineStart = before.lastIndexOf('\n', prefix - 1) + 1;
  let start = multiLine ? Math.max(lineStart, prefix - LINE_CONTEXT) : Math.max(0, prefix - CONTEXT);
  // Indentation carries no news: the window of a multi-line string starts at the line's first visible character.
  while (multiLine && start < prefix && (before[start] === ' ' || before[start] === '\t')) start++;
  const side = (str: string): string => {
    const changeEnd = str.length - suffix;
    if (changeEnd - prefix > MAX_CHANGE) return quoted(str, start, prefix + MAX_CHANGE);
    const lineEnd = str.indexOf('\n', changeEnd);
    const end = Math.min(str.length, changeEnd + CONTEXT, multiLine && lineEnd >= 0 ? lineEnd : str.length);
    return quoted(str, start, end);
  };
  const line = before.slice(0, prefix).split('\n').length;
  return { at: multiLine ? `line ${line}` : `char ${prefix + 1}`, before: side(before), after: side(after) };
}
