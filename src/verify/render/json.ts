/** `-o json`: the report as stable JSON (schema `agentplane.verify/v2`, see docs/output.md), two-space indented. */
import type { VerifyReport } from '../report.js';

export function renderJson(report: VerifyReport): string {
  return JSON.stringify(report, null, 2) + '\n';
}
