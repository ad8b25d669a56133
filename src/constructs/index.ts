/** Public API of the constructs layer. */
export {
  AgentEnvironment,
  DESCRIPTOR_CONFIGMAP,
  DESCRIPTOR_KEY,
  type AgentEnvironmentProps,
  type EnvironmentCheck,
} from './environment.js';
export {
  ANNOTATION_LIMIT_BYTES,
  OBJECT_LIMIT_BYTES,
  isClusterScoped,
  renderObjects,
  type RenderedObject,
  type Rendering,
} from './render.js';
export {
  describeDuplicate,
  describeOversize,
  describeViolation,
  duplicateObjects,
  objectIdentity,
  schemaViolations,
  type DuplicateObject,
  type ObjectIdentity,
  type ObjectSchemaViolation,
  type OversizeObject,
} from './output-checks.js';
export { childProblems, type EnvironmentProblem } from './problems.js';
export {
  describeOutputRuleViolation,
  outputRuleViolations,
  type Acknowledgement,
  type AcknowledgementInput,
  type OutputRuleViolation,
} from './written-rules.js';
export { OUTPUT_RULES, type OutputRule } from '../model/output-rules.js';
export { environmentsLock } from './lock.js';
export {
  AgentSandboxInstall,
  SERVER_SIDE_APPLY_THRESHOLD,
  type AgentSandboxInstallProps,
  type CertificateMode,
} from './install.js';
export type { ControllerDeploymentProps, ControllerResources } from './controller-deployment.js';
export type { ControllerRbacScope, ControllerResource, NamespaceScope, NarrowedResource } from './controller-rbac.js';
export {
  SandboxRuntimeClass,
  type RuntimePreset,
  type RuntimeNodes,
  type RuntimeScheduling,
  type SandboxRuntimeClassProps,
} from './runtime-class.js';
export {
  SandboxTemplate,
  type NetworkPolicyManagement,
  type SandboxTemplateProps,
  type TemplateNetworkRules,
  type TemplateRuntime,
} from './template.js';
export type { TemplateRuntimeBind } from './template-runtime.js';
export { SandboxWarmPool, type SandboxWarmPoolProps } from './warm-pool.js';
export { SandboxClaim, type SandboxClaimProps } from './claim.js';
export { type ClaimLifecycle, type ResolvedClaimLifecycle, type ShutdownPolicy } from './lifetime.js';
export {
  CapacityError,
  UnboundedLifetimeError,
  UnreachableError,
  type CapacityFigures,
  type CapacityReason,
  type ReachabilityReason,
  type ReachabilitySides,
} from './bounds-errors.js';
export {
  ClientIncompatibleError,
  SandboxClientDecl,
  type ClientNeeds,
  type EnvironmentOffers,
  type SandboxClientProps,
} from './client.js';
export type { RouterLimitWarning, TemplateExecLimit } from './exec-limits.js';
export {
  RouterOptionNotModeledError,
  SandboxRouter,
  type RouterAuthorization,
  type SandboxRouterProps,
} from './router.js';
export {
  SandboxNetworkPolicy,
  type DnsTargets,
  type ResolvedDnsTargets,
  type EgressAllow,
  type PodPeer,
  type SandboxNetworkPolicyProps,
} from './network-policy.js';
export {
  sandboxdPodSpec,
  SANDBOXD_CONTAINER,
  SANDBOXD_GRPC_PORT,
  SANDBOXD_REST_PORT,
  SANDBOXD_ROOT,
  SANDBOXD_RUNTIME,
  type SandboxdPodSpecProps,
} from './sandboxd.js';
export { descriptorJson, parseEnvironmentDescriptor, type EnvironmentDescriptor } from './descriptor.js';
export { SUPPORT_STATES, type RequiredState, type SupportState } from '../model/states.js';
export {
  ConflictError,
  ConstructError,
  ConstructPropsError,
  KnownDefectiveImageError,
  MissingReferenceError,
  RbacNarrowingError,
  UnpinnedImageError,
  UnsupportedByReleaseError,
  VerifierDeliveryError,
  type RbacNarrowingDetails,
  type UnpinnedCause,
  type VerifierDeliveryReason,
} from './errors.js';
export { DuplicatePackageCopyError } from './package-copies.js';
export { unpinnedReason, type Unpinned } from './images.js';
export {
  VerifierAccess,
  verifierClusterRules,
  verifierReportRules,
  verifierSandboxRules,
  type VerifierAccessProps,
  type VerifierRule,
} from './verifier-access.js';
export { PHASES, phaseIndex, phaseOf, setPhase, type Phase } from './phases.js';
export * from './metadata.js';
export {
  ARGOCD_HOOK,
  ARGOCD_HOOK_DELETE_POLICY,
  descriptorPartCount,
  podTemplateHash,
  VERIFIER_DELIVERIES,
  VerifierJob,
  type VerifierDelivery,
  type VerifierJobProps,
} from './verifier-job.js';
export { DESCRIPTOR_MOUNT, REPORT_CONFIGMAP, REPORT_KEY } from '../model/verifier-job.js';
