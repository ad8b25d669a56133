/**
 * Tests match reasons and typed fields, never sentences: no test asserts on the words of a message, so rewording an
 * error or an evidence line never breaks a test and a changed meaning always does. Read from each test file's syntax
 * tree (message-scan.ts). An assertion whose subject *is* the text (the words an upstream component sent, a renderer
 * under test, a secret that must not appear) says so in a `// prose: <why>` comment before its statement.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { proseAssertions, sources } from './message-scan.js';

const TEST = path.resolve(import.meta.dirname, '../..');
const SCANS = sources(TEST).map((f) => proseAssertions(path.relative(TEST, f), readFileSync(f, 'utf8')));

test('the scan catches each form of assertion on message text and passes assertions on reasons and fields', () => {
  const bad = [
    'expect(() => f()).toThrow(/no such file/);',
    "await expect(p).rejects.toThrow('no such file');",
    "expect(err.message).toContain('claim');",
    'expect((err as Error).message).toMatch(/stale/);',
    "expect(r.kind === 'failed' && r.error.message).toBe('x');",
    "expect(plan.findings.map((f) => f.message)).toContain('Sandbox: stored');",
    "expect(ev[0]).toMatchObject({ verdict: 'unknown', message: 'probe boom' });",
    'expect(e.hint).toMatch(/--update-lock/);',
    "expect(xs.find((f) => f.message.startsWith('claim'))?.reason).toBe('A');",
  ];
  for (const line of bad) expect(proseAssertions('x.ts', line)).toEqual({ unmarked: [expect.any(String)], marked: [] });
  const good = [
    'expect(() => f()).toThrow(ReleaseNotFoundError);',
    "expect(err).toMatchObject({ reason: 'ChecksumMismatch', path: 'a/b' });",
    'expect(doc.message).toBe(err.message);',
    "expect(err.message).not.toContain('s3cr3t');",
    "expect(findings.map((f) => f.reason)).toEqual(['ClaimStale']);",
  ];
  for (const line of good) expect(proseAssertions('x.ts', line)).toEqual({ unmarked: [], marked: [] });
  expect(proseAssertions('x.ts', "// prose: kubelet's own words\nexpect(ev.message).toMatch(/no runtime/);")).toEqual({
    unmarked: [],
    marked: ["x.ts:2: kubelet's own words"],
  });
});

test('no test asserts on message text unless it says why the text is the subject', () => {
  expect(SCANS.flatMap((s) => s.unmarked)).toEqual([]);
});

test('each `// prose:` reason says why in a few words', () => {
  expect(SCANS.flatMap((s) => s.marked).filter((m) => m.slice(m.indexOf(': ') + 2).split(/\s+/).length < 3)).toEqual(
    [],
  );
});
