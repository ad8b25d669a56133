/**
 * Argo CD health checks for the Agent Sandbox kinds (case posthook-before-sandboxes-ready). Argo CD counts a custom
 * resource without a health check as Healthy as soon as it exists (argoproj/argo-cd#16509, PR #29511), so a PostSync
 * hook would start while the controller has not reconciled anything; upstream agent-sandbox ships no health
 * customisations. These Lua scripts, one per kind and release, go into `argocd-cm` under
 * `resource.customizations.health.<group>_<kind>` ({@link argoCdHealthSnippet}); Argo CD runs each with the live object
 * as the global `obj` and reads `status` and `message` from the table it returns.
 *
 * What each script reads, per release (conditions and reasons: `CONDITION_REASONS` in src/releases/upgrade-plan.ts):
 * - `Sandbox`: the Ready condition, counted only at the Sandbox's current generation (`observedGeneration`); Suspended
 *   (`Suspended` condition, or `spec.replicas: 0` on v0.4, which has no such condition); Degraded on a failure reason.
 * - `SandboxClaim`: the Ready condition. Up to v0.5.6 it is the bound Sandbox's condition copied as is, so its
 *   `observedGeneration` is the Sandbox's and cannot be compared with the claim's; from v1.0 it is the claim's own
 *   (kubernetes-sigs/agent-sandbox PR #1317), so a condition older than the claim is Progressing.
 * - `SandboxWarmPool`: `status.readyReplicas` against `spec.replicas`; on releases whose status has
 *   `observedGeneration` (v0.5.6 on, kubernetes-sigs/agent-sandbox#1328) only when it is current. An absent counter
 *   is 0 (the status omits zero counters).
 */
import { stringify } from 'yaml';
import { POOL_STATUS, RELEASE_TAGS, type ReleaseTag } from '../model/releases.js';

/** The kinds that get a health check, with their API group. */
export const ARGOCD_HEALTH_KINDS = {
  Sandbox: 'agents.x-k8s.io',
  SandboxClaim: 'extensions.agents.x-k8s.io',
  SandboxWarmPool: 'extensions.agents.x-k8s.io',
} as const;

export type ArgoCdHealthKind = keyof typeof ARGOCD_HEALTH_KINDS;

/** What differs between releases for the health checks. */
interface HealthTraits {
  /** v0.4 has no Suspended condition: a Sandbox with `spec.replicas: 0` is suspended. */
  readonly suspendByReplicas: boolean;
  /** The claim's Ready condition carries the claim's own generation (else the bound Sandbox's). */
  readonly claimOwnGeneration: boolean;
  /** The pool's status has `observedGeneration` ({@link POOL_STATUS}). */
  readonly poolObservedGeneration: boolean;
}

const TRAITS: Readonly<Record<ReleaseTag, Omit<HealthTraits, 'poolObservedGeneration'>>> = {
  'v0.4.6': { suspendByReplicas: true, claimOwnGeneration: false },
  'v0.5.0': { suspendByReplicas: false, claimOwnGeneration: false },
  'v0.5.6': { suspendByReplicas: false, claimOwnGeneration: false },
  'v1.0.3': { suspendByReplicas: false, claimOwnGeneration: true },
};

/** Ready reasons that mean failure rather than "not yet" (`controllers/sandbox_controller.go@tag`). */
const SANDBOX_FAILED = ['ReconcilerError', 'SandboxExpired', 'MultiplePods', 'PodSucceeded', 'PodFailed'];
/** Claim Ready reasons that mean failure (`extensions/controllers/sandboxclaim_controller.go@tag`), plus the Sandbox's. */
const CLAIM_FAILED = [
  ...SANDBOX_FAILED,
  'TemplateNotFound',
  'WarmPoolNotFound',
  'AdoptionConflict',
  'InvalidMetadata',
  'EnvVarsInjectionRejected',
  'VolumeClaimTemplatesError',
  'ClaimExpired',
];

const luaSet = (names: readonly string[]): string => `{ ${names.map((n) => `${n} = true`).join(', ')} }`;

/** Helpers every script starts with: the object's generation and a condition by type. Lua 5.1 (Argo CD's gopher-lua). */
const PRELUDE = `local hs = { status = "Progressing", message = "" }
local generation = 0
if obj.metadata ~= nil and obj.metadata.generation ~= nil then generation = obj.metadata.generation end
local function condition(kind)
  if obj.status == nil or obj.status.conditions == nil then return nil end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == kind then return c end
  end
  return nil
end
local function current(c)
  return c ~= nil and c.observedGeneration ~= nil and c.observedGeneration >= generation
end
local function describe(c)
  local text = c.type .. "=" .. tostring(c.status)
  if c.reason ~= nil and c.reason ~= "" then text = text .. " (" .. c.reason .. ")" end
  if c.message ~= nil and c.message ~= "" then text = text .. ": " .. c.message end
  return text
end
`;

function sandboxLua(t: HealthTraits): string {
  return `${PRELUDE}local FAILED = ${luaSet(SANDBOX_FAILED)}
local ready = condition("Ready")
if ready == nil then
  hs.message = "Waiting for the controller to report Ready"
  return hs
end
if not current(ready) then
  hs.message = "Ready is for generation " .. tostring(ready.observedGeneration) .. ", the Sandbox is at " .. tostring(generation) .. ": reconcile pending"
  return hs
end
local suspended = condition("Suspended")
${
  t.suspendByReplicas
    ? `if obj.spec ~= nil and obj.spec.replicas == 0 then`
    : `if (suspended ~= nil and suspended.status == "True" and current(suspended)) or ready.reason == "SandboxSuspended" then`
}
  hs.status = "Suspended"
  hs.message = describe(ready)
  return hs
end
if ready.status == "True" then
  hs.status = "Healthy"
elseif FAILED[ready.reason] then
  hs.status = "Degraded"
end
hs.message = describe(ready)
return hs
`;
}

function claimLua(t: HealthTraits): string {
  const stale = t.claimOwnGeneration
    ? `if not current(ready) then
  hs.message = "Ready is for generation " .. tostring(ready.observedGeneration) .. ", the claim is at " .. tostring(generation) .. ": reconcile pending"
  return hs
end
`
    : `-- This release copies the bound Sandbox's Ready condition onto the claim: its observedGeneration is the Sandbox's.
`;
  return `${PRELUDE}local FAILED = ${luaSet(CLAIM_FAILED)}
local ready = condition("Ready")
if ready == nil then
  hs.message = "Waiting for the controller to report Ready"
  return hs
end
${stale}if ready.status == "True" then
  hs.status = "Healthy"
elseif FAILED[ready.reason] then
  hs.status = "Degraded"
end
hs.message = describe(ready)
return hs
`;
}

function poolLua(t: HealthTraits): string {
  const gate = t.poolObservedGeneration
    ? `if status.observedGeneration == nil or status.observedGeneration < generation then
  hs.message = "Status is for generation " .. tostring(status.observedGeneration) .. ", the pool is at " .. tostring(generation) .. ": reconcile pending"
  return hs
end
`
    : '';
  return `${PRELUDE}local status = obj.status
if status == nil then
  hs.message = "Waiting for the controller to report the pool's members"
  return hs
end
${gate}local desired = 1
if obj.spec ~= nil and obj.spec.replicas ~= nil then desired = obj.spec.replicas end
local ready = 0
if status.readyReplicas ~= nil then ready = status.readyReplicas end
hs.message = tostring(ready) .. " of " .. tostring(desired) .. " members Ready"
if ready >= desired then hs.status = "Healthy" end
return hs
`;
}

const SCRIPTS: Readonly<Record<ArgoCdHealthKind, (t: HealthTraits) => string>> = {
  Sandbox: sandboxLua,
  SandboxClaim: claimLua,
  SandboxWarmPool: poolLua,
};

/** The Lua health script of `kind` for `release`. */
export function argoCdHealthLua(release: ReleaseTag, kind: ArgoCdHealthKind): string {
  return SCRIPTS[kind]({ ...TRAITS[release], poolObservedGeneration: POOL_STATUS[release].observedGeneration });
}

/** The `argocd-cm` data keys and their Lua for `release`: `resource.customizations.health.<group>_<kind>`. */
export function argoCdHealthCustomizations(release: ReleaseTag): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kind of Object.keys(ARGOCD_HEALTH_KINDS) as ArgoCdHealthKind[])
    out[`resource.customizations.health.${ARGOCD_HEALTH_KINDS[kind]}_${kind}`] = argoCdHealthLua(release, kind);
  return out;
}

/**
 * The `argocd-cm` patch that installs the health checks of `release`, as YAML: merge it into the ConfigMap
 * `argocd-cm` in Argo CD's namespace (e.g. `kubectl patch configmap argocd-cm -n argocd --patch-file`, or a
 * kustomize patch of the Argo CD install).
 */
export function argoCdHealthSnippet(release: ReleaseTag, namespace = 'argocd'): string {
  return stringify(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'argocd-cm', namespace },
      data: argoCdHealthCustomizations(release),
    },
    { lineWidth: 0 },
  );
}

/** The releases health checks exist for (every supported one). */
export const ARGOCD_HEALTH_RELEASES: readonly ReleaseTag[] = RELEASE_TAGS;
