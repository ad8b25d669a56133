/**
 * Lazy values whose errors survive rendering. cdk8s 2.x's `ApiObject.toJson` rethrows whatever a lazy value throws as a
 * new Error holding only its text (`Failed serializing construct at path …: <error>`, no `cause`;
 * `cdk8s/lib/api-object.js`), so a lazy value of ours keeps what it threw here and the renderer reports it by type.
 */
import { Lazy } from './cdk8s.js';

let thrown: unknown;

/** `Lazy.any(produce)` that keeps an error `produce` throws for {@link takeRenderError}. */
export function lazy<T>(produce: () => T): T {
  return Lazy.any({
    produce: () => {
      try {
        return produce();
      } catch (err) {
        thrown = err;
        throw err;
      }
    },
  }) as T;
}

/** The error a lazy value threw during the last failed `toJson`, once (then forgotten). */
export function takeRenderError(): unknown {
  const err = thrown;
  thrown = undefined;
  return err;
}
