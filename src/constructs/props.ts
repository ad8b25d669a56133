/**
 * zod-validation of construct props with errors that carry the construct path.
 */
import { isErrorReason, type ErrorReason } from '../model/error-reasons.js';
import type { Construct } from 'constructs';
import type { z } from 'zod';
import { ConstructPropsError, type PropProblem } from './errors.js';

/**
 * The value as plain JSON data: constructs as `<Construct path>`, Maps as objects, Sets as arrays, bigints as `<n>n`,
 * functions as `[function name]`, an object met again (e.g. in a cycle) as `"[repeated]"`; `undefined` stays undefined.
 */
export function plainValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  const seen = new WeakSet<object>();
  const replacer = (_key: string, v: unknown): unknown => {
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'function') return `[function ${v.name || 'anonymous'}]`;
    if (v === null || typeof v !== 'object') return v;
    if (isConstruct(v)) return `<${v.constructor.name} ${v.node.path || '(root)'}>`;
    if (seen.has(v)) return '[repeated]';
    seen.add(v);
    if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [String(k), x]));
    if (v instanceof Set) return [...v];
    return v;
  };
  const text = JSON.stringify(value, replacer);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

/** The value as JSON (see {@link plainValue}), at most 80 characters, so no message shows `[object Object]`. */
export function showValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  const text = JSON.stringify(plainValue(value)) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function isConstruct(v: object): v is { node: { path: string } } {
  const node = (v as { node?: unknown }).node;
  return (
    node !== null &&
    typeof node === 'object' &&
    typeof (node as { path?: unknown }).path === 'string' &&
    'scopes' in node
  );
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
 * The CamelCase reason of a zod issue: `params.reason` of a custom check when it names one (see runtime-class.ts),
 * `Required` for a missing prop, else the issue code (`invalid_type` -> `InvalidType`).
 */
function reasonOf(issue: z.core.$ZodIssue, value?: unknown): ErrorReason {
  const own = issue.code === 'custom' ? (issue.params as { reason?: unknown } | undefined)?.reason : undefined;
  if (typeof own === 'string' && isErrorReason(own)) return own;
  if (issue.code === 'invalid_type' && value === undefined) return 'Required';
  return ISSUE_REASONS[issue.code];
}

/** The reason of each validator issue code. */
const ISSUE_REASONS: Readonly<Record<z.core.$ZodIssue['code'], ErrorReason>> = {
  invalid_type: 'InvalidType',
  too_big: 'TooBig',
  too_small: 'TooSmall',
  invalid_format: 'InvalidFormat',
  not_multiple_of: 'NotMultipleOf',
  unrecognized_keys: 'UnrecognizedKeys',
  invalid_union: 'InvalidUnion',
  invalid_key: 'InvalidKey',
  invalid_element: 'InvalidElement',
  invalid_value: 'InvalidValue',
  custom: 'Custom',
};

/**
 * Parses `props` with `schema`; on failure throws {@link ConstructPropsError} naming `scope.node.path`,
 * each failing field, the problem and the value given.
 */
export function parseProps<S extends z.ZodType>(
  scope: Construct,
  construct: string,
  schema: S,
  props: unknown,
): z.output<S> {
  const result = schema.safeParse(props);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue): PropProblem => {
    const prop = issue.path.length === 0 ? '(props)' : issue.path.map(String).join('.');
    // A refused map key (a label key, ...): the key is the value given, and the key schema's message says why.
    if (issue.code === 'invalid_key') {
      const key = String(issue.path[issue.path.length - 1]);
      return {
        prop,
        reason: reasonOf(issue),
        value: key,
        message: `${prop}: the key ${issue.issues[0]?.message ?? issue.message} (got ${showValue(key)})`,
      };
    }
    const value = valueAt(props, issue.path);
    return {
      prop,
      reason: reasonOf(issue, value),
      value,
      message: `${prop}: ${issue.message} (got ${showValue(value)})`,
    };
  });
  throw new ConstructPropsError(scope.node.path, construct, problems);
}
