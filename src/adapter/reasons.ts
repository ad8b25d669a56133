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
  RuntimeTakesCommandOnly: 'the python runtime takes a command only: no per-command environment or working directory',
  TooManyExecutions: 'the execution registry is full: wait for some to finish',
  NoPodIP: 'the sandbox has no pod IP (not Ready): the direct transport needs one',
} as const;

/** The `reason` of an `unsupported` or `rejected` Result. */
export type AdapterReason = keyof typeof ADAPTER_REASONS;
