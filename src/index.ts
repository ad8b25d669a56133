/**
 * AgentPlane public API: constructs and synthesis, the pinned releases (loading, validation, lock, upgrade plans) and
 * the error base class. The adapter, verifier and diff are the subpaths `/adapter`, `/verify` and `/diff`. Internals
 * (cache layout, canonical JSON, derived-file helpers) are not exported; test/unit/public-api.test.ts pins the names.
 */
export * from './constructs/index.js';
export {
  ARGOCD_HEALTH_KINDS,
  ARGOCD_HEALTH_RELEASES,
  argoCdHealthCustomizations,
  argoCdHealthLua,
  argoCdHealthSnippet,
  type ArgoCdHealthKind,
} from './gitops/argocd-health.js';
export {
  apiGroup,
  buildEnvironments,
  defineEnvironments,
  isClusterScoped,
  loadEnvironmentModule,
  reconcileLock,
  synthesizeEnvironment,
  writeSynthesis,
  yamlStream,
  DuplicateObjectError,
  EnvironmentInvalidError,
  EnvironmentModuleError,
  ObjectTooLargeError,
  OutputRuleError,
  SchemaViolationError,
  SynthesisError,
  type EnvironmentSynthesis,
  type EnvironmentsBuilder,
  type EnvironmentsDefinition,
  type LockOutcome,
  type SynthContext,
  type SynthesizedFile,
  type SynthesizedObject,
  type SynthOptions,
  capacityOf,
  type RuntimeClassCapacity,
} from './synth/index.js';
export {
  SUPPORTED_RELEASES,
  isReleaseTag,
  releaseFacts,
  loadRelease,
  pullRelease,
  defaultMirror,
  CustomObjectValidator,
  planUpgrade,
  diffCrdSchemas,
  compareLock,
  describeLockDifference,
  lockFor,
  readLock,
  writeLock,
  ChecksumMismatchError,
  LockFileInvalidError,
  LockMismatchError,
  MirrorDirectoryMissingError,
  MissingFileError,
  ReleaseError,
  ReleaseParseError,
  SourceUnreachableError,
  UnknownReleaseError,
  VersionNotServedError,
  type CrdFacts,
  type LockDifference,
  type LockField,
  type CrdVersionFacts,
  type FetchFunction,
  type FetchOptions,
  type FetchResponse,
  type KubeObject,
  type LoadedRelease,
  type LockFile,
  type LockIssue,
  type MirroredRelease,
  type PinnedFile,
  type ReleaseFacts,
  type ReleaseFamily,
  type ReleaseTag,
  type RouterLimitFacts,
  type RouterTimeout,
  type RouterTimeouts,
  type SandboxKind,
  type SchemaChange,
  type SchemaChangeKind,
  type SchemaViolation,
  type UpgradeFinding,
  type UpgradePlan,
  type UpgradeVerdict,
} from './releases/index.js';
export { AgentPlaneError, type ExitCategory } from './model/errors.js';
export { ERROR_REASONS, type ErrorReason } from './model/error-reasons.js';
export { UPGRADE_REASONS, type UpgradeReason } from './releases/upgrade-reasons.js';
// Types the public signatures above use.
export type { PropProblem } from './constructs/errors.js';
export type { ClientEnvironmentView } from './constructs/client.js';
export type { RouterApiServerEndpoint, RouterPeer } from './constructs/router.js';
export type { ContainerImage } from './constructs/images.js';
export type { PodResources, Resources } from './constructs/resources.js';
export type { VerifierJobScope } from './constructs/verifier-job.js';
export type { ResourceFigures } from './synth/capacity.js';
export type { YamlStreamOptions } from './synth/yaml.js';
export type { EnvironmentModuleProblem } from './synth/errors.js';
export type { SourceFailure, SourceOrigin } from './releases/errors.js';
export type { PrinterColumnFacts } from './releases/types.js';
export type {
  ClientCall,
  ClientMode,
  ClientModeFacts,
  ClientRuntimeApi,
  ClientSdkFacts,
} from './releases/client-sdk.js';
export type {
  AdapterOperation,
  FindingSeverity,
  FindingSubject,
  LiveClaim,
  LiveUpgradeState,
  PlanOptions,
  UpgradeDirection,
  WithFacts,
} from './releases/upgrade-plan.js';
