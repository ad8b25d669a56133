/** `-o table` (default): one row per capability with state, requirement, the evidence that put it there and what is next. */
import Table from 'cli-table3';
import pc from 'picocolors';
import type { CapabilityRow, VerifyReport } from '../report.js';
import { tupleLine } from '../tuple.js';

/** The last proven fact of a row, the one that put it at its state, or `-`. */
export function decisiveEvidence(row: CapabilityRow): string {
  const proven = row.evidence.filter((e) => e.verdict === 'proven' && e.step === row.state);
  const e = proven[proven.length - 1];
  return e === undefined ? '-' : e.message;
}

/** The next step of a row, led by its reason code (what docs/output.md documents and scripts match), or `-`. */
export function nextCell(row: CapabilityRow): string {
  return row.next === null ? '-' : row.nextReason ? `[${row.nextReason}] ${row.next}` : row.next;
}

/** Renders the report as a terminal table; `color` adds ANSI colours (default false, so output is stable in files). */
export function renderTable(report: VerifyReport, opts: { color?: boolean } = {}): string {
  const paint = opts.color === true ? pc : pc.createColors(false);
  const table = new Table({
    head: ['capability', 'state', 'required', 'evidence', 'next'],
    style: { head: [], border: [] },
    wordWrap: true,
    // Capability names are never cut (the first column fits the longest, up to 64 characters).
    colWidths: [Math.min(64, Math.max(12, ...report.capabilities.map((c) => c.name.length)) + 2), 12, 12, 44, 52],
  });
  for (const row of report.capabilities) {
    const state = row.met ? paint.green(row.state) : paint.red(row.state);
    table.push([row.name, state, row.required, decisiveEvidence(row), nextCell(row)]);
  }
  const lines = [
    `environment ${report.environment.name} (release ${report.environment.release}, from ${report.environment.source})`,
    `tuple: ${tupleLine(report.tuple)}`,
    table.toString(),
  ];
  if (report.leftovers.length > 0)
    lines.push(paint.red(`left behind (delete by hand): ${report.leftovers.join('; ')}`));
  const failing = report.capabilities.filter((c) => !c.met).length;
  lines.push(
    report.outcome === 'verified'
      ? paint.green('all required capabilities reached their required state')
      : paint.red(`${failing} required capabilit${failing === 1 ? 'y is' : 'ies are'} below the required state`),
  );
  return lines.join('\n') + '\n';
}
