/** `-o markdown`: a report for a pull request or an onboarding page. Table cells are escaped (`|`, newlines). */
import type { VerifyReport } from '../report.js';
import { TUPLE_KEYS } from '../tuple.js';
import { decisiveEvidence, nextCell } from './table.js';

function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

export function renderMarkdown(report: VerifyReport): string {
  const out: string[] = [];
  const mark = report.outcome === 'verified' ? '✅' : '❌';
  out.push(`## ${mark} AgentPlane verify: ${cell(report.environment.name)}`, '');
  out.push(
    `Release \`${report.environment.release}\`, started ${report.startedAt}, took ${(report.durationMs / 1000).toFixed(1)} s.`,
    '',
  );
  out.push('| capability | state | required | evidence | next |', '|---|---|---|---|---|');
  for (const row of report.capabilities) {
    const state = row.met ? row.state : `**${row.state}**`;
    out.push(
      `| \`${cell(row.name)}\` | ${state} | ${row.required} | ${cell(decisiveEvidence(row))} | ${cell(nextCell(row))} |`,
    );
  }
  out.push(
    '',
    '<details><summary>Compatibility tuple</summary>',
    '',
    '| component | version | source |',
    '|---|---|---|',
  );
  for (const k of TUPLE_KEYS) out.push(`| ${k} | ${cell(report.tuple[k].value)} | ${cell(report.tuple[k].source)} |`);
  out.push('', '</details>');
  if (report.leftovers.length > 0) {
    out.push(
      '',
      '**Left behind by the workload probes (delete by hand):**',
      '',
      ...report.leftovers.map((l) => `- ${cell(l)}`),
    );
  }
  return out.join('\n') + '\n';
}
