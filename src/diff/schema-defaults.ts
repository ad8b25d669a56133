/**
 * Defaulting from a CRD's structural `openAPIV3Schema`, the way the API server does it, plus the reverse step the
 * diff needs: dropping optional objects that hold nothing but default values.
 *
 * The API server fills a missing property that has a `default` and walks on into the filled value
 * (structural defaulting, `apiextensions-apiserver` `pkg/apiserver/schema/defaulting`); it never creates a missing
 * parent object. So `SandboxWarmPool.spec.updateStrategy` absent stays absent while `{}` becomes `{type: OnReplenish}`
 * (`k8s/crds/extensions.agents.x-k8s.io_sandboxwarmpools.yaml@v0.5.6`). A controller reads an absent
 * `updateStrategy` and one holding only defaults the same way, so {@link dropDefaultOnly} removes such objects on
 * both sides before comparing.
 */
import { cloneJson, isPlainObject } from '../model/objects.js';

/** The parts of a structural schema node that defaulting reads. */
export interface SchemaNode {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly default?: unknown;
  readonly required?: readonly string[];
}

/**
 * Fills, in place, every missing property of `value` that has a schema `default`, recursively (including inside list
 * items and map values), and returns `value`. Give it a value you own (the diff normalizes a private copy). Values
 * of the wrong shape are left alone; defaults are copied (JSON values: `cloneJson`), never shared.
 */
export function fillSchemaDefaults(value: unknown, schema: SchemaNode | undefined): unknown {
  if (schema === undefined) return value;
  if (Array.isArray(value)) {
    if (schema.items !== undefined) for (const item of value) fillSchemaDefaults(item, schema.items);
    return value;
  }
  if (!isPlainObject(value)) return value;
  if (schema.properties !== undefined) {
    for (const name in schema.properties) {
      const child = schema.properties[name]!;
      if (value[name] === undefined && child.default !== undefined) value[name] = cloneJson(child.default);
      if (value[name] !== undefined) fillSchemaDefaults(value[name], child);
    }
  }
  if (isPlainObject(schema.additionalProperties)) {
    const known = schema.properties ?? {};
    for (const key in value) if (!(key in known)) fillSchemaDefaults(value[key], schema.additionalProperties);
  }
  return value;
}

/** True when `value` is a non-empty object (or list of such objects) all of whose leaves equal their schema defaults. */
function onlyDefaults(value: unknown, schema: SchemaNode): boolean {
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0 || schema.properties === undefined) return false;
    return entries.every(([name, v]) => {
      const child = schema.properties?.[name];
      if (child === undefined) return false;
      if (child.default !== undefined && JSON.stringify(child.default) === JSON.stringify(v)) return true;
      return onlyDefaults(v, child);
    });
  }
  return false;
}

/**
 * Removes, in place, the optional (not `required`) object-valued properties of `value` whose content is only schema
 * defaults, recursively, and returns `value`. Scalar properties are kept, so `replicas: 1` stays visible on both sides.
 */
export function dropDefaultOnly(value: unknown, schema: SchemaNode | undefined): unknown {
  if (schema === undefined) return value;
  if (Array.isArray(value)) {
    if (schema.items !== undefined) for (const item of value) dropDefaultOnly(item, schema.items);
    return value;
  }
  if (!isPlainObject(value) || schema.properties === undefined) return value;
  const required = schema.required ?? [];
  for (const name of Object.keys(value)) {
    const child = schema.properties[name];
    if (child === undefined) continue;
    const v = value[name];
    if (child.default === undefined && isPlainObject(v) && !required.includes(name) && onlyDefaults(v, child))
      delete value[name];
    else dropDefaultOnly(v, child);
  }
  return value;
}
