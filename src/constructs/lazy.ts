/**
 * Values computed when an object is rendered. Not cdk8s's `Lazy`: cdk8s resolves `Lazy` with `instanceof`, which fails
 * when the app's cdk8s is another copy (the value is then refused as "non-simple"); every cdk8s 2 copy resolves an
 * object with a `resolve()` method (its implicit-token resolver) instead. cdk8s also rethrows what a value throws as a
 * new Error holding only its text (`cdk8s/lib/api-object.js`), so a value of ours keeps what it threw and the renderer
 * reports it by type.
 */
let thrown: unknown;

/** A value cdk8s replaces by `produce()` when it renders the object; an error `produce` throws is kept for {@link takeRenderError}. */
export function lazy<T>(produce: () => T): T {
  const token = {
    resolve: (): T => {
      try {
        return produce();
      } catch (err) {
        thrown = err;
        throw err;
      }
    },
  };
  return token as unknown as T;
}

/** The error a lazy value threw during the last failed `toJson`, once (then forgotten). */
export function takeRenderError(): unknown {
  const err = thrown;
  thrown = undefined;
  return err;
}
