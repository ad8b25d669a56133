/** Guards for parsed JSON/YAML values. */

/** Whether `v` is a JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A copy of a JSON value with the keys of every object sorted (arrays keep their order), as cdk8s and `agentplane synth` write them. */
export function withSortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withSortedKeys);
  if (isPlainObject(value))
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, withSortedKeys(value[k])]),
    );
  return value;
}
