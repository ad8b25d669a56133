/**
 * AgentPlane public API: constructs and synthesis, the pinned releases (loading, validation, lock, upgrade plans) and
 * the error base class. The adapter, verifier and diff are the subpaths `/adapter`, `/verify` and `/diff`. Internals
 * (cache layout, canonical JSON, derived-file helpers) are not exported; test/unit/public-api.test.ts pins the names.
 */
export * from './constructs/index.js';
export {
  apiGroup, buildEnvironments, defineEnvironments, isClusterScoped, loadEnvironmentModule, reconcileLock, synthesizeEnvironment, writeSynthesis, yamlStream,
  DuplicateObjectError, EnvironmentInvalidError, EnvironmentModuleError, ObjectTooLargeError, SchemaViolationError, SynthesisError,
  type EnvironmentSynthesis, type EnvironmentsBuilder, type EnvironmentsDefinition, type LockOutcome, type SynthContext, type SynthesizedFile,
  type SynthesizedObject, type SynthOptions, capacityOf, type RuntimeClassCapacity,
} from './synth/index.js';
export {
  SUPPORTED_RELEASES, isReleaseTag, releaseFacts, loadRelease, pullRelease, defaultMirror, CustomObjectValidator, planUpgrade, diffCrdSchemas,
  LockFileSchema, compareLock, lockFor, readLock, writeLock,
  ChecksumMismatchError, LockFileInvalidError, LockMismatchError, MirrorDirectoryMissingError, MissingFileError, ReleaseError, ReleaseParseError,
  SourceUnreachableError, UnknownReleaseError, VersionNotServedError,
  type CrdFacts, type CrdVersionFacts, type FetchOptions, type KubeObject, type LoadedRelease, type LockFile, type MirroredRelease, type PinnedFile,
  type ReleaseFacts, type ReleaseFamily, type ReleaseTag, type SandboxKind, type SchemaChange, type SchemaChangeKind, type SchemaViolation,
  type UpgradeFinding, type UpgradePlan, type UpgradeVerdict,
} from './releases/index.js';
export { AgentPlaneError, type ExitCategory } from './model/errors.js';
