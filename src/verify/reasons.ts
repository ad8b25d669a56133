/**
 * The verifier's reason codes: a stable CamelCase `reason` on every piece of evidence (like a Kubernetes condition
 * reason), beside its human message. Logic and tests match these, never message text. Each code maps to the one line
 * docs/output.md documents it with (a unit test keeps the two in step).
 */

/** Reasons for a failed API call (see `Facts.failedCall`), by the adapter's classified cause. */
export const CALL_REASONS = {
  ApiNotServed: 'the API (CRD or version) the read needs is not served',
  NotFound: 'the object read is not there',
  Forbidden: 'the verifier may not make this read (a 403 proves nothing either way)',
  Unauthenticated: 'the credentials were rejected',
  Conflict: 'the write conflicted with another change',
  Gone: 'the object or watch position is gone',
  Unreachable: 'the API server could not be reached',
  Timeout: 'the API call did not finish within its deadline',
  Invalid: 'the API server rejected the request as invalid',
  TooLarge: 'the request or answer was too large',
  Redirected: 'the server answered a redirect, which the product never follows',
  RuntimeCallFailed: 'a call to the runtime failed',
  InternalError: 'the verifier hit an unexpected condition',
  CallRejected: 'the adapter rejected the call before sending it',
  CallUnsupported: 'the adapter does not offer this call on this release',
} as const;

/** Reasons for a runtime call that got no usable answer (health, Execute, files). */
export const RUNTIME_FAILURE_REASONS = {
  RuntimeTimeout: 'the runtime did not answer within the deadline',
  RuntimeSilent: 'nothing answers at the runtime address (connection refused or reset)',
  RuntimeError: 'the runtime answered with an error',
  RuntimeRedirected: 'the runtime (or router) answered a redirect; not followed, nothing sent to its target',
  RuntimeTransportRefused:
    "the API server refused the verifier's port-forward to the pod (its rights, or the pod): no runtime was reached",
  RuntimePodReplaced:
    'the pod a runtime call was bound to (its UID) was replaced, terminating or gone around the call: the sample is void',
  RuntimeAnswerTooLarge: "the runtime's answer passed the response size cap (too large, not a timeout)",
} as const;

/** Reasons a probe Sandbox (or claim) never became Ready, carried by the workload probe's `verified` evidence. */
export const READINESS_REASONS = {
  ProbeCreateRefused: 'the probe object could not be created',
  ProbeWatchFailed: 'watching the probe object failed',
  ProbeNotReadyInTime: 'the probe Sandbox was not Ready within the ready timeout',
  ProbeInterrupted: 'verification was interrupted before the probe Sandbox was Ready',
  ProbeSandboxEnded: 'the probe Sandbox ended Failed or Finished instead of Ready',
  ProbePodCannotStart:
    "the probe Sandbox's pod got a permanent FailedCreatePodSandBox (the node's runtime lacks the handler): the wait ended there",
  ProbeTemplateUnreadable: 'the SandboxTemplate to build the probe Sandbox from could not be read',
  ClaimReferenceMissing:
    'the probe claim sat past the grace at TemplateNotFound or WarmPoolNotFound; that object is absent',
  ClaimNotReReconciled:
    'the probe claim sat past the grace at TemplateNotFound or WarmPoolNotFound; that object exists',
  ClaimReferenceUnreadable:
    'the probe claim sat past the grace at TemplateNotFound or WarmPoolNotFound; whether that object exists is unknown',
  ClaimNotBound: 'the probe claim bound no Sandbox within the ready timeout',
} as const;

/** Reasons of the probes' own observations. */
export const PROBE_REASONS = {
  // runner, state machine
  NoEvidence: 'no probe collected evidence for the step (the `nextReason` of a capability whose ladder stops there)',
  ProbeNotRun: 'the probe was not run: verification was interrupted',
  UnboundedLifetime:
    'a live claim or Sandbox has no expiry and is older than the threshold (it keeps its pod and token until deleted)',
  ProbeError: 'the probe stopped with an error',
  ProbeTimeout: 'the probe did not finish within its deadline',
  Interrupted: 'verification was interrupted before this check finished',
  NotTested: 'the verifier has no test for this step; `missingTest` names the acceptance test that would prove it',
  // install
  CrdFound: 'the CRD exists',
  CrdNotInstalled: 'the CRD is not installed',
  CrdNotReadable: 'the CRD could not be read, so its conversion cannot be judged',
  VersionsPinned: 'served and storage versions are the pinned ones',
  VersionsDiffer: 'served or storage versions differ from the pinned ones',
  ReleaseLabelDiffers: 'the install label `app.kubernetes.io/version` names another release',
  CrdEstablished: 'the CRD is Established',
  CrdNotEstablished: 'the CRD is not Established yet',
  ConversionStrategyDiffers: 'the CRD conversion strategy is not Webhook',
  ConversionWebhookLeftover: 'the CRD still names a conversion webhook that the release does not ship',
  ReleaseHasNoConversion: 'the release serves one version and has no conversion webhook',
  WebhookConversion: 'the CRD converts through a webhook',
  WebhookServicePinned: 'the conversion webhook is the pinned Service',
  WebhookServiceDiffers: 'the conversion webhook points at another Service',
  WebhookUrl: 'the conversion webhook is a URL (out-of-cluster controller)',
  NoWebhookClientConfig: 'the conversion webhook has no client config',
  CaBundleSet: 'the conversion webhook carries a caBundle',
  NoCaBundle: 'the conversion webhook has no caBundle',
  // controller
  DeploymentFound: 'the controller Deployment exists',
  DeploymentNotFound: 'the controller Deployment does not exist',
  ImagePinned: 'the controller runs the pinned image',
  ImageDiffers: 'the controller runs another image than the pinned one',
  ExtensionsEnabled: 'the controller runs with --extensions',
  ExtensionsDisabled: 'the controller runs without --extensions',
  StaleObservedGeneration: 'the status is for an older generation than the spec',
  ControllerAvailable: 'the controller Deployment is Available at its current generation',
  ControllerNotAvailable: 'the controller Deployment is not Available',
  ServiceAccountFound: "the out-of-cluster controller's ServiceAccount exists",
  ServiceAccountNotFound: "the controller's ServiceAccount does not exist",
  InstallMatchesRelease: "the install's CRDs are the pinned release's (out-of-cluster controller)",
  InstallDiffersFromRelease: "the install's CRDs do not match the pinned release (out-of-cluster controller)",
  TemplatesStamped: 'a declared SandboxTemplate carries the label the extensions controller stamps',
  TemplatesNotStamped: 'no declared SandboxTemplate carries the label the extensions controller stamps yet',
  AccessReviewFailed: 'some rights could not be checked by SubjectAccessReview',
  RightsMissing: 'the controller lacks rights the pinned RBAC grants',
  RightsGranted: 'every right of the pinned RBAC is allowed',
  // template, warm pool, runtime class
  TemplateFound: 'the SandboxTemplate exists',
  TemplateNotFound: 'the SandboxTemplate does not exist',
  SchemaValid: 'the spec validates against the pinned schema',
  SchemaInvalid: 'the spec does not validate against the pinned schema',
  VersionServedSchemaUnchecked: 'served at the pinned version; schema not checked (release files not loaded)',
  NetworkPolicyManagementDiffers: 'networkPolicyManagement differs from the declared one',
  RuntimeClassNameDiffers: 'runtimeClassName differs from the declared one',
  ManagedPolicyMissing: 'a Managed template has no controller NetworkPolicy',
  ManagedPolicyNotOwned: 'the controller NetworkPolicy is not owned by the template',
  ManagedPolicyOwned: 'the controller NetworkPolicy exists, owned by the template',
  UnmanagedPolicyPresent: 'an Unmanaged template still has the controller NetworkPolicy',
  UnmanagedNoControllerPolicy: "an Unmanaged template has no controller policy; the environment's own apply",
  WarmPoolFound: 'the SandboxWarmPool exists',
  WarmPoolNotFound: 'the SandboxWarmPool does not exist',
  PoolTemplateMatches: 'the pool serves the declared template',
  PoolTemplateDiffers: 'the pool serves another template than the declared one',
  PoolRolledOut: 'the pool is ready at the current template',
  RolloutProgressing: 'the pool is still rolling out to the current template',
  StaleAdoption: 'a claim adopted a pool member made from an older template',
  TimeToFirstInstruction: 'time from the claim (or Sandbox) create to the first command answered, warm or cold',
  OutputBinarySafe: 'output bytes that are not UTF-8 came back unchanged',
  OutputNotBinarySafe: 'output bytes that are not UTF-8 did not come back unchanged',
  LargestIntactOutput: 'the largest command output the runtime returned intact, up to the per-stream cap',
  SyncCallLimit: 'the longest synchronous command a transport allows, and the layer that limits it',
  PoolStatusStale: "the pool's status counters disagree with the members the verifier counts",
  PoolObservedGenerationMissing: 'the pool status has no observedGeneration although the release writes one',
  RuntimeClassFound: 'the RuntimeClass exists',
  RuntimeClassNotFound: 'the RuntimeClass does not exist',
  NodesMatchRuntimeClass: 'Ready nodes match the RuntimeClass scheduling',
  NoNodeMatchesRuntimeClass: 'no Ready node matches the RuntimeClass scheduling (`value` lists each node and why)',
  TemplateUsesRuntimeClass: 'a declared template sets this runtimeClassName',
  NoTemplateUsesRuntimeClass: 'no declared template sets this runtimeClassName',
  FailedCreatePodSandBox: 'a pod under the RuntimeClass could not get a sandbox on a node',
  // workload: runtime configuration
  CustomRuntime: 'the template runs a custom runtime the adapter does not speak',
  RuntimeDeclared: 'the runtime the template (or pod) runs is known',
  RuntimeSpoken: 'the runtime is one the adapter speaks',
  RuntimeNotRecognised: 'the pod runs no runtime the adapter recognises',
  TransportCannotCarryRuntime: "the client's transport cannot carry this runtime's protocol",
  TransportReachesRuntime: "the client's transport reaches this runtime",
  FileApiServed: 'the runtime serves a file API',
  FileApiSpoken: 'the runtime file API is a spec the adapter speaks',
  FileApiReachable: 'the file API port is reachable over the transport',
  FileApiNotProbed: "this runtime's file API is not probed by the verifier",
  RuntimeClassUnusable:
    'not tried: the RuntimeClass cannot run a pod, so no probe object was created (`value` is the runtime-class reason)',
  NoClaimsOnRelease: 'the release family provisions no claims through AgentPlane',
  // workload: the probe sandbox and its runtime
  SandboxReady: 'the Sandbox is Ready at its current generation',
  SandboxNotReady: 'the Sandbox is not Ready at its current generation',
  SandboxNotFound: 'the Sandbox does not exist',
  PodNotFound: "the Sandbox's pod does not exist",
  ControllerReconciled: 'the controller reconciled the probe Sandbox to Ready',
  ClaimBoundSandbox: 'the probe claim bound a Sandbox it controls, Ready at its generation',
  RuntimeAnswered: 'the runtime answered every nonce command of the sample',
  RuntimeNotVerified: 'the runtime did not answer every nonce command of the sample correctly',
  NonceEchoed: 'every nonce command of the sample was echoed exactly, in a row',
  NonceMismatch: 'the runtime answered a nonce command wrongly',
  FileRoundTrip: 'a file was written and read back unchanged',
  FileContentDiffers: 'the file read back differs from what was written',
  RouterReachedRuntime:
    "the sandbox's runtime answered every sample through the router, addressed by name as clients do",
  RouterUpstreamNxdomain:
    "through the router failed: the router's upstream DNS lookup found no such host (no per-sandbox Service, no cache entry)",
  RouterUpstreamRefused: "through the router failed: the router's upstream dial was refused",
  RouterUpstreamTimeout: "through the router failed: the router's upstream call timed out",
  RouterUpstream5xx: 'through the router failed: the router answered another 5xx',
  ClientPathAnswered:
    "the declared client's calls answered along its own path (through the router, on its port, with its headers)",
  ClientPathFailed: 'a call of the declared client failed along its own path',
  ClientPathNotObserved: "the declared client dials the pod over a path this run's transport does not take",
  ClientPoolMissing:
    "the declared client claims from a warm pool this template lacks; the probe pool is the verifier's own",
  ConversionRoundTrip: 'a v1alpha1 read of the v1beta1 probe Sandbox succeeded',
  ConversionObjectNotFound: 'the v1alpha1 read found no object',
  ConversionTlsFailure: 'the conversion webhook failed TLS although the CRDs carry a caBundle',
  ConversionReadFailed: 'the v1alpha1 read failed for another cause',
  // isolation
  GvisorKernel: 'a gVisor marker inside the sandbox: its /proc/version build line, its release string or its boot log',
  NotGvisorKernel: 'no gVisor marker inside the sandbox (/proc/version, osrelease, dmesg)',
  KernelDiffersFromNode: "the kernel release inside the sandbox differs from the node's kernelVersion",
  HostKernel: "the RuntimeClass is requested but the workload runs on the host kernel (release equals the node's)",
  KernelIdentityUnknown: "the kernel inside or the node's kernelVersion could not be read",
  RuntimeClassNotApplied: 'the pod does not run under the RuntimeClass',
  RanUnderRuntimeClass: 'the pod ran under the RuntimeClass on a matching node',
  IsolationNotChecked: 'isolation not checked: the runtime did not answer',
  GuestKernelDiffers: "the guest kernel differs from the node's (VM isolation)",
  GuestKernelNotDistinct: "the guest kernel is not seen to differ from the node's",
  NoExtraIsolation: 'the handler claims no extra isolation; the pod ran and its runtime answered',
  // router
  NoRouterDeclared: 'the environment declares no router',
  RouterServiceFound: 'the router Service exists',
  RouterServiceNotFound: 'the router Service does not exist',
  RouterAnswersOutsideCluster: 'no router Service, but a router answers at the URL',
  NoRouterUrl: 'no router URL to call /healthz',
  RouterPodsNotReady: 'the router Service exists but no router pod behind it is ready (`value`: how many, how found)',
  RouterHealthy: 'the router answered /healthz',
  RouterUnhealthy: 'the router did not answer /healthz well',
  RouterAdmittedByPolicies:
    "the live NetworkPolicies selecting a template's pods admit the live router pods (or none restricts their ingress)",
  RouterNotAdmitted:
    "a live NetworkPolicy selecting a template's pods admits none of the live router pods (`value` names the policy)",
  RouterPodsNotFound: 'no live router pods, so policy admission cannot be judged from the cluster',
  RouterAdmissionUnknown:
    'a live policy names a peer the verifier cannot judge (unread namespace label, named port, ipBlock without pod IP)',
  RouterRefusedNegative:
    "a negative probe was refused with a 4xx and the verifier's listener it named saw no connection",
  RouterDialedCanary: "the router connected to the verifier's listener for a request it should refuse",
  RouterAcceptedNegative: 'the router did not refuse a negative probe: it answered 2xx or 5xx (it tried the upstream)',
  RouterNoConnectionUnproven:
    "a negative probe was refused or not sent, but no listener of the verifier's proves no upstream connection was made",
  RouterCanaryReached:
    "a control request naming the verifier's listener in X-Sandbox-Pod-IP was dialled: the router can reach the canary",
  RouterCanaryUnreachable:
    "a control request naming the verifier's listener was not dialled: the router cannot reach it or refuses pod-IP headers from this caller",
  RouterNegativeUnanswered: 'a negative probe got no usable answer (timeout, refused connection, redirect)',
  RouterRequiresCredentials: 'a request without credentials was refused with 401 or 403',
  RouterUnauthenticated:
    "a request without credentials passed the router's authorization (allow-all), and the environment did not acknowledge it",
  RouterUnauthenticatedAcknowledged:
    "a request without credentials passed the router's authorization; the environment acknowledged allow-all",
  RouterAuthorizationUnknown: 'the request without credentials got no answer telling whether the router authenticates',
  // network, lifecycle, snapshot
  NoNamespacesDeclared: 'the environment declares no sandbox namespaces',
  NetworkPoliciesServed: 'NetworkPolicies are served',
  DeclaredPolicyNotFound: 'a declared NetworkPolicy does not exist',
  DeclaredPoliciesFound: 'every declared NetworkPolicy exists',
  PolicyCoverageGap: 'a sandbox pod is not covered as declared (unselected, or undeclared egress)',
  PodCovered: 'a sandbox pod is selected by policies and has no undeclared egress',
  NoPodToJudge: 'no running sandbox pod to judge policy coverage by',
  EnforcementObserved:
    'a peer the policies deny was refused (or timed out) on a port that answered from its own pod, every sample',
  PolicyNotEnforced:
    'policy present but not enforced: a sandbox connected to another although the policies deny that connection',
  EarlyConnectionSurvived:
    'a connection a fresh sandbox opened before enforcement, which the policies deny, still answered afterwards',
  UndeclaredEgressConnected: 'a sandbox connected to a destination its egress policies do not declare',
  EnforcementNotTestable: 'no enforcement test could be made (a tool, a second sandbox or a pod network is missing)',
  EnforcementUnclear: 'a dial gave no clear outcome, or the listening control did not answer',
  DnsAnswered:
    'a lookup of kubernetes.default.svc from inside a sandbox answered within 2 s via its resolv.conf nameserver, and another port there did not connect',
  DnsNotAnswered:
    'declared DNS egress, but a lookup from inside a sandbox got no answer within 2 s (no cluster DNS, or blocked); names the nameserver and the policy',
  DnsNameserverNotAdmitted:
    "the sandbox's resolv.conf nameserver is none of the DNS targets its policy admits, and the lookup failed",
  DnsOtherPortConnected:
    "another port than 53 on the sandbox's nameserver connected: the policies open the whole address",
  DnsNotTestable: 'no nameserver in the sandbox resolv.conf, or no lookup/dial tool in the image: DNS not tested',
  SandboxApiServed: 'the Sandbox API is served',
  SandboxApiNotServed: 'the Sandbox API is not served',
  SuspendSupported: 'the release has a suspend field',
  ControllerConfigured: 'the controller is configured',
  ControllerNotConfigured: 'the controller is not configured',
  SuspendNotTried: 'no suspend/resume round trip: the probe sandbox was not Ready with a proven runtime',
  SuspendObserved:
    'the probe Sandbox was seen suspended at its current generation (v0.5 Suspended=True; v0.4 replicas 0 reconciled) with its pod gone',
  SuspendNotObserved:
    'the probe Sandbox was not seen suspended with its pod gone within the ready timeout (`value` is what was seen)',
  ResumeObserved: 'the probe Sandbox was Ready again at its current generation with a new pod UID',
  ResumeNotObserved:
    'the probe Sandbox was not seen Ready at its current generation with a new Ready pod within the ready timeout',
  PodSimulated:
    'the resumed pod is on a node with no container runtime (kwok simulates pod status): nothing was stopped or started',
  ResumeSamePod:
    'after resume the Sandbox is Ready on the pod it had before suspension: no pod was stopped and started',
  WorkspaceKept:
    "the nonce file written before suspension is there after resume, on a volumeClaimTemplate's PVC the release keeps",
  WorkspaceLost:
    "the runtime root is on a volumeClaimTemplate's PVC the release keeps, but the nonce file is gone or changed after resume",
  WorkspaceNotKept:
    'the runtime root is on no volume the release keeps (emptyDir or container filesystem): nothing is promised; `value` says whether the nonce file was there',
  WorkspaceUnchecked: 'the nonce file could not be written before suspension, so the workspace was not checked',
  NoSnapshotApi: 'no snapshot API on this cluster',
  SnapshotApiServed: 'the GKE Pod Snapshot API is served',
  // image digests
  ImageDigestPinned: 'every started container runs the pinned digest',
  ImageDigestDiffers: 'a container runs another digest than the pinned one (image skew)',
  ImageReferenceDiffers: 'a container runs another repository or tag than the pinned one (image skew)',
  PinnedByTagOnly: 'the image is pinned by tag only, so skew cannot be detected',
  NoImageId: 'containers report no imageID',
  LocalImageId: 'containers report a local image id, not a registry digest',
} as const;

/** Every code, with its meaning. */
export const EVIDENCE_REASONS = {
  ...CALL_REASONS,
  ...RUNTIME_FAILURE_REASONS,
  ...READINESS_REASONS,
  ...PROBE_REASONS,
} as const;

export type CallReason = keyof typeof CALL_REASONS;
export type RuntimeFailureReason = keyof typeof RUNTIME_FAILURE_REASONS;
export type ReadinessReason = keyof typeof READINESS_REASONS;
/** The `reason` of one piece of evidence. */
export type EvidenceReason = keyof typeof EVIDENCE_REASONS;
