/**
 * Renderers of an {@link UpgradePlan} (from the releases layer): `text`, `markdown` (for a pull request or an
 * upgrade ticket) and `json` (the plan itself).
 */
import type { UpgradeFinding, UpgradePlan } from '../releases/index.js';
import type { DiffFormat } from './render.js';

const ORDER: Readonly<Record<UpgradeFinding['severity'], number>> = { block: 0, migrate: 1, review: 2, info: 3 };

function sorted(plan: UpgradePlan): UpgradeFinding[] {
  return [...plan.findings].sort((a, b) => ORDER[a.severity] - ORDER[b.severity]);
}

function ops(f: UpgradeFinding): string {
  return f.operations.length === 0 ? '-' : f.operations.join(', ');
}

/** `unknown (assumed: needs-migration)` for an unknown verdict, else the verdict. */
function verdictText(plan: UpgradePlan): string {
  return plan.assumedVerdict === undefined ? plan.verdict : `${plan.verdict} (assumed: ${plan.assumedVerdict})`;
}

/** ` (downgrade)` for a downgrade. */
function directionText(plan: UpgradePlan): string {
  return plan.direction === 'downgrade' ? ' (downgrade)' : '';
}

/** Terminal text: verdict, what was not read, path, then findings by severity. */
export function renderPlanText(plan: UpgradePlan): string {
  const out = [
    `plan-upgrade ${plan.from} -> ${plan.to}${directionText(plan)}: ${verdictText(plan)}`,
    `stored versions: ${plan.storedVersionsSource}`,
  ];
  if (plan.unknowns.length > 0)
    out.push('', 'Not read (the verdict depends on it):', ...plan.unknowns.map((u) => `  - ${u}`));
  if (plan.path.length > 0) out.push('', 'Path:', ...plan.path.map((s, i) => `  ${i + 1}. ${s}`));
  out.push('', 'Findings:');
  for (const f of sorted(plan))
    out.push(
      `  [${f.severity}] ${f.topic}: ${f.message}${f.operations.length ? ` (affects ${ops(f)})` : ''}${f.source ? ` — ${f.source}` : ''}`,
    );
  return `${out.join('\n')}\n`;
}

function md(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

/** Markdown: verdict, path as a numbered list, findings as a table. */
export function renderPlanMarkdown(plan: UpgradePlan): string {
  const out = [
    `### agentplane plan-upgrade \`${plan.from}\` → \`${plan.to}\`${directionText(plan)}: **${verdictText(plan)}**`,
    '',
    `Stored versions: ${plan.storedVersionsSource}`,
  ];
  if (plan.unknowns.length > 0)
    out.push('', '**Not read** (the verdict depends on it)', '', ...plan.unknowns.map((u) => `- ${md(u)}`));
  if (plan.path.length > 0) out.push('', '**Path**', '', ...plan.path.map((s, i) => `${i + 1}. ${s}`));
  out.push('', '| severity | topic | finding | adapter operations | source |', '| --- | --- | --- | --- | --- |');
  for (const f of sorted(plan))
    out.push(
      `| ${f.severity} | ${f.topic} | ${md(f.message)} | ${ops(f)} | ${f.source ? `\`${md(f.source)}\`` : ''} |`,
    );
  return `${out.join('\n')}\n`;
}

/** Renders a plan in the given format. */
export function renderPlan(plan: UpgradePlan, format: DiffFormat): string {
  if (format === 'json') return `${JSON.stringify(plan, null, 2)}\n`;
  return format === 'markdown' ? renderPlanMarkdown(plan) : renderPlanText(plan);
}
