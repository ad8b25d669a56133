/**
 * The package's public export names per entry point (`.`, `./adapter`, `./verify`, `./diff`), pinned: an export added or
 * removed by accident fails here. Change a list on purpose, together with the entry point's documentation.
 */
import * as root from '../../src/index.js';
import * as adapter from '../../src/adapter/adapter.js';
import * as verify from '../../src/verify/index.js';
import * as diff from '../../src/diff/index.js';

const EXPECTED: Record<'root' | 'adapter' | 'verify' | 'diff', string[]> = {
  root: [
    'ANNOTATION_LAST_APPLIED', 'ANNOTATION_LIMIT_BYTES', 'ANNOTATION_RELEASE', 'ANNOTATION_RELEASE_COMMIT',
    'ANNOTATION_SYNC_OPTIONS', 'ANNOTATION_SYNC_WAVE', 'AgentEnvironment', 'AgentPlaneError', 'AgentSandboxInstall',
    'ChecksumMismatchError', 'ConflictError', 'ConstructError', 'ConstructPropsError', 'CustomObjectValidator',
    'DESCRIPTOR_CONFIGMAP', 'DESCRIPTOR_KEY', 'DuplicateObjectError', 'EnvironmentDescriptorSchema',
    'EnvironmentInvalidError', 'EnvironmentModuleError', 'KnownDefectiveImageError', 'LABEL_ENVIRONMENT',
    'LABEL_MANAGED_BY', 'LABEL_TEMPLATE', 'LABEL_VERSION', 'LockFileInvalidError', 'LockFileSchema',
    'LockMismatchError', 'MANAGED_BY', 'MirrorDirectoryMissingError', 'MissingFileError', 'MissingReferenceError',
    'OBJECT_LIMIT_BYTES', 'ObjectTooLargeError', 'PHASES', 'RbacNarrowingError', 'ReleaseError', 'ReleaseParseError',
    'SANDBOXD_CONTAINER', 'SANDBOXD_GRPC_PORT', 'SANDBOXD_REST_PORT', 'SANDBOXD_ROOT', 'SANDBOXD_RUNTIME',
    'SERVER_SIDE_APPLY_THRESHOLD', 'SUPPORTED_RELEASES', 'SUPPORT_STATES', 'SandboxClaim', 'SandboxNetworkPolicy',
    'SandboxRouter', 'SandboxRuntimeClass', 'SandboxTemplate', 'SandboxWarmPool', 'SchemaViolationError',
    'SourceUnreachableError', 'SynthesisError', 'UnknownReleaseError', 'UnpinnedImageError',
    'UnsupportedByReleaseError', 'VerifierAccess', 'VersionNotServedError', 'apiGroup', 'buildEnvironments',
    'childProblems', 'compareLock', 'defaultMirror', 'defineEnvironments', 'descriptorJson', 'diffCrdSchemas',
    'duplicateObjects', 'isClusterScoped', 'isReleaseTag', 'loadEnvironmentModule', 'loadRelease', 'lockFor',
    'parseEnvironmentDescriptor', 'phaseIndex', 'phaseOf', 'planUpgrade', 'pullRelease', 'readLock', 'reconcileLock',
    'releaseFacts', 'renderObjects', 'sandboxdPodSpec', 'schemaViolations', 'setPhase', 'synthesizeEnvironment',
    'unpinnedReason', 'verifierClusterRules', 'verifierSandboxRules', 'writeLock', 'writeSynthesis', 'yamlStream',
  ],
  adapter: [
    'KubeCapabilityAdapter',
  ],
  verify: [
    'AdapterRuntimeProber', 'DEFAULT_CONTROLLER', 'EnvironmentDescriptorError', 'IMAGE_DIGESTS_PROBE', 'MANAGED_BY',
    'ProbeGraphError', 'REPORT_SCHEMA', 'RUN_LABEL', 'STEPS', 'TUPLE_KEYS', 'VerifyCouldNotRunError',
    'VerifyReportSchema', 'Workload', 'buildReport', 'checkImage', 'defaultRequired', 'fact', 'formatMs',
    'imageDigestsProbe', 'imageEvidence', 'meets', 'orderProbes', 'planFromDescriptor', 'planProbes', 'rank',
    'readEnvironment', 'registryDigest', 'renderJson', 'renderJunit', 'renderMarkdown', 'renderTable',
    'requirementsFor', 'runProbes', 'runVerify', 'settle', 'splitRef', 'startedContainers', 'tupleLine',
  ],
  diff: [
    'CONTROLLER_OWNED', 'DIFF_FORMATS', 'LiveObjectError', 'MARKDOWN_BUDGET', 'ManifestParseError',
    'ManifestSourceError', 'ObjectIdentityError', 'REDACTED', 'REDACTED_AFTER', 'REDACTED_BEFORE',
    'SERVER_OWNED_METADATA', 'assessRisks', 'caBundleExternallyManaged', 'clusterScopedBy', 'diffManifests',
    'documentSet', 'dropDefaultOnly', 'fieldChanges', 'fillSchemaDefaults', 'firstOf', 'normalizeObject', 'objectKey',
    'parseDocument', 'parseManifests', 'readLiveSets', 'readManifestDir', 'readManifestSource',
    'readManifestsAtGitRef', 'redactSecretPair', 'renderDiff', 'renderJson', 'renderMarkdown', 'renderPlan',
    'renderPlanMarkdown', 'renderPlanText', 'renderText', 'schemaLookupFromObjects', 'schemaLookupFromRelease',
    'scopeLookupFromObjects', 'scopeLookupFromRelease', 'splitDocuments', 'withoutClusterNamespaces',
  ],
};

test.each([['root', root], ['adapter', adapter], ['verify', verify], ['diff', diff]] as const)('entry point %s exports the curated names and nothing else', (name, mod) => {
  expect(Object.keys(mod).sort()).toEqual(EXPECTED[name]);
});

test('internals stay out of the root entry point', () => {
  for (const internal of ['canonicalJson', 'intermediateTags', 'defaultCacheDir', 'sha256Hex', 'readDerived', 'writeDerived', 'releaseCacheRoot']) expect(Object.keys(root)).not.toContain(internal);
});
