/** The one runtime check on {@link KubeObject}, kept free of dependencies: the diff layer parses with it on every document. */
import type { KubeObject } from './types.js';

/** Whether `value` looks like a Kubernetes object (string `apiVersion` and `kind`). */
export function isKubeObject(value: unknown): value is KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.apiVersion === 'string' && typeof v.kind === 'string';
}
