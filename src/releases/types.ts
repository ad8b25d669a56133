/**
 * Types of the releases layer: the pinned facts of each supported Agent Sandbox release and the
 * verified files loaded for one of them. Facts come from the upstream release index (`scripts/gen-catalog.ts`).
 */

import type { ReleaseFamily, ReleaseTag, SandboxKind } from '../model/releases.js';

export type { ReleaseFamily, ReleaseTag, SandboxKind };

/** One file of a release, pinned by sha256 (hex) and size (bytes). `path` is the upstream path at the release commit, e.g. `k8s/crds/agents.x-k8s.io_sandboxes.yaml`. */
export interface PinnedFile {
  readonly path: string;
  /** Path of the file below `<mirror>/<tag>/` (the mirror keeps upstream paths except `packages/sandboxd/spec/**` -> `sandboxd-spec/**`). */
  readonly mirrorPath: string;
  readonly sha256: string;
  readonly size: number;
}

/** One additional printer column of a CRD version (`spec.versions[].additionalPrinterColumns`). */
export interface PrinterColumnFacts {
  readonly name: string;
  readonly type: string;
  readonly jsonPath: string;
}

/** Facts of one CRD version as listed in the pinned CRD file. */
export interface CrdVersionFacts {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated: boolean;
  /** Subresources enabled for this version, sorted: `scale`, `status`. */
  readonly subresources: readonly string[];
  readonly printerColumns: readonly PrinterColumnFacts[];
}

/** Facts of one CRD of a release. */
export interface CrdFacts {
  readonly kind: SandboxKind;
  readonly crdName: string;
  readonly group: string;
  readonly plural: string;
  readonly scope: 'Namespaced' | 'Cluster';
  /** `spec.conversion.strategy`; `None` when the CRD has no conversion stanza (v0.4.6). */
  readonly conversionStrategy: 'None' | 'Webhook';
  readonly versions: readonly CrdVersionFacts[];
  /** Upstream path of the CRD file. */
  readonly file: string;
}

/** The catalog entry of one supported release: facts only. */
export interface ReleaseFacts {
  readonly tag: ReleaseTag;
  readonly family: ReleaseFamily;
  readonly commit: string;
  /** `registry.k8s.io/agent-sandbox/agent-sandbox-controller:<tag>` */
  readonly controllerImage: string;
  /** `ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller` */
  readonly controllerImagePlaceholder: string;
  /** Upstream paths in the order upstream's release tool concatenates the core asset. */
  readonly coreAssetOrder: readonly string[];
  /** Upstream paths in the order upstream's release tool concatenates the extensions asset. */
  readonly extensionsAssetOrder: readonly string[];
  /** Whether the controller binary has `--manage-webhook-certs` (absent on v0.5.0). */
  readonly hasManageWebhookCertsFlag: boolean;
  readonly crds: Readonly<Record<SandboxKind, CrdFacts>>;
  readonly files: readonly PinnedFile[];
}

/** A Kubernetes object as parsed from YAML. */
export type KubeObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata?: Record<string, unknown> & { name?: string; namespace?: string };
};

/** A release whose files were all fetched and sha256-verified, parsed into objects. Constructs consume this; they never do I/O. */
export interface LoadedRelease {
  readonly facts: ReleaseFacts;
  /** Raw verified bytes per upstream path. */
  readonly files: ReadonlyMap<string, Buffer>;
  /** Parsed objects per upstream path, in file order (empty documents dropped). */
  readonly objects: ReadonlyMap<string, readonly KubeObject[]>;
}
