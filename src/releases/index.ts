/** Public API of the releases layer: pinned catalog, verified loading, CRD schema model, validation and the lock file. */
export type {
  CrdFacts,
  CrdVersionFacts,
  KubeObject,
  LoadedRelease,
  PinnedFile,
  PrinterColumnFacts,
  ReleaseFacts,
  ReleaseFamily,
  ReleaseTag,
  SandboxKind,
} from './types.js';
export { SUPPORTED_RELEASES, isReleaseTag, releaseFacts } from './supported.js';
export {
  ChecksumMismatchError,
  LockFileInvalidError,
  LockMismatchError,
  MissingFileError,
  ReleaseError,
  ReleaseParseError,
  SourceUnreachableError,
  UnknownReleaseError,
  VersionNotServedError,
  type LockIssue,
  type SourceFailure,
} from './errors.js';
export {
  defaultMirror,
  MirrorDirectoryMissingError,
  RedirectRefusedError,
  upstreamUrl,
  type FetchFunction,
  type FetchOptions,
  type FetchResponse,
} from './fetch.js';
export { defaultCacheDir, sha256Hex } from './cache.js';
export { loadRelease } from './load.js';
export { pullRelease, type MirroredRelease } from './mirror.js';
export { isKubeObject } from './kube-object.js';
export { KNOWN_DEFECTIVE_IMAGES, knownDefectOf, type DefectiveImage } from './defective-images.js';
export { canonicalRepository, parseImage, type ImageRef } from './image-ref.js';
export { CLUSTER_SCOPED_KINDS, apiGroup, isCoreClusterScoped } from './scope.js';
export { readDerived, releaseCacheRoot, writeDerived } from './derived.js';
export {
  canonicalJson,
  crdObject,
  crdSizeBytes,
  lastAppliedSizeBytes,
  openApiSchema,
  pinnedSchemaFingerprint,
  schemaFingerprint,
  servedVersions,
  type JsonSchema,
} from './crd-schema.js';
export { CustomObjectValidator, type SchemaViolation } from './validator.js';
export { compareLock, lockFor, readLock, reconcileLock, writeLock, type LockFile, type LockOutcome } from './lock.js';
export { describeLockDifference, type LockDifference, type LockField } from './lock-difference.js';
export {
  KNOWN_RENAMES,
  diffCrdSchemas,
  diffSchemas,
  type KnownRename,
  type SchemaChange,
  type SchemaChangeKind,
} from './schema-diff.js';
export {
  BLOCKING_DEFECTS,
  CONDITION_REASONS,
  KNOWN_DEFECTS,
  compareTags,
  convertedPoolName,
  intermediateTags,
  operationsFor,
  planUpgrade,
  type AdapterOperation,
  type FindingSeverity,
  type LiveClaim,
  type BlockingDefect,
  type LiveUpgradeState,
  type PlanOptions,
  type UpgradeDirection,
  type FindingSubject,
  type UpgradeFinding,
  type UpgradePlan,
  type UpgradeVerdict,
} from './upgrade-plan.js';
export {
  CLIENT_MODES,
  CLIENT_SDKS,
  CLIENT_SDK_VERSIONS,
  K8S_AGENT_SANDBOX_0_5_6,
  K8S_AGENT_SANDBOX_1_0_8,
  clientSdkFacts,
  isLoopbackHost,
  runtimeBind,
  type RuntimeBind,
  type ClientCall,
  type ClientMode,
  type ClientModeFacts,
  type ClientRuntimeApi,
  type ClientSdk,
  type ClientSdkFacts,
} from './client-sdk.js';
export {
  formatGoDuration,
  parseGoDuration,
  routerLimitFacts,
  routerTimeouts,
  runtimeExecLimitFacts,
  type RouterLimitFacts,
  type RouterTimeout,
  type RouterTimeouts,
  type RuntimeExecLimitFacts,
} from './router-limits.js';
