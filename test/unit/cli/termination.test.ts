/** The verifier pod's termination message: a summary within the 4 KiB the kubelet keeps, written without failing the run. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import {
  TERMINATION_MESSAGE_BYTES,
  terminationFailure,
  terminationSummary,
  withinBytes,
  writeTerminationMessage,
} from '../../../src/cli/termination.js';
import { fact } from '../../../src/verify/evidence.js';
import { buildReport } from '../../../src/verify/report.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { unknownTuple } from '../../../src/verify/tuple.js';

const at = '2026-12-05T05:00:00.000Z';

function report(leftovers: string[] = []) {
  const steps = ['discovered', 'compatible', 'configured', 'verified'] as const;
  return buildReport({
    environment: { name: 'dev-gvisor', release: 'v0.5.6', source: 'configmap:/etc/agentplane' },
    tuple: unknownTuple('not read in this test', { value: '0.1.0', source: 'package.json' }),
    requirements: requirementsFor(['sandbox-api', 'runtime-exec']),
    evidence: [
      ...steps.map((step) =>
        fact({
          capability: 'sandbox-api',
          step,
          verdict: 'proven',
          reason: 'CrdFound',
          subject: 's',
          message: 'm',
          at,
        }),
      ),
      ...steps.slice(0, 3).map((step) =>
        fact({
          capability: 'runtime-exec',
          step,
          verdict: 'proven',
          reason: 'CrdFound',
          subject: 's',
          message: 'm',
          at,
        }),
      ),
      fact({
        capability: 'runtime-exec',
        step: 'verified',
        verdict: 'unknown',
        reason: 'RuntimeTimeout',
        subject: 'sandboxd',
        message: 'runtime API did not answer in 5s',
        at,
      }),
    ],
    leftovers,
    startedAt: at,
    durationMs: 1000,
  });
}

describe('termination message', () => {
  test('outcome, exit code, where the report is, the unmet capability with its reason code, then the met ones', () => {
    const lines = terminationSummary(report(), 6, 'sbx/agentplane-verify-report').split('\n');
    expect(lines[0]).toMatch(/^agentplane verify: not-verified \(exit 6\)/);
    expect(lines[1]).toBe('report: ConfigMap sbx/agentplane-verify-report');
    expect(lines[2]).toMatch(/^runtime-exec: configured, required verified \(RuntimeTimeout\)/);
    expect(lines[3]).toBe('met: sandbox-api verified');
  });

  test('never more than 4 KiB, cut on a character boundary, the head kept', () => {
    const many = report(Array.from({ length: 400 }, (_, i) => `Sandbox sbx/probe-${i}: délété refused`));
    const text = terminationSummary(many, 6, 'sbx/agentplane-verify-report');
    expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(TERMINATION_MESSAGE_BYTES);
    expect(text.startsWith('agentplane verify: not-verified (exit 6)')).toBe(true);
    expect(text.endsWith('(truncated)')).toBe(true);
    expect(withinBytes('é'.repeat(3000))).not.toContain('\uFFFD');
    expect(withinBytes('short')).toBe('short');
    expect(Buffer.byteLength(terminationFailure('VerifyCouldNotRun', 'x'.repeat(10_000), 7))).toBeLessThanOrEqual(4096);
  });

  test('written to the termination log; an unwritable path warns and does not throw', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'agentplane-term-')), 'termination-log');
    writeTerminationMessage('hello', file);
    expect(readFileSync(file, 'utf8')).toBe('hello');
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(() => writeTerminationMessage('x', join(file, 'not-a-dir', 'f'))).not.toThrow();
      expect(stderr).toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
    }
  });
});
