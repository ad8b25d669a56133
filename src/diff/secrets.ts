/**
 * Secret redaction. Secret values never reach any output, log or error, plain or base64: before two normalized
 * Secrets are compared, every `data` value is replaced by a marker that says only whether it is the same on both
 * sides, so a changed value still shows as a change.
 */
import { isPlainObject } from '../model/objects.js';
import type { KubeObject } from '../releases/index.js';

/** The marker of a value that is the same on both sides (or present on one side only). */
export const REDACTED = '(redacted)';
/** The markers of a value that differs: the base side and the head side. */
export const REDACTED_BEFORE = '(redacted: old value)';
export const REDACTED_AFTER = '(redacted: new value)';

/** True for a core/v1 Secret. */
export function isSecret(obj: KubeObject | undefined): boolean {
  return obj !== undefined && obj.apiVersion === 'v1' && obj.kind === 'Secret';
}

function dataOf(obj: KubeObject | undefined): Record<string, unknown> {
  const data = obj?.data;
  return isPlainObject(data) ? data : {};
}

function withData(obj: KubeObject, data: Record<string, string>): KubeObject {
  const out = { ...obj } as KubeObject;
  if (Object.keys(data).length > 0) out.data = data;
  else delete out.data;
  return out;
}

/**
 * Replaces the values of the `data` maps of one Secret pair (either side may be absent: added or removed Secret).
 * Works on normalized objects (`stringData` already folded into `data`). Non-Secrets are returned unchanged.
 */
export function redactSecretPair(
  base: KubeObject | undefined,
  head: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  if (!isSecret(base) && !isSecret(head)) return [base, head];
  const before = dataOf(base);
  const after = dataOf(head);
  const b: Record<string, string> = {};
  const h: Record<string, string> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const inBase = key in before;
    const inHead = key in after;
    const same = inBase && inHead && before[key] === after[key];
    if (inBase) b[key] = same || !inHead ? REDACTED : REDACTED_BEFORE;
    if (inHead) h[key] = same || !inBase ? REDACTED : REDACTED_AFTER;
  }
  return [base === undefined ? undefined : withData(base, b), head === undefined ? undefined : withData(head, h)];
}
