/** Public API of synthesis: environment modules, synthesis of an environment, lock reconciliation, writing. */
export {
  buildEnvironments,
  defineEnvironments,
  loadEnvironmentModule,
  type EnvironmentsBuilder,
  type EnvironmentsDefinition,
  type SynthContext,
} from './environment-module.js';
export {
  ANNOTATION_LIMIT_BYTES,
  OBJECT_LIMIT_BYTES,
  synthesizeEnvironment,
  type EnvironmentSynthesis,
  type SynthesizedFile,
  type SynthesizedObject,
  type SynthOptions,
} from './synthesize.js';
export { reconcileLock, type LockOutcome } from '../releases/index.js';
export { writeSynthesis } from './write.js';
export { yamlDocument, yamlStream, type YamlStreamOptions } from './yaml.js';
export { apiGroup, isClusterScoped } from './scope.js';
export {
  DuplicateObjectError,
  EnvironmentInvalidError,
  EnvironmentModuleError,
  type EnvironmentModuleProblem,
  ObjectTooLargeError,
  OutputRuleError,
  SchemaViolationError,
  SynthesisError,
} from './errors.js';
export { capacityNotes, capacityOf, type ResourceFigures, type RuntimeClassCapacity } from './capacity.js';
