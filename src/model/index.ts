/** The shared vocabulary of every layer; it imports nothing else of AgentPlane's. */
export { appendAll } from './arrays.js';
export type { CapabilityName } from './capabilities.js';
export { BUILT_FOR, TUPLE_KEYS, type TuplePart } from './compatibility.js';
export { AgentPlaneError, EXIT_CATEGORIES, exitCategoryOfFailure, type ExitCategory } from './errors.js';
export { DNS_LABEL, DNS_LABEL_MAX } from './names.js';
export { isPlainObject, withSortedKeys } from './objects.js';
export { OUTPUT_RULES, type OutputRule } from './output-rules.js';
export { PACKAGE_NAME, packageVersion } from './package-info.js';
export {
  FAMILY_VERSION,
  familyConverts,
  familyOfServedVersions,
  familyOfTag,
  isBetaFamily,
  POOL_STATUS,
  RELEASE_FAMILIES,
  RELEASE_TAGS,
  SANDBOX_KINDS,
  storageVersionOf,
  type PoolStatusTraits,
  type ReleaseFamily,
  type ReleaseTag,
  type SandboxKind,
} from './releases.js';
export { CORE_GROUP, EXTENSIONS_GROUP, gvr, gvrAt, resourceName, RESOURCES, type Gvr } from './resources.js';
export { SUPPORT_STATES, type RequiredState, type SupportState } from './states.js';
