/**
 * The live state `agentplane plan-upgrade --kubeconfig` plans from (`planUpgrade` in src/releases/upgrade-plan.ts).
 */
import * as k8s from '@kubernetes/client-node';
import type { LiveClaim, LiveUpgradeState, ReleaseFacts, SandboxKind } from '../../releases/index.js';
import { AgentPlaneError, exitCategoryOfFailure, type ExitCategory } from '../../model/errors.js';
import { SANDBOX_KINDS } from '../../model/releases.js';
import type { KubeClient } from './client.js';
import type { Obj } from './cluster.js';
import { claimView, metaOf, type ClaimView } from './views.js';

/**
 * A live read that failed; the message names the call and the kubeconfig context. Its exit category follows the
 * failure's, as for every command: unreachable or no answer 7, credentials refused 8, forbidden 9.
 */
export class LiveStateError extends AgentPlaneError {
  readonly reason = 'LiveStateUnreadable';
  readonly exitCategory: ExitCategory;
  /** The adapter's failure category (`unreachable`, `forbidden`, ...), when a call failed. */
  readonly category?: string;
  constructor(
    what: string,
    readonly hint: string,
    category?: string,
  ) {
    super(what);
    this.exitCategory = exitCategoryOfFailure(category ?? '', 'cluster');
    if (category !== undefined) this.category = category;
  }
}

const KINDS: readonly SandboxKind[] = SANDBOX_KINDS;

/**
 * Reads what an upgrade plan needs from the cluster: each Agent Sandbox CRD's `status.storedVersions` and served
 * versions, the install's release label (`app.kubernetes.io/version` on the Sandbox CRD), the warm-started claims
 * (bound to a Sandbox whose name is not the claim's: adopted from a pool, `extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6`), and, when v1alpha1 claims are
 * stored and served, those claims and the warm pools (their names change in v1beta1, `k8s/crds/extensions.agents.x-k8s.io_sandboxclaims.yaml@v0.5.6`).
 * @throws {LiveStateError} a read the cluster refused, naming the call, the context and the right to grant.
 */
export async function readUpgradeState(
  client: KubeClient,
  facts: ReleaseFacts,
): Promise<{ state: LiveUpgradeState; tag?: string }> {
  const ext = client.api(k8s.ApiextensionsV1Api);
  const co = client.api(k8s.CustomObjectsApi);
  const storedVersions: Partial<Record<SandboxKind, readonly string[]>> = {};
  const servedLive: Partial<Record<SandboxKind, readonly string[]>> = {};
  const storageLive: Partial<Record<SandboxKind, string>> = {};
  let tag: string | undefined;
  for (const kind of KINDS) {
    const name = facts.crds[kind].crdName;
    const r = await client.call(`get customresourcedefinitions.apiextensions.k8s.io ${name}`, () =>
      ext.readCustomResourceDefinition({ name }),
    );
    if (r.kind !== 'ok') {
      if (r.kind === 'failed' && r.error.category === 'not-found') continue;
      throw new LiveStateError(
        `cannot read CRD ${name} in context ${client.context}: ${r.kind === 'failed' ? r.error.message : r.kind}`,
        r.kind === 'failed'
          ? (r.error.hint ?? 'grant get on customresourcedefinitions')
          : 'grant get on customresourcedefinitions',
        r.kind === 'failed' ? r.error.category : undefined,
      );
    }
    storedVersions[kind] = r.value.status?.storedVersions ?? [];
    servedLive[kind] = r.value.spec.versions.filter((v) => v.served).map((v) => v.name);
    const storage = r.value.spec.versions.find((v) => v.storage && v.served)?.name;
    if (storage !== undefined) storageLive[kind] = storage;
    if (kind === 'Sandbox') tag = r.value.metadata?.labels?.['app.kubernetes.io/version'];
  }
  const list = async (kind: SandboxKind, version: string): Promise<Obj[]> => {
    const { group, plural } = facts.crds[kind];
    const r = await client.call(
      `list ${plural}.${group}`,
      () => co.listCustomObjectForAllNamespaces({ group, version, plural }) as Promise<{ items?: Obj[] }>,
    );
    if (r.kind !== 'ok')
      throw new LiveStateError(
        `cannot list ${plural}.${group}/${version} in context ${client.context}: ${r.kind === 'failed' ? r.error.message : r.kind}`,
        'grant list on the Agent Sandbox resources, or plan with --from instead',
        r.kind === 'failed' ? r.error.category : undefined,
      );
    return r.value.items ?? [];
  };
  const claimsAt = async (version: string): Promise<ClaimView[]> =>
    (await list('SandboxClaim', version)).map((c) => claimView(c, facts.family));
  let claims: LiveClaim[] | undefined;
  let pools: string[] | undefined;
  let claimViews: ClaimView[] = [];
  if (
    (storedVersions.SandboxClaim ?? []).includes('v1alpha1') &&
    (servedLive.SandboxClaim ?? []).includes('v1alpha1')
  ) {
    claimViews = await claimsAt('v1alpha1');
    claims = claimViews.map((c) => ({
      namespace: c.meta.namespace ?? '',
      name: c.meta.name,
      ...(c.template !== undefined ? { template: c.template } : {}),
      ...(c.warmpool !== undefined ? { warmpool: c.warmpool } : {}),
      ...(c.boundSandbox !== undefined ? { sandboxName: c.boundSandbox } : {}),
    }));
    const poolVersion = (servedLive.SandboxWarmPool ?? [])[0];
    pools =
      poolVersion === undefined
        ? []
        : (await list('SandboxWarmPool', poolVersion)).map(metaOf).map((p) => `${p.namespace ?? ''}/${p.name}`);
  } else if (storageLive.SandboxClaim !== undefined) {
    claimViews = await claimsAt(storageLive.SandboxClaim);
  }
  const warmClaims = claimViews
    .filter((c) => c.boundSandbox !== undefined && c.boundSandbox !== c.meta.name)
    .map((c) => `${c.meta.namespace ?? ''}/${c.meta.name}`)
    .sort();
  return {
    state: {
      source: `context ${client.context}`,
      storedVersions,
      warmClaims,
      ...(claims ? { claims } : {}),
      ...(pools ? { pools } : {}),
    },
    ...(tag ? { tag } : {}),
  };
}
