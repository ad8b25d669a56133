/**
 * Which state each declared capability must reach: `verified` for everything (runtime classes too:
 * isolation is proven, not assumed), except `network-isolation` and `suspend-resume`, which must be `configured`.
 * The environment may override per capability.
 */
import type { CapabilityName } from '../adapter/types.js';
import type { Requirement } from './report.js';
import type { RequiredState } from './states.js';

const CONFIGURED_BY_DEFAULT: ReadonlySet<string> = new Set(['network-isolation', 'suspend-resume']);

/** The default required state of a capability. */
export function defaultRequired(name: CapabilityName): RequiredState {
  return CONFIGURED_BY_DEFAULT.has(name) ? 'configured' : 'verified';
}

/**
 * Requirements for the declared capabilities, in declaration order, duplicates removed.
 * @param overrides per-capability required state from the environment (wins over the default)
 */
export function requirementsFor(
  declared: readonly CapabilityName[],
  overrides: Readonly<Partial<Record<string, RequiredState>>> = {},
): Requirement[] {
  const seen = new Set<string>();
  const out: Requirement[] = [];
  for (const name of declared) {
    if (seen.has(name)) continue;
    seen.add(name);
    out.push({ name, required: overrides[name] ?? defaultRequired(name) });
  }
  return out;
}
