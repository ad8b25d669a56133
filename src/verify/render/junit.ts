/**
 * `--junit FILE`: JUnit XML for CI, one testcase per capability in suite `agentplane-verify`; a capability below
 * its required state is a `<failure>` whose message is `next`, with the evidence as the body.
 */
import type { VerifyReport } from '../report.js';

function xml(text: string): string {
  // XML 1.0 forbids most control characters; drop them, escape the five specials.
  // eslint-disable-next-line no-control-regex
  const printable = text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '');
  return printable
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export function renderJunit(report: VerifyReport): string {
  const failures = report.capabilities.filter((c) => !c.met).length + (report.leftovers.length > 0 ? 1 : 0);
  const tests = report.capabilities.length + (report.leftovers.length > 0 ? 1 : 0);
  const seconds = (report.durationMs / 1000).toFixed(3);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agentplane-verify" tests="${tests}" failures="${failures}" time="${seconds}">`,
    `  <testsuite name="${xml(report.environment.name)}" tests="${tests}" failures="${failures}" timestamp="${xml(report.startedAt)}" time="${seconds}">`,
  ];
  for (const row of report.capabilities) {
    const ms = row.evidence.reduce((sum, e) => sum + (e.durationMs ?? 0), 0);
    lines.push(`    <testcase classname="agentplane.verify" name="${xml(row.name)}" time="${(ms / 1000).toFixed(3)}">`);
    const evidence = row.evidence.map((e) => `[${e.step}/${e.verdict}] ${e.subject}: ${e.message}`).join('\n');
    if (!row.met) {
      lines.push(
        `      <failure message="${xml(`${row.state} < ${row.required}: ${row.next ?? ''}`)}" type="${xml(row.state)}">${xml(evidence)}</failure>`,
      );
    } else {
      lines.push(`      <system-out>${xml(evidence)}</system-out>`);
    }
    lines.push('    </testcase>');
  }
  if (report.leftovers.length > 0) {
    lines.push(
      '    <testcase classname="agentplane.verify" name="cleanup">',
      `      <failure message="objects left behind" type="leftovers">${xml(report.leftovers.join('\n'))}</failure>`,
      '    </testcase>',
    );
  }
  lines.push('  </testsuite>', '</testsuites>');
  return lines.join('\n') + '\n';
}
