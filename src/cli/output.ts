/**
 * Shared output rendering for every command: `-o json|yaml|table|markdown`.
 * A command builds one {@link Report} (machine data + a table view of it) and calls {@link renderReport}.
 * JSON is 2-space indented with a trailing newline; YAML uses yaml 2 with `{ version: '1.1', lineWidth: 0 }`
 * (the options cdk8s uses, so `on`/`yes` stay quoted); table uses cli-table3; markdown is a GitHub pipe table.
 */
import { createRequire } from 'node:module';
import type TableType from 'cli-table3';
import { Option } from 'commander';

// yaml and cli-table3 are loaded on first use: a run prints one format, and JSON needs neither (~0.1 s of start-up).
const nodeRequire = createRequire(import.meta.url);

export const OUTPUT_FORMATS = ['table', 'json', 'yaml', 'markdown'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A cell of a table view. */
export type Cell = string | number | boolean;

/** What a command prints: `data` for json/yaml, `columns`/`rows` for table/markdown, optional `title` and `notes` (lines under the table). */
export interface Report {
  readonly title?: string;
  readonly data: unknown;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
  readonly notes?: readonly string[];
}

/** What `-o` accepts: the four formats, and `text` (the same as `table`) on commands that printed `text` before. */
export type OutputChoice = OutputFormat | 'text';

/**
 * The `-o, --output <format>` option of every command: table|json|yaml|markdown, default `table` unless given;
 * `textAlias` also accepts `text` as another name of `table`. Read the value with {@link outputFormat}.
 */
export function outputOption(
  defaultFormat: OutputFormat = 'table',
  opts: { readonly textAlias?: boolean } = {},
): Option {
  const choices: readonly string[] = opts.textAlias === true ? [...OUTPUT_FORMATS, 'text'] : OUTPUT_FORMATS;
  return new Option(
    '-o, --output <format>',
    opts.textAlias === true ? 'output format (text: the same as table)' : 'output format',
  )
    .choices(choices)
    .default(defaultFormat);
}

/** The format an `-o` value names (`text` is `table`). */
export function outputFormat(choice: OutputChoice): OutputFormat {
  return choice === 'text' ? 'table' : choice;
}

/**
 * Output of a command with its own table and markdown views: json and yaml from `data` (the JSON form), the others
 * from the views. The returned text ends with a newline.
 */
export function renderWith(
  format: OutputFormat,
  data: () => unknown,
  views: { readonly table: () => string; readonly markdown: () => string },
): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(data(), null, 2)}\n`;
    case 'yaml':
      return toYaml(data());
    case 'markdown':
      return views.markdown();
    case 'table':
      return views.table();
  }
}

/** YAML text the way cdk8s writes it (YAML 1.1 quoting, no line folding). */
export function toYaml(value: unknown): string {
  const { stringify } = nodeRequire('yaml') as typeof import('yaml');
  return stringify(value, { version: '1.1', lineWidth: 0 });
}

function escapeMarkdown(cell: Cell): string {
  return String(cell).replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

/** Renders a report in the given format; the returned text always ends with a newline. */
export function renderReport(format: OutputFormat, report: Report): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(report.data, null, 2)}\n`;
    case 'yaml':
      return toYaml(report.data);
    case 'markdown': {
      const lines: string[] = [];
      if (report.title !== undefined) lines.push(`### ${report.title}`, '');
      lines.push(`| ${report.columns.map(escapeMarkdown).join(' | ')} |`);
      lines.push(`| ${report.columns.map(() => '---').join(' | ')} |`);
      for (const row of report.rows) lines.push(`| ${row.map(escapeMarkdown).join(' | ')} |`);
      if (report.notes !== undefined && report.notes.length > 0) lines.push('', ...report.notes.map((n) => `- ${n}`));
      return `${lines.join('\n')}\n`;
    }
    case 'table': {
      const Table = nodeRequire('cli-table3') as typeof TableType;
      const table = new Table({ head: [...report.columns], style: { head: [], border: [] } });
      for (const row of report.rows) table.push(row.map(String));
      const parts: string[] = [];
      if (report.title !== undefined) parts.push(report.title);
      parts.push(table.toString());
      if (report.notes !== undefined) parts.push(...report.notes);
      return `${parts.join('\n')}\n`;
    }
  }
}
