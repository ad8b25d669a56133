/** The reasons of plan-upgrade's v0.5 -> v1.0 findings and of migrate-storage's stops are documented in docs/output.md. */
import { readFileSync } from 'node:fs';
import { loadRelease, planUpgrade } from '../../../src/releases/index.js';
import { releaseFacts } from '../../../src/releases/supported.js';

const output = readFileSync(new URL('../../../docs/output.md', import.meta.url), 'utf8');

test('every finding reason of v0.4.6/v0.5.6 -> v1.0.3 that is not a schema change is documented', async () => {
  const [r046, r056, r103] = await Promise.all([loadRelease('v0.4.6'), loadRelease('v0.5.6'), loadRelease('v1.0.3')]);
  const reasons = new Set(
    [planUpgrade(r056, r103), planUpgrade(r046, r103, undefined, [{ facts: releaseFacts('v0.5.6') }])]
      .flatMap((p) => p.findings.map((f) => f.reason))
      .filter((r) => !r.startsWith('Schema') && !r.startsWith('Condition') && r !== 'KnownDefect'),
  );
  expect([...reasons].filter((r) => !output.includes(`\`${r}\``))).toEqual([]);
  expect(reasons.size).toBeGreaterThanOrEqual(7);
});

test('every migrate-storage stop reason is documented with its exit code', () => {
  for (const [code, reason] of [
    [13, 'StorageWriteFailed'],
    [13, 'StoragePruneFailed'],
    [14, 'StorageCountUnconfirmed'],
    [7, 'StorageReadFailed'],
  ] as const)
    expect(output).toContain(`| ${code} | \`${reason}\` |`);
});
