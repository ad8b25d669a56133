/** Which create answers leave an object to clean up (a refused create is never reported as left behind). */
import { createMayHaveSucceeded } from '../../../src/verify/workload.js';
import type { AdapterError } from '../../../src/adapter/types.js';

const failed = (category: AdapterError['category'], code?: number) => ({
  kind: 'failed' as const,
  error: { category, message: `${category}`, ...(code !== undefined ? { code } : {}) },
});

describe('createMayHaveSucceeded', () => {
  test('ok: the object exists', () => {
    expect(createMayHaveSucceeded({ kind: 'ok', value: {} })).toBe(true);
  });

  test('refusals and checks before the call made nothing', () => {
    const refused = [
      failed('forbidden', 403),
      failed('unauthenticated', 401),
      failed('not-found', 404),
      failed('conflict', 409),
      failed('invalid', 422),
      failed('too-large', 413),
    ];
    expect(refused.map((r) => [r.error.category, createMayHaveSucceeded(r)])).toEqual(
      refused.map((r) => [r.error.category, false]),
    );
    expect(
      createMayHaveSucceeded({ kind: 'rejected', reason: 'InvalidOperationId', message: 'operation id too long' }),
    ).toBe(false);
    expect(
      createMayHaveSucceeded({
        kind: 'unsupported',
        capability: 'extensions-api',
        state: 'absent',
        reason: 'ExtensionsApiNotServed',
        message: 'not served',
      }),
    ).toBe(false);
  });

  test('a lost answer or a server error may have stored it: still cleaned up', () => {
    const maybe = [failed('timeout'), failed('unreachable'), failed('internal', 500)];
    expect(maybe.map((r) => [r.error.category, createMayHaveSucceeded(r)])).toEqual(
      maybe.map((r) => [r.error.category, true]),
    );
  });
});
