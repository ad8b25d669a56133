/**
 * Public API of the diff layer: normalization, structural comparison with risk labels, renderers, manifest sources.
 * Its modules import values from the releases layer's own modules (crd-schema, schema-diff, kube-object), not its
 * barrel, which would load ajv, zod and yaml for every `agentplane diff` (types still come from the barrel).
 */
export {
  diffManifests,
  caBundleExternallyManaged,
  type DiffOptions,
  type DiffReport,
  type ManifestSet,
  type ObjectDiff,
} from './compare.js';
export { objectKey, ObjectIdentityError, type ObjectKey } from './identity.js';
export {
  CONTROLLER_OWNED,
  SERVER_OWNED_METADATA,
  normalizeObject,
  type NormalizeOptions,
  type SchemaLookup,
} from './normalize.js';
export {
  DIFF_FORMATS,
  MARKDOWN_BUDGET,
  renderDiff,
  renderJson,
  renderMarkdown,
  renderText,
  type DiffFormat,
} from './render.js';
export { assessRisks, type CrdBreak, type HeadObjects, type Risk, type RiskRule, type RiskSubject } from './risk.js';
export { dropDefaultOnly, fillSchemaDefaults, type SchemaNode } from './schema-defaults.js';
export { firstOf, schemaLookupFromObjects, schemaLookupFromRelease } from './schema-lookup.js';
export {
  clusterScopedBy,
  scopeLookupFromObjects,
  scopeLookupFromRelease,
  withoutClusterNamespaces,
  type ScopeLookup,
} from './scope.js';
export { REDACTED, REDACTED_AFTER, REDACTED_BEFORE, redactSecretPair } from './secrets.js';
export {
  documentSet,
  ManifestParseError,
  ManifestSourceError,
  parseDocument,
  parseManifests,
  splitDocuments,
  readManifestDir,
  readManifestSource,
  readManifestsAtGitRef,
  type DocumentCache,
  type GitRefOptions,
  type ManifestDocument,
  type ReadOptions,
} from './sources.js';
export { LiveObjectError, readLiveSets, type LiveReader, type UnreadableObject } from './live.js';
export { fieldChanges, type FieldChange } from './structural.js';
export { renderPlan, renderPlanMarkdown, renderPlanText } from './render-plan.js';
// Types the diff's public signatures use.
export type { ControllerOwnedField } from './normalize.js';
export type { ComparedPair } from './risk.js';
