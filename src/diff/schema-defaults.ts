/**
 * Defaulting from a CRD's structural `openAPIV3Schema`, the way the API server does it, plus the reverse step the
 * diff needs: dropping optional objects that hold nothing but default values.
 *
 * The API server fills a missing property that has a `default` and walks on into the filled value
 * (structural defaulting, `apiextensions-apiserver` `pkg/apiserver/schema/defaulting`); it never creates a missing
 * parent object. So `SandboxWarmPool.spec.updateStrategy` absent stays absent while `{}` becomes `{type: OnReplenish}`
 * (`k8s/crds/extensions.agents.x-k8s.io_sandboxwarmpools.yaml@v0.5.6`). A controller reads an absent
 * `updateStrategy` and one holding only defaults the same way, so {@link pruneDefaultOnly} removes such objects on
 * both sides before comparing.
 */

/** The parts of a structural schema node that defaulting reads. */
export interface SchemaNode {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly default?: unknown;
  readonly required?: readonly string[];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Returns a copy of `value` with every missing property that has a schema `default` filled in, recursively
 * (including inside list items and map values). `value` is not modified. Values of the wrong shape are left alone.
 */
export function applySchemaDefaults(value: unknown, schema: SchemaNode | undefined): unknown {
  if (schema === undefined) return value;
  if (Array.isArray(value)) {
    return schema.items === undefined ? value : value.map((item) => applySchemaDefaults(item, schema.items));
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = { ...value };
  if (schema.properties !== undefined) {
    for (const [name, child] of Object.entries(schema.properties)) {
      if (out[name] === undefined && child.default !== undefined) out[name] = structuredClone(child.default);
      if (out[name] !== undefined) out[name] = applySchemaDefaults(out[name], child);
    }
  }
  if (isPlainObject(schema.additionalProperties)) {
    const known = schema.properties ?? {};
    for (const key of Object.keys(out)) {
      if (!(key in known)) out[key] = applySchemaDefaults(out[key], schema.additionalProperties);
    }
  }
  return out;
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
 * Returns a copy of `value` without the optional (not `required`) object-valued properties whose content is only
 * schema defaults. Scalar properties are kept, so `replicas: 1` stays visible on both sides.
 */
export function pruneDefaultOnly(value: unknown, schema: SchemaNode | undefined): unknown {
  if (schema === undefined) return value;
  if (Array.isArray(value)) {
    return schema.items === undefined ? value : value.map((item) => pruneDefaultOnly(item, schema.items));
  }
  if (!isPlainObject(value) || schema.properties === undefined) return value;
  const out: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, v] of Object.entries(value)) {
    const child = schema.properties[name];
    if (child === undefined) {
      out[name] = v;
      continue;
    }
    if (!required.has(name) && child.default === undefined && isPlainObject(v) && onlyDefaults(v, child)) continue;
    out[name] = pruneDefaultOnly(v, child);
  }
  return out;
}
