import { fact, type Evidence, type FactInput } from '../../../src/verify/evidence.js';
import { meets, settle } from '../../../src/verify/states.js';

const base = {
  capability: 'runtime-exec',
  reason: 'RuntimeDeclared',
  subject: 'x',
  message: 'm',
  at: '2026-01-01T00:00:00.000Z',
} as const;
const e = (
  step: FactInput['step'],
  verdict: FactInput['verdict'],
  message = `${step} ${verdict}`,
  extra: Partial<FactInput> = {},
): Evidence => fact({ ...base, step, verdict, message, ...extra });
const ladder = (upTo: number): Evidence[] =>
  (['discovered', 'compatible', 'configured', 'verified'] as const).slice(0, upTo).map((s) => e(s, 'proven'));

describe('settle', () => {
  test('no evidence is absent, naming the first missing step', () => {
    expect(settle([])).toEqual({ state: 'absent', next: expect.any(String), nextReason: 'NoEvidence' });
  });

  test('a fully proven ladder is verified with nothing next', () => {
    expect(settle(ladder(4))).toEqual({ state: 'verified', next: null, nextReason: null });
  });

  test('a timeout (unknown) at verified leaves the state at configured with the reason', () => {
    const s = settle([
      ...ladder(3),
      e('verified', 'unknown', 'runtime API did not answer in 5s', { reason: 'RuntimeTimeout' }),
    ]);
    expect(s).toEqual({ state: 'configured', next: expect.any(String), nextReason: 'RuntimeTimeout' });
  });

  test('one proven and one missing fact at the same step does not advance (no lucky single success)', () => {
    const s = settle([
      ...ladder(3),
      e('verified', 'proven', 'nonce 1 echoed'),
      e('verified', 'missing', 'nonce 2 answered "wrong"', { reason: 'NonceMismatch' }),
    ]);
    expect(s.state).toBe('configured');
    expect(s.nextReason).toBe('NonceMismatch');
  });

  test('steps are never skipped: verified evidence without configured stays at compatible', () => {
    const s = settle([...ladder(2), e('verified', 'proven')]);
    expect(s.state).toBe('compatible');
    expect(s.nextReason).toBe('NoEvidence');
  });

  test('missing wins over unknown when explaining what is next', () => {
    const s = settle([
      e('discovered', 'unknown', 'forbidden to read', { reason: 'Forbidden' }),
      e('discovered', 'missing', 'CRD absent', { reason: 'CrdNotInstalled' }),
    ]);
    expect(s).toMatchObject({ state: 'absent', nextReason: 'CrdNotInstalled' });
  });

  test('a contradiction makes the capability failed, whatever else was proven', () => {
    expect(
      settle([
        ...ladder(3),
        e('verified', 'contradicted', 'conversion failed: x509 unknown authority although caBundle is set', {
          reason: 'ConversionTlsFailure',
        }),
      ]),
    ).toMatchObject({ state: 'failed', nextReason: 'ConversionTlsFailure' });
  });

  test('an unsupported fact makes the capability unsupported', () => {
    expect(settle([e('discovered', 'unsupported', 'no snapshot API')]).state).toBe('unsupported');
  });

  test('the missing acceptance test is named in next', () => {
    const s = settle([
      ...ladder(3),
      e('verified', 'unknown', 'NetworkPolicy enforcement cannot be read from the API', {
        reason: 'NotTested',
        missingTest: 'netpol-enforcement',
      }),
    ]);
    expect(s).toMatchObject({ state: 'configured', nextReason: 'NotTested' });
    // The test's name is an identifier the reader acts on, not wording: the row's prose must carry it.
    expect(s.next).toContain('netpol-enforcement');
  });
});

describe('meets', () => {
  test.each([
    ['verified', 'verified', true],
    ['configured', 'verified', false],
    ['verified', 'configured', true],
    ['configured', 'configured', true],
    ['compatible', 'configured', false],
    ['failed', 'discovered', false],
    ['unsupported', 'configured', false],
    ['failed', 'absent', true],
  ] as const)('%s meets %s: %s', (state, required, ok) => {
    expect(meets(state, required)).toBe(ok);
  });
});
