/**
 * Which template version a session's Sandbox was made from, as far as the cluster lets it be told (case recreate-adopts-stale-template).
 *
 * Facts (`api/v1beta1/sandbox_types.go@v0.5.6`, `extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`):
 * - The v0.5.6 warm-pool controller labels each member Sandbox (and its pod template) with
 *   `agents.x-k8s.io/sandbox-template-hash` = FNV-1a-32 hex of the Go JSON of the template's `SandboxBlueprint`
 *   (`computeSandboxBlueprintHash`, `buildSandboxCR`, `extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`).
 *   That JSON is Go's typed encoding, so the hash cannot be recomputed from the template as read: it is only ever read
 *   from labels. Releases before v0.5.6 stamp only `agents.x-k8s.io/sandbox-pod-template-hash` (a hash of the pod
 *   template alone, `api/v1beta1/sandbox_types.go@v0.5.0`), which is not read here.
 * - Adoption by a claim deletes both hash labels from the Sandbox and replaces its pod template metadata, but leaves its
 *   spec as it was (`completeAdoption`, `extensions/controllers/sandboxclaim_controller.go@v0.5.6`). So a bound Sandbox's
 *   hash is known only from a record made before adoption (the adapter lists the pool's members and their labels just
 *   before creating a claim and stores them on the claim), or from a live pool member with the same blueprint.
 * - Staleness: equal hash labels mean current; otherwise the controller compares blueprints semantically
 *   (`isSandboxStale`); see blueprint.ts.
 * - `Recreate` deletes stale unclaimed members at once; `OnReplenish` keeps them until claimed (kubernetes-sigs/agent-sandbox#311),
 *   and a claim may adopt one (#764, under Recreate fixed by #1078 in v0.5.6).
 */
import type { TemplateReason } from '../reasons.js';
import { blueprintDrift, sameBlueprint, type SandboxBlueprint, type TemplateBlueprint } from './blueprint.js';

/** Blueprint hash label on warm-pool Sandboxes (`api/v1beta1/sandbox_types.go@v0.5.6`). */
export const TEMPLATE_HASH_LABEL = 'agents.x-k8s.io/sandbox-template-hash';
/** Label carrying namehash(pool) on a pool's Sandboxes while it owns them (`api/v1beta1/sandbox_types.go@v0.5.6`). */
export const WARM_POOL_LABEL = 'agents.x-k8s.io/warm-pool-sandbox';

/** A Sandbox as listed: labels, owner and deletion state, plus the blueprint. */
export interface LabelledSandbox extends SandboxBlueprint {
  readonly metadata?: {
    readonly name?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string | Date;
    readonly ownerReferences?: ReadonlyArray<{
      readonly kind?: string;
      readonly name?: string;
      readonly controller?: boolean;
    }>;
  };
}

/** A SandboxTemplate as read: its name and blueprint. */
export interface NamedTemplate extends TemplateBlueprint {
  readonly metadata?: { readonly name?: string; readonly generation?: number };
}

/** A hash, or none; `how` says where the hash was read or why there is none. */
export interface HashFinding {
  readonly hash?: string;
  readonly how: string;
}

/** A bound Sandbox's hash finding, with its code (`TEMPLATE_REASONS`). */
export interface BoundHashFinding extends HashFinding {
  readonly reason: TemplateReason;
}

/** FNV-1a 32-bit of `s` as 8 lower-case hex digits: the controller's `NameHash` (`controllers/sandbox_controller.go@v0.5.6`). */
export function nameHash(s: string): string {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(s)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** Label selector of the Sandboxes pool `pool` owns: `agents.x-k8s.io/warm-pool-sandbox=<namehash(pool)>`. */
export function poolSelector(pool: string): string {
  return `${WARM_POOL_LABEL}=${nameHash(pool)}`;
}

/** Live members of `pool`: controller-owned by SandboxWarmPool `pool` and not being deleted. */
export function poolMembers(sandboxes: readonly LabelledSandbox[], pool: string): LabelledSandbox[] {
  return sandboxes.filter(
    (s) =>
      !s.metadata?.deletionTimestamp &&
      (s.metadata?.ownerReferences ?? []).some((o) => o.controller && o.kind === 'SandboxWarmPool' && o.name === pool),
  );
}

function hashOf(s: LabelledSandbox): string | undefined {
  return s.metadata?.labels?.[TEMPLATE_HASH_LABEL] || undefined;
}

/** `{hash: [member names]}` of the labelled members among `members`. */
function byHash(members: readonly LabelledSandbox[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of members) {
    const h = hashOf(m);
    if (h) out.set(h, [...(out.get(h) ?? []), m.metadata?.name ?? '?']);
  }
  return out;
}

function listGroups(groups: Map<string, string[]>): string {
  return [...groups].map(([h, names]) => `${h} (${names.join(', ')})`).join(', ');
}

/** Most pool members recorded in a claim's {@link listedHashes} annotation (the first ones listed). */
export const MAX_LISTED_MEMBERS = 100;

/** Pool members' hash labels as listed before a claim was created: `{hash: [member names]}`. */
export type ListedHashes = Readonly<Record<string, readonly string[]>>;

/** {@link ListedHashes} of `members` (labelled ones, at most {@link MAX_LISTED_MEMBERS}), for a claim annotation. */
export function listedHashes(members: readonly LabelledSandbox[]): ListedHashes {
  return Object.fromEntries(byHash(members.filter(hashOf).slice(0, MAX_LISTED_MEMBERS)));
}

/** Parses a {@link ListedHashes} annotation value; undefined when absent or not of that shape. */
export function parseListedHashes(value: string | undefined): ListedHashes | undefined {
  if (!value) return undefined;
  try {
    const v = JSON.parse(value) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const ok = Object.values(v).every((names) => Array.isArray(names) && names.every((n) => typeof n === 'string'));
    return ok ? (v as ListedHashes) : undefined;
  } catch {
    return undefined;
  }
}

/** Where a bound Sandbox's hash may have been recorded before adoption removed its label. */
export interface HashRecords {
  /** Pool members' labels listed just before the claim was created (the claim's annotation). */
  readonly listed?: ListedHashes;
  /** A hash the caller kept for the session (`SessionRef.template.hash`). */
  readonly recorded?: string;
}

/**
 * The blueprint hash of `bound`, the Sandbox a claim is bound to. In order: its own label (not yet adopted, or not a
 * warm adoption); its label as listed before the claim was created (`records.listed`); a hash kept for the session
 * (`records.recorded`); the one hash carried by live `members` with the same blueprint. Otherwise no hash, with the
 * reason (also when members of several hashes share the blueprint: a metadata-only template edit).
 */
export function boundTemplateHash(
  bound: LabelledSandbox,
  members: readonly LabelledSandbox[],
  records: HashRecords = {},
): BoundHashFinding {
  const name = bound.metadata?.name ?? '?';
  const own = hashOf(bound);
  if (own) return { hash: own, reason: 'HashFromSandboxLabel', how: `label ${TEMPLATE_HASH_LABEL} on Sandbox ${name}` };
  const listed = Object.entries(records.listed ?? {}).find(([, names]) => names.includes(name))?.[0];
  if (listed)
    return {
      hash: listed,
      reason: 'HashFromListedMember',
      how: `label ${TEMPLATE_HASH_LABEL} of pool member ${name}, listed before the claim was created`,
    };
  if (records.recorded)
    return { hash: records.recorded, reason: 'HashRecorded', how: 'kept for the session after an earlier observation' };
  const groups = byHash(members.filter((m) => m.metadata?.name !== name && sameBlueprint(m, bound)));
  if (groups.size === 1) {
    const [[hash, names]] = [...groups] as [[string, string[]]];
    return {
      hash,
      reason: 'HashFromSameBlueprint',
      how: `adoption removed the label; pool member${names.length > 1 ? 's' : ''} ${names.join(', ')} with the same blueprint carr${names.length > 1 ? 'y' : 'ies'} it`,
    };
  }
  if (groups.size > 1)
    return {
      reason: 'HashAmbiguous',
      how: `adoption removed the label and pool members of several hashes share its blueprint (${listGroups(groups)}): a metadata-only template edit; not told apart`,
    };
  return {
    reason: 'HashUnknown',
    how: `adoption removed the label (extensions/controllers/sandboxclaim_controller.go@v0.5.6) and no live pool member has Sandbox ${name}'s blueprint: unknown`,
  };
}

/**
 * The hash of the template's current blueprint, as carried by live pool `members` whose blueprint equals the template's
 * (see blueprint.ts). None, with the reason, when no member matches (rollout pending, pool empty or unlabelled) or
 * members of several hashes match.
 */
export function currentTemplateHash(template: NamedTemplate, members: readonly LabelledSandbox[]): HashFinding {
  const tname = template.metadata?.name ?? '?';
  const matching = members.filter((m) => blueprintDrift(template, m).length === 0);
  const groups = byHash(matching);
  if (groups.size === 1) {
    const [[hash, names]] = [...groups] as [[string, string[]]];
    return {
      hash,
      how: `carried by ${names.length} pool member${names.length > 1 ? 's' : ''} at template ${tname}'s current blueprint (${names.join(', ')})`,
    };
  }
  if (groups.size > 1)
    return {
      how: `pool members of several hashes match template ${tname}'s current blueprint (${listGroups(groups)}): a metadata-only edit; not told apart`,
    };
  if (matching.length > 0)
    return {
      how: `the ${matching.length} pool member(s) at template ${tname}'s current blueprint carry no ${TEMPLATE_HASH_LABEL} label (a release before v0.5.6?)`,
    };
  return {
    how: `none of the ${members.length} live pool member(s) is at template ${tname}'s current blueprint yet (rollout pending, pool at 0, or OnReplenish keeping old members)`,
  };
}

/** What an observation says about the template version of a claim's bound Sandbox. */
export interface TemplateState {
  readonly templateHash?: string;
  readonly currentTemplateHash?: string;
  readonly staleTemplate?: boolean;
  /** The verdict (`TEMPLATE_REASONS`). */
  readonly templateReason: TemplateReason;
  /** How each field was determined, in words. */
  readonly templateMessage: string;
}

/**
 * Template version of `bound` against `template` (undefined when the template is gone or could not be read, with
 * `templateMissing` as the reason). Stale follows the controller (`isSandboxStale`, v0.5.6): equal known hashes mean
 * current; otherwise the blueprints are compared, and the differences are named.
 */
export function templateState(
  bound: LabelledSandbox,
  template: NamedTemplate | undefined,
  members: readonly LabelledSandbox[],
  records: HashRecords,
  templateMissing = 'template unknown',
): TemplateState {
  const mine = boundTemplateHash(bound, members, records);
  const name = bound.metadata?.name ?? '?';
  const mineText = mine.hash
    ? `Sandbox ${name} has hash ${mine.hash} (${mine.how})`
    : `Sandbox ${name}'s hash: ${mine.how}`;
  if (!template)
    return {
      ...(mine.hash ? { templateHash: mine.hash } : {}),
      templateReason: 'TemplateUnread',
      templateMessage: `${mineText}; stale unknown: ${templateMissing}`,
    };
  const current = currentTemplateHash(template, members);
  const currentText = current.hash
    ? `current hash ${current.hash} ${current.how}`
    : `current hash unknown: ${current.how}`;
  const both = {
    ...(mine.hash ? { templateHash: mine.hash } : {}),
    ...(current.hash ? { currentTemplateHash: current.hash } : {}),
  };
  if (mine.hash && current.hash && mine.hash === current.hash) {
    return {
      ...both,
      staleTemplate: false,
      templateReason: 'TemplateCurrent',
      templateMessage: `${mineText}; ${currentText}: hashes equal, current`,
    };
  }
  const drift = blueprintDrift(template, bound);
  const tname = template.metadata?.name ?? '?';
  const gen = template.metadata?.generation;
  const at = `template ${tname}${gen !== undefined ? ` generation ${gen}` : ''}`;
  const verdict = drift.length ? `stale against ${at}: ${drift.join('; ')}` : `blueprint equals ${at}: current`;
  return {
    ...both,
    staleTemplate: drift.length > 0,
    templateReason: drift.length ? 'TemplateStale' : 'TemplateCurrent',
    templateMessage: `${mineText}; ${currentText}; ${verdict}`,
  };
}
