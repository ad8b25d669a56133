/**
 * Where the Agent Sandbox kinds live in the API: group and plural per kind (`k8s/crds/*.yaml@{v0.4.6,v0.5.0,v0.5.6}`),
 * and the version per family from {@link FAMILY_VERSION}.
 */
import { FAMILY_VERSION, type ReleaseFamily, type SandboxKind } from './releases.js';

export const CORE_GROUP = 'agents.x-k8s.io';
export const EXTENSIONS_GROUP = 'extensions.agents.x-k8s.io';

/** Group and plural of each kind; the same for every supported release. */
export const RESOURCES: Readonly<Record<SandboxKind, { readonly group: string; readonly plural: string }>> = {
  Sandbox: { group: CORE_GROUP, plural: 'sandboxes' },
  SandboxClaim: { group: EXTENSIONS_GROUP, plural: 'sandboxclaims' },
  SandboxTemplate: { group: EXTENSIONS_GROUP, plural: 'sandboxtemplates' },
  SandboxWarmPool: { group: EXTENSIONS_GROUP, plural: 'sandboxwarmpools' },
};

/** Where a kind lives in the API: group, version and plural. */
export interface Gvr {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

/** The GVR of `kind` at the version of `family`. */
export function gvr(kind: SandboxKind, family: ReleaseFamily): Gvr {
  return gvrAt(kind, FAMILY_VERSION[family]);
}

/** The GVR of `kind` at `version`. */
export function gvrAt(kind: SandboxKind, version: string): Gvr {
  return { ...RESOURCES[kind], version };
}

/** `plural.group`: the CRD object name and the resource name used in RBAC messages. */
export function resourceName(kind: SandboxKind): string {
  const { group, plural } = RESOURCES[kind];
  return `${plural}.${group}`;
}
