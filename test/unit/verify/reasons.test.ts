import { readFileSync } from 'node:fs';
import { ADAPTER_REASONS, EXECUTION_REASONS } from '../../../src/adapter/reasons.js';
import { EVIDENCE_REASONS } from '../../../src/verify/reasons.js';

const output = readFileSync(new URL('../../../docs/output.md', import.meta.url), 'utf8');

describe('reason codes', () => {
  test('every evidence and adapter reason is CamelCase and documented in docs/output.md with its meaning', () => {
    const all = { ...EVIDENCE_REASONS, ...ADAPTER_REASONS, ...EXECUTION_REASONS };
    const undocumented = Object.entries(all).filter(
      ([code, meaning]) => !output.includes(`| \`${code}\` | ${meaning.replace(/\|/g, '\\|')} |`),
    );
    expect(undocumented).toEqual([]);
    expect(Object.keys(all).filter((code) => !/^[A-Z][A-Za-z0-9]*$/.test(code))).toEqual([]);
  });

  test('docs/output.md documents no reason the code does not define', () => {
    const documented = [...output.matchAll(/^\| `([A-Z][A-Za-z0-9]*)` \|/gm)].map((m) => m[1]!);
    expect(
      documented.filter(
        (code) => !(code in EVIDENCE_REASONS) && !(code in ADAPTER_REASONS) && !(code in EXECUTION_REASONS),
      ),
    ).toEqual([]);
  });
});
