/**
 * Renderers of a {@link DiffReport}: `text` (terminal), `markdown` (fits a pull-request comment: GitHub caps a
 * comment at 65,536 characters, so past {@link MARKDOWN_BUDGET} objects show field changes only, then are left out, with a note) and `json`
 * (the report itself, stable field names). Every renderer works on normalized, redacted objects only.
 */
import picocolors from 'picocolors';
import type { DiffReport, ObjectDiff } from './compare.js';
import { stringWindow } from './string-window.js';
import type { FieldChange } from './structural.js';

/** Colour only on a terminal (or with FORCE_COLOR), never because `CI` is set: reports go to files and logs as plain text. */
const pc = picocolors.createColors(
  ('FORCE_COLOR' in process.env || Boolean(process.stdout.isTTY)) && !('NO_COLOR' in process.env),
);

export const DIFF_FORMATS = ['text', 'markdown', 'json'] as const;
export type DiffFormat = (typeof DIFF_FORMATS)[number];

/** Characters the markdown renderer fills before it shortens or leaves out objects (GitHub's comment limit is 65,536). */
export const MARKDOWN_BUDGET = 60_000;

const MAX_VALUE = 120;

function value(v: unknown): string {
  const s = JSON.stringify(v) ?? 'undefined';
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 1)}…` : s;
}

/**
 * One line per field change: `~ spec.replicas: 1 -> 2`, `+ path: value`, `- path`, `↕ path: position 1 -> 0`. A changed
 * string too long to show whole shows where it differs: `~ data["sandbox.json"] (line 9): "…\"image\": \"python:3.11\"…" -> "…\"image\": \"python:3.12\"…"`
 * (see {@link stringWindow}). Values are already normalized and redacted (Secret data are markers).
 */
export function fieldLine(f: FieldChange): string {
  switch (f.op) {
    case 'added':
      return `+ ${f.path}: ${value(f.after)}`;
    case 'removed':
      return `- ${f.path}`;
    case 'changed': {
      const whole = (v: unknown): boolean => (JSON.stringify(v) ?? '').length <= MAX_VALUE;
      if (typeof f.before !== 'string' || typeof f.after !== 'string' || (whole(f.before) && whole(f.after)))
        return `~ ${f.path}: ${value(f.before)} -> ${value(f.after)}`;
      const w = stringWindow(f.before, f.after);
      return `~ ${f.path} (${w.at}): ${w.before} -> ${w.after}`;
    }
    case 'moved':
      return `↕ ${f.path}: position ${String(f.from)} -> ${String(f.to)}`;
  }
}

function summary(r: DiffReport): string {
  const { added, removed, changed, unchanged } = r.counts;
  return `${changed} changed, ${added} added, ${removed} removed, ${unchanged} unchanged`;
}

const MARK: Record<ObjectDiff['change'], string> = { added: '+', removed: '-', changed: '~' };

/** The hunks of an object's unified view (its `===`, `---` and `+++` header lines dropped; `@@` lines kept). */
function hunks(o: ObjectDiff): string[] {
  return o.unified.split('\n').slice(3);
}

function colourLine(line: string): string {
  if (line.startsWith('+') && !line.startsWith('+++')) return pc.green(line);
  if (line.startsWith('-') && !line.startsWith('---')) return pc.red(line);
  if (line.startsWith('@@')) return pc.cyan(line);
  return line;
}

/** Terminal text: summary, risks, then each differing object with its field changes and unified view. */
export function renderText(r: DiffReport): string {
  const out = [`diff ${r.base} -> ${r.head}: ${summary(r)}`];
  if (r.risks.length > 0) {
    out.push('', pc.bold(`Risks (${r.risks.length}):`));
    for (const risk of r.risks) {
      out.push(`  ${pc.yellow(`[${risk.rule}]`)} ${risk.object}: ${risk.message}`);
      for (const d of risk.details) out.push(`      ${d}`);
    }
  }
  for (const o of r.objects) {
    out.push('', pc.bold(`${MARK[o.change]} ${o.key} (${o.change})`));
    for (const f of o.fields) out.push(`    ${fieldLine(f)}`);
    out.push(
      ...hunks(o)
        .filter((l) => l !== '')
        .map((l) => `    ${colourLine(l)}`),
    );
  }
  return `${out.join('\n')}\n`;
}

function mdEscape(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

/** Markdown for a pull-request comment: summary, a risk table, and one collapsed block per object, all within {@link MARKDOWN_BUDGET} characters. */
export function renderMarkdown(r: DiffReport): string {
  const out = [`### agentplane diff \`${r.base}\` → \`${r.head}\``, '', `**${summary(r)}**`];
  if (r.risks.length > 0) {
    out.push('', '| risk | object | what it does |', '| --- | --- | --- |');
    for (const risk of r.risks)
      out.push(
        `| \`${risk.rule}\` | \`${mdEscape(risk.object)}\` | ${mdEscape([risk.message, ...risk.details].join('\n'))} |`,
      );
  }
  let used = out.join('\n').length;
  let cut = 0;
  let omitted = 0;
  for (const o of r.objects) {
    const head = [
      '',
      `<details><summary><code>${MARK[o.change]} ${o.key}</code> (${o.change}, ${o.fields.length} field change(s))</summary>`,
      '',
    ];
    const full = [...head, '```diff', hunks(o).join('\n').trimEnd(), '```', '', '</details>'].join('\n');
    const brief = [
      ...head,
      ...o.fields.slice(0, 20).map((f) => `- \`${mdEscape(fieldLine(f))}\``),
      '',
      '</details>',
    ].join('\n');
    const block =
      used + full.length <= MARKDOWN_BUDGET ? full : used + brief.length <= MARKDOWN_BUDGET ? brief : undefined;
    if (block === undefined) omitted += 1;
    else {
      if (block === brief) cut += 1;
      out.push(block);
      used += block.length + 1;
    }
  }
  if (cut > 0 || omitted > 0) {
    out.push(
      '',
      `_To fit a pull-request comment ${cut} object(s) show field changes only and ${omitted} object(s) are left out; run \`agentplane diff -o text\` for everything._`,
    );
  }
  return `${out.join('\n')}\n`;
}

/** The report as JSON (2-space indent, trailing newline). */
export function renderJson(r: DiffReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}

/** Renders in the given format. */
export function renderDiff(r: DiffReport, format: DiffFormat): string {
  return format === 'json' ? renderJson(r) : format === 'markdown' ? renderMarkdown(r) : renderText(r);
}
