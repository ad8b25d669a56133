/**
 * zod-validation of construct props with errors that carry the construct path.
 */
import type { Construct } from 'constructs';
import type { z } from 'zod';
import { ConstructPropsError } from './errors.js';

function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  try {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/**
 * Parses `props` with `schema`; on failure throws {@link ConstructPropsError} naming `scope.node.path`,
 * each failing field, the problem and the value given.
 */
export function parseProps<S extends z.ZodType>(scope: Construct, construct: string, schema: S, props: unknown): z.output<S> {
  const result = schema.safeParse(props);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const field = issue.path.length === 0 ? '(props)' : issue.path.map(String).join('.');
    return `${field}: ${issue.message} (got ${show(valueAt(props, issue.path))})`;
  });
  throw new ConstructPropsError(scope.node.path, construct, issues);
}
