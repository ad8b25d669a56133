/**
 * Which Agent Sandbox release family is live on a cluster: from the served API versions (discovery, readable by every
 * authenticated user) and, when the caller may read CRDs, the install's `app.kubernetes.io/version` label and the CRDs'
 * served/storage versions and conversion strategy. Version facts: `k8s/crds/*.yaml@{v0.4.6,v0.5.0,v0.5.6}`.
 */
import * as k8s from '@kubernetes/client-node';
import { familyOfServedVersions, familyOfTag, type ReleaseFamily } from '../../model/releases.js';
import { CORE_GROUP, EXTENSIONS_GROUP, resourceName } from '../../model/resources.js';
import type { ReleaseReason } from '../reasons.js';
import type { Result } from '../types.js';
import type { KubeClient } from './client.js';
import { VERSION_LABEL } from './resources.js';

/** What the CRD object says, when it could be read. */
export interface LiveCrd {
  readonly name: string;
  readonly served: readonly string[];
  readonly storage?: string;
  /** `status.storedVersions`. */
  readonly storedVersions: readonly string[];
  /** `spec.conversion.strategy` (`None` when absent). */
  readonly conversion: string;
  /** Whether `spec.conversion.webhook.clientConfig.caBundle` is non-empty. */
  readonly caBundle: boolean;
  /** `app.kubernetes.io/version` label, when the install set it. */
  readonly versionLabel?: string;
}

export interface LiveRelease {
  /** `v0.5` when the core group serves v1beta1, `v0.4` when it serves only v1alpha1, undefined when neither. */
  readonly family?: ReleaseFamily;
  /** Served versions of `agents.x-k8s.io` and `extensions.agents.x-k8s.io` from discovery (empty = group not served). */
  readonly coreVersions: readonly string[];
  readonly extensionsVersions: readonly string[];
  /** The release tag from the install's `app.kubernetes.io/version` label on the Sandbox CRD, when readable and set. */
  readonly tag?: string;
  /** The Sandbox and SandboxClaim CRDs, when the caller may read CRDs (undefined on 403/404). */
  readonly sandboxCrd?: LiveCrd;
  readonly claimCrd?: LiveCrd;
  /** Why the family is what it is (src/adapter/reasons.ts, `RELEASE_REASONS`). */
  readonly reason: ReleaseReason;
  /** The same in plain words: the served versions and the install label. */
  readonly message: string;
}

function toLiveCrd(crd: k8s.V1CustomResourceDefinition): LiveCrd {
  const versionLabel = crd.metadata?.labels?.[VERSION_LABEL];
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  return {
    name: crd.metadata?.name ?? '',
    served: crd.spec.versions.filter((v) => v.served).map((v) => v.name),
    ...(storage ? { storage } : {}),
    storedVersions: crd.status?.storedVersions ?? [],
    conversion: crd.spec.conversion?.strategy ?? 'None',
    caBundle: !!crd.spec.conversion?.webhook?.clientConfig?.caBundle,
    ...(versionLabel ? { versionLabel } : {}),
  };
}

/**
 * Detects the live release family.
 * Needs only discovery; reads CRDs (`get customresourcedefinitions`) when allowed and tolerates a 403/404 there.
 * Returns `failed` only when discovery itself fails (unreachable, unauthenticated).
 */
export async function detectRelease(client: KubeClient): Promise<Result<LiveRelease>> {
  const groups = await client.call('get apis (discovery)', () => client.api(k8s.ApisApi).getAPIVersions());
  if (groups.kind !== 'ok') return groups;
  const served = (name: string): string[] =>
    groups.value.groups.find((g) => g.name === name)?.versions.map((v) => v.version) ?? [];
  const coreVersions = served(CORE_GROUP);
  const extensionsVersions = served(EXTENSIONS_GROUP);
  const ext = client.api(k8s.ApiextensionsV1Api);
  const read = async (crdName: string): Promise<LiveCrd | undefined> => {
    const r = await client.call(`get customresourcedefinitions.apiextensions.k8s.io ${crdName}`, () =>
      ext.readCustomResourceDefinition({ name: crdName }),
    );
    return r.kind === 'ok' ? toLiveCrd(r.value) : undefined;
  };
  const [sandboxCrd, claimCrd] = coreVersions.length
    ? await Promise.all([
        read(resourceName('Sandbox')),
        extensionsVersions.length ? read(resourceName('SandboxClaim')) : Promise.resolve(undefined),
      ])
    : [undefined, undefined];
  const tag = sandboxCrd?.versionLabel;
  const byVersions = familyOfServedVersions(coreVersions);
  const byTag = tag ? familyOfTag(tag) : undefined;
  let reason: ReleaseReason;
  let message: string;
  if (!byVersions) {
    reason = 'CoreGroupNotServed';
    message = `API group ${CORE_GROUP} is not served: the Sandbox CRD is not installed`;
  } else if (byTag && byTag !== byVersions) {
    reason = 'InstallLabelDisagrees';
    message = `served versions (${coreVersions.join(', ')}) say ${byVersions} but the install label says ${tag}; trusting the served versions`;
  } else {
    reason = 'FamilyFromServedVersions';
    message = `${CORE_GROUP} serves ${coreVersions.join(', ')}${tag ? `; install label ${VERSION_LABEL}=${tag}` : ''}`;
  }
  return {
    kind: 'ok',
    value: {
      ...(byVersions ? { family: byVersions } : {}),
      coreVersions,
      extensionsVersions,
      ...(tag ? { tag } : {}),
      ...(sandboxCrd ? { sandboxCrd } : {}),
      ...(claimCrd ? { claimCrd } : {}),
      reason,
      message,
    },
  };
}
