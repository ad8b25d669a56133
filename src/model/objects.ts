/** Guards for parsed JSON/YAML values. */

/** Whether `v` is a JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
