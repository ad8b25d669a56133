/**
 * Error assertions by type and reason code, never by sentence: the error a call throws, checked to be an instance of
 * the expected class with the expected `reason`, returned typed so a test can assert its structured fields.
 */
import { expect } from '@jest/globals';

type ErrorClass<E> = abstract new (...args: any[]) => E;

function check<E>(err: unknown, type: ErrorClass<E>, reason: string): E {
  expect(err).toBeInstanceOf(type);
  expect((err as { reason?: unknown }).reason).toBe(reason);
  return err as E;
}

/** The error `fn` throws, asserted to be a `type` with `reason`; fails the test when `fn` throws nothing. */
export function thrownBy<E>(fn: () => unknown, type: ErrorClass<E>, reason: string): E {
  try {
    fn();
  } catch (err) {
    return check(err, type, reason);
  }
  throw new Error(`expected a ${type.name} (${reason}); nothing was thrown`);
}

/** The error `promise` rejects with, asserted to be a `type` with `reason`; fails the test when it resolves. */
export async function rejectedBy<E>(promise: Promise<unknown>, type: ErrorClass<E>, reason: string): Promise<E> {
  try {
    await promise;
  } catch (err) {
    return check(err, type, reason);
  }
  throw new Error(`expected a ${type.name} (${reason}); the promise resolved`);
}
