/**
 * The live state `agentplane plan-upgrade --kubeconfig` plans from (`planUpgrade` in src/releases/upgrade-plan.ts).
 */
import * as k8s from '@kubernetes/client-node';
import type { LiveClaim, LiveUpgradeState, ReleaseFacts, SandboxKind } from '../../releases/index.js';
import { AgentPlaneError } from '../../model/errors.js';
import { SANDBOX_KINDS } from '../../model/releases.js';
import type { KubeClient } from './client.js';

/** A live read that failed; the message names the call and the kubeconfig context. */
export class LiveStateError extends AgentPlaneError {
  readonly reason = 'LiveStateUnreadable';
  readonly exitCategory = 'cluster';
  constructor(
    what: string,
    readonly hint: string,
  ) {
    super(what);
  }
}

const KINDS: readonly SandboxKind[] = SANDBOX_KINDS;

type Obj = {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

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
      );
    return r.value.items ?? [];
  };
  const boundName = (c: Obj): string | undefined => {
    const name = (c.status?.sandbox as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' && name !== '' ? name : undefined;
  };
  let claims: LiveClaim[] | undefined;
  let pools: string[] | undefined;
  let claimObjects: Obj[] = [];
  if (
    (storedVersions.SandboxClaim ?? []).includes('v1alpha1') &&
    (servedLive.SandboxClaim ?? []).includes('v1alpha1')
  ) {
    claimObjects = await list('SandboxClaim', 'v1alpha1');
    claims = claimObjects.map((c) => ({
      namespace: c.metadata?.namespace ?? '',
      name: c.metadata?.name ?? '',
      ...(typeof (c.spec?.sandboxTemplateRef as { name?: unknown } | undefined)?.name === 'string'
        ? { template: (c.spec!.sandboxTemplateRef as { name: string }).name }
        : {}),
      ...(typeof c.spec?.warmpool === 'string' ? { warmpool: c.spec.warmpool } : {}),
      ...(boundName(c) !== undefined ? { sandboxName: boundName(c)! } : {}),
    }));
    const poolVersion = (servedLive.SandboxWarmPool ?? [])[0];
    pools =
      poolVersion === undefined
        ? []
        : (await list('SandboxWarmPool', poolVersion)).map(
            (p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`,
          );
  } else if (storageLive.SandboxClaim !== undefined) {
    claimObjects = await list('SandboxClaim', storageLive.SandboxClaim);
  }
  const warmClaims = claimObjects
    .filter((c) => boundName(c) !== undefined && boundName(c) !== c.metadata?.name)
    .map((c) => `${c.metadata?.namespace ?? ''}/${c.metadata?.name ?? ''}`)
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
