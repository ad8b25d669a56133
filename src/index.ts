/**
 * AgentPlane public API. Each layer adds its own re-export lines.
 */
export * from './constructs/index.js';
export {
  apiGroup, buildEnvironments, defineEnvironments, isClusterScoped, loadEnvironmentModule, reconcileLock, synthesizeEnvironment, writeSynthesis, yamlStream,
  DuplicateObjectError, EnvironmentInvalidError, EnvironmentModuleError, ObjectTooLargeError, SchemaViolationError, SynthesisError,
  type EnvironmentSynthesis, type EnvironmentsBuilder, type EnvironmentsDefinition, type LockOutcome, type SynthContext, type SynthesizedFile,
  type SynthesizedObject, type SynthOptions,
} from './synth/index.js';
export * from './releases/index.js';
export { AgentPlaneError, type ExitCategory } from './model/errors.js';
