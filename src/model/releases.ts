/**
 * Supported Agent Sandbox releases, their families and the API version each family is written and read at. The
 * catalog (src/releases/catalog.ts, generated from `releases/index.json`) holds the full facts; this is the small table
 * every layer needs, and test/unit/model/releases.test.ts checks it against the catalog for every release and kind.
 */

/** The supported upstream tags, oldest first. */
export const RELEASE_TAGS = ['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'] as const;

/** A supported upstream tag. */
export type ReleaseTag = (typeof RELEASE_TAGS)[number];

/** Release families: releases that share API versions. */
export const RELEASE_FAMILIES = ['v0.4', 'v0.5', 'v1.0'] as const;

/**
 * `v0.4` serves v1alpha1 only; `v0.5` stores v1beta1 and serves v1alpha1 via a conversion webhook; `v1.0` serves and
 * stores v1beta1 only, with no conversion (`k8s/crds/*.yaml@v1.0.3`).
 */
export type ReleaseFamily = (typeof RELEASE_FAMILIES)[number];

/** The four Agent Sandbox kinds. */
export const SANDBOX_KINDS = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'] as const;

export type SandboxKind = (typeof SANDBOX_KINDS)[number];

/**
 * The version of every Agent Sandbox kind that a family stores, which AgentPlane writes and reads: v1beta1 on v0.5
 * (v1alpha1 writes leave conversion annotations behind) and v1.0, v1alpha1 on v0.4
 * (`k8s/crds/*.yaml@{v0.4.6,v0.5.0,v0.5.6,v1.0.3}`).
 */
export const FAMILY_VERSION: Readonly<Record<ReleaseFamily, string>> = {
  'v0.4': 'v1alpha1',
  'v0.5': 'v1beta1',
  'v1.0': 'v1beta1',
};

/** Whether a family's objects have v1beta1 shapes (`operatingMode`, `warmPoolRef`, conditions): v0.5 and v1.0. */
export function isBetaFamily(family: ReleaseFamily): boolean {
  return FAMILY_VERSION[family] === 'v1beta1';
}

/** Whether a family converts between API versions through a webhook: v0.5 only (`spec.conversion`, `k8s/crds/*.yaml@tag`). */
export function familyConverts(family: ReleaseFamily): boolean {
  return family === 'v0.5';
}

/** The family of a release tag (`v0.4.6` -> `v0.4`), also for patch releases the catalog does not hold; undefined for others. */
export function familyOfTag(tag: string): ReleaseFamily | undefined {
  const minor = /^(v\d+\.\d+)\.\d+$/.exec(tag)?.[1];
  return (RELEASE_FAMILIES as readonly string[]).includes(minor ?? '') ? (minor as ReleaseFamily) : undefined;
}

/**
 * The family a served set of core-group versions belongs to: v1beta1 alone is v1.0, v1beta1 with v1alpha1 is v0.5,
 * v1alpha1 alone is v0.4; anything else is undefined.
 */
export function familyOfServedVersions(coreVersions: readonly string[]): ReleaseFamily | undefined {
  const alpha = coreVersions.includes('v1alpha1');
  if (coreVersions.includes('v1beta1')) return alpha ? 'v0.5' : 'v1.0';
  return alpha ? 'v0.4' : undefined;
}

/** The storage version listed by a CRD's facts (`spec.versions[].storage`), e.g. from the catalog's `crds[kind]`. */
export function storageVersionOf(crd: {
  readonly versions: readonly { readonly name: string; readonly storage: boolean }[];
}): string | undefined {
  return crd.versions.find((v) => v.storage)?.name;
}

/** What a release's SandboxWarmPool status can be trusted for (case warmpool-status-fields). */
export interface PoolStatusTraits {
  /**
   * The controller writes `status.observedGeneration` (kubernetes-sigs/agent-sandbox#1328, v0.5.6 on); without it a
   * status cannot say which spec it describes.
   */
  readonly observedGeneration: boolean;
  /**
   * Counters that fall to zero are cleared (merge patch since v0.5.0, kubernetes-sigs/agent-sandbox#807); on v0.4.6
   * server-side apply dropped the zero values and left the last non-zero counts in place.
   */
  readonly clearsZeroCounters: boolean;
}

/** {@link PoolStatusTraits} of every supported release; test/unit/verify/warmpool-status-fields checks them against each CRD. */
export const POOL_STATUS: Readonly<Record<ReleaseTag, PoolStatusTraits>> = {
  'v0.4.6': { observedGeneration: false, clearsZeroCounters: false },
  'v0.5.0': { observedGeneration: false, clearsZeroCounters: true },
  'v0.5.6': { observedGeneration: true, clearsZeroCounters: true },
  'v1.0.3': { observedGeneration: true, clearsZeroCounters: true },
};
