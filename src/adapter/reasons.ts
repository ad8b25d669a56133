/**
 * The adapter's reason codes: the stable CamelCase `reason` of every `unsupported` and `rejected` Result, beside its
 * human `message`. Callers branch on these, never on the message. (`failed` Results carry `error.category` instead.)
 */
export const ADAPTER_REASONS = {
  // unsupported
  SandboxApiNotServed: 'the Sandbox API (agents.x-k8s.io) is not served: no Agent Sandbox release is installed',
  ExtensionsApiNotServed: 'extensions.agents.x-k8s.io/v1beta1 is not served: the extensions are not installed',
  ReleaseProvisionsNoClaims: 'the live release is family v0.4: new sessions are not provisioned there',
  NoRuntimeDeclared: "no runtime is declared for the session's template",
  RuntimeExecNotVerified: "runtime-exec is not verified for the session's template",
  TransportCannotCarryGrpc: 'the router transport carries HTTP/1.1 only, not sandboxd gRPC',
  NoExecutionTransport: 'the adapter was built without a runtime transport, so it runs no commands',
  // rejected
  InvalidOperationId: 'the operation id is empty or too long',
  WarmPoolRequired: 'v1beta1 claims name a warm pool: the request names none',
  WarmPoolNotFound: 'the warm pool the request names does not exist',
  WarmPoolServesOtherTemplate: 'the warm pool serves another template than the request names',
  TemplateNotFound: 'the template the request names does not exist',
  TemplateVersionMismatch: "the template's generation is not the one the request expects",
  IntentVersionChanged: 'the object changed since the resourceVersion the caller observed',
  ClaimOwnedElsewhere: 'a claim of that name exists for another operation',
  SessionNotReady: 'the session is not Ready',
  SessionSuspended: 'the session is suspended (spec.operatingMode Suspended): no command is sent',
  SessionTerminating: 'the session is being deleted: no command is sent',
  SessionUnbound: 'the claim is bound to no Sandbox yet: no command is sent',
  SessionEnded: 'the session has Finished or Failed: no command is sent',
  SessionGone: 'the session object no longer exists: no command is sent',
  TemplateUnknown: 'which template the session was made from cannot be told',
  ExecutionIdInUse: 'the execution id is already used for another session',
  ExecutionUnknown: 'no execution of that id in this process (unknown or evicted)',
  EmptyArgv: 'the command is empty',
  InvalidDeadline: 'the deadline is out of range',
  RequestTooLarge: 'the request exceeds the size limit',
  ExceedsLayerLimit:
    "the request's deadline is longer than a layer it crosses allows (router timeout, runtime exec limit): nothing was sent",
  RuntimeTakesCommandOnly: 'the python runtime takes a command only: no per-command environment or working directory',
  TooManyExecutions: 'the execution registry is full: wait for some to finish',
  NoPodIP: 'the sandbox has no pod IP (not Ready): the direct transport needs one',
  StdinUnsupported: 'the runtime takes no standard input (the python runtime): the command was not sent',
  InvalidFilePath:
    'the file path is empty, absolute outside the runtime root, or has characters the runtime cannot carry',
  FileModeUnsupported: 'the runtime sets no file mode (the python runtime): the file was not sent',
} as const;

/** The `reason` of an `unsupported` or `rejected` Result. */
export type AdapterReason = keyof typeof ADAPTER_REASONS;

/**
 * How an execution ended (`ExecutionStatus.outcome.reason`, src/adapter/types.ts): one code per ending, beside the
 * outcome's `kind` and the layer that decided.
 */
export const EXECUTION_REASONS = {
  CommandSucceeded: 'the command ran to its end and exited 0',
  CommandFailed: 'the command ran to its end and exited non-zero (its own exit status)',
  CommandKilledBySignal: 'a signal killed the command (exit code 128 + the signal, e.g. 137 for SIGKILL)',
  CallerDeadlineExceeded: "the caller's deadline passed before the command ended",
  RouterTimeout:
    "the router's timeout passed before the runtime answered (504, or a 502 at the router's response-header timeout)",
  RuntimeExecTimeout: "the runtime's own exec limit stopped the command (python runtime SANDBOX_EXEC_TIMEOUT_SECONDS)",
  RuntimeDecodeFailed:
    "the runtime could not decode the command's output (python runtime: not UTF-8); the command's exit status is unknown",
  RuntimeExecFailed: "the runtime could not run the command (its own failure, not the command's exit status)",
  RuntimeNoExitStatus:
    'the runtime reported no exit status (sandboxd exit code -1: the command was killed by a signal, or the runtime could not wait for it)',
  RuntimeAnswerInvalid: 'the runtime answered something that is not a result (wrong status or shape)',
  RuntimeCallFailed: 'the runtime call failed without a result (gRPC or HTTP error from the runtime)',
  TransportClosed: 'the connection to the runtime closed or could not be opened before an answer',
  ExecTransportClosed:
    'the connection closed after the command was sent and before its exit status: it may have run, its exit code is unknown',
  RuntimeRefused: 'the runtime or router refused the command (bad argument, not found, forbidden, unauthenticated)',
  AnswerTooLarge: "the runtime's answer exceeded the adapter's response limit",
  RuntimeOOMKilled:
    "the node killed the sandbox's container for memory (OOMKilled, exit 137) while the command ran; the call's own error is not the ending",
} as const;

/** The `reason` of an execution's outcome. */
export type ExecutionReason = keyof typeof EXECUTION_REASONS;

/**
 * Why a session is in its phase (`Observation.reason`): one code per rule of kubernetes/phase.ts, beside the
 * observation's `message` (which names the condition, its upstream reason and message, and the object).
 */
export const OBSERVATION_REASONS = {
  ObjectDeleting: "the session's object has a deletionTimestamp: it is being deleted (phase Terminating)",
  ObjectNotFound: "the session's object does not exist (phase Gone)",
  ObjectReplaced: "the session's object was deleted and re-created: its uid is not the session's (phase Gone)",
  PodFinished: 'the Sandbox has Finished=True at its current generation (phase Finished, or Failed for PodFailed)',
  Suspended:
    'the suspension is confirmed: Suspended=True at the current generation (v0.5+), or spec.replicas 0 with no pod IPs left (v0.4)',
  Suspending: 'the spec asks for suspension and the controller has not confirmed it yet (phase Pending)',
  ConditionsStale:
    'the spec asks for suspension and Ready is for an older generation: reconcile pending (phase Unknown)',
  Ready: 'Ready=True at the current generation (phase Ready)',
  NotReady:
    'Ready=False at the current generation: Pending, or Finished/Failed when its upstream reason is terminal (the message names it)',
  ReadyUnknown:
    'the Ready condition is not current or not decisive (older observedGeneration, none, conflicting, Unknown)',
  NoReadyCondition: 'the object has no Ready condition yet (phase Pending)',
  ClaimReferenceMissing:
    "the unbound claim's Ready=False is TemplateNotFound or WarmPoolNotFound: it waits for the reference (phase Pending)",
  ClaimUnbound: 'the claim is bound to no Sandbox yet (phase Pending)',
  BoundSandboxNotFound: 'the Sandbox the claim names in status.sandbox.name does not exist (phase Pending)',
  AdoptionIncomplete: 'the bound Sandbox is Ready but not yet controlled by this claim (phase Pending)',
} as const;

/** The `reason` of an `Observation` (and of the phase judgement it comes from). */
export type ObservationReason = keyof typeof OBSERVATION_REASONS;

/**
 * Where a claim's template hash was read or why it is unknown (`SessionTemplate.reason`), and what the observation
 * concluded about the bound Sandbox's template version (`Observation.templateReason`); prose in the `message` beside.
 */
export const TEMPLATE_REASONS = {
  // SessionTemplate.reason: where the hash came from, or why there is none
  HashFromSandboxLabel: "the bound Sandbox's own sandbox-template-hash label",
  HashFromListedMember: 'the label of the pool member the claim got, listed just before the claim was created',
  HashRecorded: 'a hash kept for the session after an earlier observation',
  HashFromSameBlueprint: 'adoption removed the label; live pool members with the same blueprint carry one hash',
  HashAmbiguous: 'adoption removed the label and pool members of several hashes share its blueprint: not told apart',
  HashUnknown: "adoption removed the label and no live pool member has the bound Sandbox's blueprint",
  ClaimNotReread: 'the claim was not re-read after create: the hash is unknown until observe()',
  ClaimUnbound: 'the claim was not bound yet when read: observe() reports the hash of the Sandbox it gets',
  BoundSandboxUnread: 'the bound Sandbox was not found or could not be read: the hash is unknown',
  // Observation.templateReason: the verdict on the bound Sandbox's template version
  TemplateCurrent: "the bound Sandbox is at the template's current blueprint (equal hashes, or equal blueprints)",
  TemplateStale: "the bound Sandbox's blueprint differs from the template's current one (the message names the fields)",
  TemplateUnread: 'the template could not be read or is not known: staleness is unknown',
} as const;

/** The `reason` of a `SessionTemplate` and the `templateReason` of an `Observation`. */
export type TemplateReason = keyof typeof TEMPLATE_REASONS;

/** Why a capability of a `CapabilityReport` has its support state (`capabilities[].reason`). */
export const CAPABILITY_REASONS = {
  ClusterUnreadable: 'the cluster could not be read (discovery failed): nothing is known',
  GroupNotServed: 'the API group is not served',
  VersionServed: 'the API group serves the version the adapter uses for the live family',
  VersionNotServed: 'the API group is served, but not at the version the adapter uses for the live family',
  FamilyConvertsNothing: 'the live family serves one API version, so there is no conversion',
  CrdUnreadable: 'the Sandbox CRD could not be read: its conversion stanza is unknown',
  ConversionNotWebhook: "the Sandbox CRD's conversion strategy is not Webhook",
  ConversionCaBundleMissing: "the Sandbox CRD's conversion webhook has no caBundle yet",
  ConversionWebhookReady: 'the Sandbox CRD converts through a webhook with a CA bundle',
} as const;

/** The `reason` of one capability in a `CapabilityReport`. */
export type CapabilityReason = keyof typeof CAPABILITY_REASONS;

/** Why the live release family is what it is (`LiveRelease.reason`, kubernetes/release.ts). */
export const RELEASE_REASONS = {
  CoreGroupNotServed: 'agents.x-k8s.io is not served: no Agent Sandbox release is installed',
  FamilyFromServedVersions:
    'the family follows from the versions agents.x-k8s.io serves (the install label agrees or is absent)',
  InstallLabelDisagrees:
    "the install's version label names another family than the served versions: the served versions are trusted",
} as const;

/** The `reason` of a live release reading. */
export type ReleaseReason = keyof typeof RELEASE_REASONS;
