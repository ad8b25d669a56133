/**
 * Whether a Sandbox was made from a SandboxTemplate's current blueprint, judged the way the v0.5.6 warm-pool controller
 * judges staleness when hash labels do not settle it (`compareSandboxBlueprint`, `comparePodSpecs`,
 * `compareVolumeClaimTemplates` in `extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`):
 * - pod spec: the template's `spec.podTemplate.spec` with the controller's secure defaults applied
 *   (`ApplySandboxSecureDefaults`, `extensions/controllers/utils.go@v0.5.6`: `automountServiceAccountToken: false` when
 *   unset; when the template's policy is Managed (or unset) with no `networkPolicy` and no `dnsPolicy`, `dnsPolicy: None`
 *   with nameservers 8.8.8.8 and 1.1.1.1) must equal the Sandbox's `spec.podTemplate.spec`;
 * - volume claim templates: same count, and per index the same `metadata.name` and `spec`;
 * - `spec.service`: equal.
 * Pod template metadata is not compared (the controller does not either, and adoption replaces it).
 *
 * The controller compares typed Go values; this compares JSON as read from the API. To match Go's semantics, null, false,
 * 0, '', {} and [] count as unset (Go's `omitempty`, and zero-valued structs the controller writes such as
 * `resources: {}`), and quantities under `limits`/`requests`/`overhead` compare by value (`1Gi` = `1024Mi`). Known
 * difference: a `*bool` set to false and one left unset are not told apart here, where Go would tell them apart.
 */
import equal from 'fast-deep-equal';
import { isPlainObject } from '../../model/objects.js';

/** One entry of `spec.volumeClaimTemplates` (Sandbox and SandboxTemplate alike). */
export interface VolumeClaimTemplate {
  readonly metadata?: { readonly name?: string };
  readonly spec?: unknown;
}

/** The parts of a SandboxTemplate this module reads. */
export interface TemplateBlueprint {
  readonly spec?: {
    readonly podTemplate?: { readonly spec?: Record<string, unknown> };
    readonly volumeClaimTemplates?: readonly VolumeClaimTemplate[];
    readonly service?: unknown;
    readonly networkPolicyManagement?: string;
    readonly networkPolicy?: unknown;
  };
}

/** The parts of a Sandbox this module reads. */
export interface SandboxBlueprint {
  readonly spec?: {
    readonly podTemplate?: { readonly spec?: Record<string, unknown> };
    readonly volumeClaimTemplates?: readonly VolumeClaimTemplate[];
    readonly service?: unknown;
  };
}

/** Public resolvers the controller puts into secure-by-default pods (`extensions/controllers/utils.go@v0.5.6`). */
const SECURE_DEFAULT_NAMESERVERS = ['8.8.8.8', '1.1.1.1'];

/** How many differences {@link blueprintDrift} lists at most. */
const MAX_DIFFERENCES = 5;

/**
 * Differences between the template's current blueprint and the Sandbox's, as `path: sandbox value ≠ template value`
 * lines (at most 5); an empty list means the Sandbox is current by the controller's semantic comparison.
 */
export function blueprintDrift(template: TemplateBlueprint, sandbox: SandboxBlueprint): string[] {
  const out: string[] = [];
  diff('podTemplate.spec', normalize(sandbox.spec?.podTemplate?.spec), normalize(expectedPodSpec(template)), out);
  diff(
    'volumeClaimTemplates',
    normalize(vcts(sandbox.spec?.volumeClaimTemplates)),
    normalize(vcts(template.spec?.volumeClaimTemplates)),
    out,
  );
  diff('service', normalize(sandbox.spec?.service), normalize(template.spec?.service), out);
  return out.slice(0, MAX_DIFFERENCES);
}

/** Whether two Sandboxes carry the same blueprint (pod spec, volume claim templates by name and spec, service). */
export function sameBlueprint(a: SandboxBlueprint, b: SandboxBlueprint): boolean {
  return (
    equal(normalize(a.spec?.podTemplate?.spec), normalize(b.spec?.podTemplate?.spec)) &&
    equal(normalize(vcts(a.spec?.volumeClaimTemplates)), normalize(vcts(b.spec?.volumeClaimTemplates))) &&
    equal(normalize(a.spec?.service), normalize(b.spec?.service))
  );
}

/** The template's pod spec with the controller's secure defaults applied (a copy; the input is not changed). */
export function expectedPodSpec(template: TemplateBlueprint): Record<string, unknown> {
  const spec: Record<string, unknown> = { ...(template.spec?.podTemplate?.spec ?? {}) };
  if (spec.automountServiceAccountToken === undefined || spec.automountServiceAccountToken === null)
    spec.automountServiceAccountToken = false;
  const management = template.spec?.networkPolicyManagement ?? '';
  const secureByDefault =
    (management === '' || management === 'Managed') &&
    (template.spec?.networkPolicy === undefined || template.spec.networkPolicy === null);
  if (secureByDefault && !spec.dnsPolicy) {
    spec.dnsPolicy = 'None';
    spec.dnsConfig = { nameservers: [...SECURE_DEFAULT_NAMESERVERS] };
  }
  return spec;
}

function vcts(list: readonly VolumeClaimTemplate[] | undefined): unknown[] {
  return (list ?? []).map((v) => ({ name: v.metadata?.name, spec: v.spec }));
}

const QUANTITY_MAPS = new Set(['limits', 'requests', 'overhead']);

/** A JSON value with Go zero values removed (see the module docstring) and quantities in resource maps turned into numbers. */
export function normalize(value: unknown, key = ''): unknown {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return undefined;
  if (Array.isArray(value)) {
    const items = value.map((v) => normalize(v) ?? null);
    return items.length ? items : undefined;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as object).sort()) {
      const raw = (value as Record<string, unknown>)[k];
      const v = QUANTITY_MAPS.has(key) && typeof raw === 'string' ? (quantityValue(raw) ?? raw) : normalize(raw, k);
      if (v !== undefined) out[k] = v;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}

const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The numeric value of a Kubernetes quantity (`500m`, `1Gi`, `1e3`), or undefined when it is not one. */
export function quantityValue(q: string): number | undefined {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  if (m[3] !== undefined) return n * 10 ** Number(m[3]);
  const suffix = m[2] ?? '';
  return n * (BINARY[suffix] ?? DECIMAL[suffix]!);
}

function show(v: unknown): string {
  if (v === undefined) return 'unset';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function diff(path: string, actual: unknown, expected: unknown, out: string[]): void {
  if (out.length >= MAX_DIFFERENCES || equal(actual, expected)) return;
  if (Array.isArray(actual) && Array.isArray(expected) && actual.length === expected.length) {
    actual.forEach((a, i) => diff(`${path}[${i}]`, a, expected[i], out));
    return;
  }
  if (isPlainObject(actual) && isPlainObject(expected)) {
    for (const k of [...new Set([...Object.keys(expected), ...Object.keys(actual)])])
      diff(`${path}.${k}`, actual[k], expected[k], out);
    return;
  }
  out.push(`${path}: ${show(actual)} ≠ template ${show(expected)}`);
}
