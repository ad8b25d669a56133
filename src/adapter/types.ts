/**
 * The capability adapter's vocabulary (docs/architecture.md, "The capability adapter"). Every operation returns a {@link Result}: expected outcomes
 * are values, not exceptions, and no upstream object shape escapes this layer.
 */
import type { AdapterReason, CapabilityReason, ExecutionReason, ObservationReason, TemplateReason } from './reasons.js';

import type { CapabilityName } from '../model/capabilities.js';
import type { SupportState } from '../model/states.js';

export type { CapabilityName, SupportState };

/** Why an operation did not succeed, in a form a caller can branch on: `reason` is a stable code (reasons.ts), `message` the prose. */
export type Result<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | {
      readonly kind: 'unsupported';
      readonly capability: CapabilityName;
      readonly state: SupportState;
      readonly reason: AdapterReason;
      readonly message: string;
    }
  | {
      readonly kind: 'rejected';
      readonly reason: AdapterReason;
      readonly message: string;
      /** For `ExceedsLayerLimit`: the layer whose limit the request's deadline passes, and its value. */
      readonly limit?: LayerLimit;
    }
  | { readonly kind: 'failed'; readonly error: AdapterError };

/** One classified failure (see kubernetes/errors.ts for the classifier). Never carries a credential. */
export interface AdapterError {
  readonly category:
    | 'not-found'
    | 'forbidden'
    | 'unauthenticated'
    | 'conflict'
    | 'gone'
    | 'unreachable'
    | 'timeout'
    | 'invalid'
    | 'too-large'
    | 'redirect'
    | 'runtime'
    | 'internal';
  readonly message: string;
  /** HTTP status or gRPC code when there was one. */
  readonly code?: number;
  /** The Kubernetes Status `reason` the server sent, copied as is: an upstream code, not one of AgentPlane's. */
  readonly reason?: string;
  /** What to do about it, in plain words. */
  readonly hint?: string;
  /** For `not-found`: whether the API itself is missing (CRD not installed / version not served) or just the object. */
  readonly missing?: 'api' | 'object';
  /** A TLS or certificate failure: of the connection to the API server, or of a webhook the server called. */
  readonly tls?: true;
  /** For an HTTP answer the call refused: its status and the start of its body (an intermediary's own words). */
  readonly http?: HttpRefusal;
  /** For an API server call it answered with an error: what was asked and by whom (never a credential). */
  readonly request?: KubeRequest;
  /** For a connection that failed: the network error code, e.g. `ECONNREFUSED`. */
  readonly errno?: string;
  /** For `too-large`: the request's size and the limit it passed (nothing was sent). */
  readonly size?: { readonly bytes: number; readonly limitBytes: number };
  /** For a `timeout`: the deadline that passed, in milliseconds. */
  readonly deadlineMs?: number;
  /** For credentials an exec plugin could not give: the plugin's command. */
  readonly credentialPlugin?: string;
  /**
   * For a runtime call that ended an execution: the execution reason and the layer that decided, when the failure says
   * more than its category (e.g. the python runtime's own exec timeout or decode failure, a router timeout).
   */
  readonly decided?: { readonly reason: ExecutionReason; readonly layer: ExecutionLayer };
}

/** An API server request as an {@link AdapterError} names it. */
export interface KubeRequest {
  /** Kubernetes verb, e.g. `list`; `access` when the caller did not say. */
  readonly verb: string;
  /** `plural.group` (or `plural` for core), e.g. `sandboxes.agents.x-k8s.io`. */
  readonly resource: string;
  /** Kubeconfig user name (the entry's name). */
  readonly user: string;
  /** Kubeconfig context name. */
  readonly context: string;
  /** The object's name, when the server named one (404 on a named object). */
  readonly name?: string;
  /** The Content-Type the request carried (415/422 on patches). */
  readonly contentType?: string;
  /** The API server's own Status message (its words), when it sent one. */
  readonly serverMessage?: string;
}

/** An HTTP answer a runtime call refused: its status code and the start of its body. */
export interface HttpRefusal {
  /** The HTTP status code. */
  readonly code: number;
  /** The body's first 200 characters (`HTTP_BODY_CHARS`). */
  readonly body: string;
}

/** How much of a refused answer's body is kept (and quoted in messages). */
export const HTTP_BODY_CHARS = 200;

/** A session: the Kubernetes object the adapter created for one operation id, plus the release family that serves it. */
export interface SessionRef {
  readonly namespace: string;
  /** Name of the SandboxClaim (v0.5) or Sandbox. */
  readonly name: string;
  readonly via: 'claim' | 'sandbox';
  readonly operationId: string;
  readonly uid: string;
  /** For claims: the template the session was requested from, and what is known of the version it got (case recreate-adopts-stale-template). */
  readonly template?: SessionTemplate;
}

/**
 * The template a claim was created against. `hash` is the blueprint hash (`agents.x-k8s.io/sandbox-template-hash`,
 * `extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`) of the Sandbox the claim is bound to, when it was
 * already bound at the one read after create (a warm adoption is often that quick, never waited for); else absent and
 * `reason` says why (`message` in words). `observe` reports the hash later (Observation.templateHash).
 */
export interface SessionTemplate {
  /** SandboxTemplate name. */
  readonly name: string;
  /** The template's `metadata.generation` when the claim was created (annotation `agentplane.dev/template-generation`); absent when not recorded. */
  readonly generation?: number;
  readonly hash?: string;
  /** Where `hash` was read, or why it is absent (src/adapter/reasons.ts, `TEMPLATE_REASONS`). */
  readonly reason: TemplateReason;
  /** The same in words, naming the objects read. */
  readonly message: string;
}

/** Phase derived from spec plus conditions at the current observedGeneration only. */
export type SessionPhase =
  'Pending' | 'Ready' | 'Suspended' | 'Finished' | 'Failed' | 'Terminating' | 'Gone' | 'Unknown';

export interface Observation {
  readonly ref: SessionRef;
  readonly phase: SessionPhase;
  /** Why this phase, as a code (src/adapter/reasons.ts, `OBSERVATION_REASONS`). */
  readonly reason: ObservationReason;
  /** The same in words: the deciding condition with its upstream reason and message, or why it was not trusted. */
  readonly message: string;
  /** metadata.generation of the session's object (the claim, for claims). */
  readonly generation: number;
  /** observedGeneration of the condition that decided the phase; for a claim, the bound Sandbox's condition (judged against the Sandbox's generation). */
  readonly observedGeneration?: number;
  /** Bound Sandbox name (claims) and its pod IPs when Ready. */
  readonly sandboxName?: string;
  /** Backing Pod of the Sandbox (annotation `agents.x-k8s.io/pod-name`, else the Sandbox name). */
  readonly podName?: string;
  /** SandboxTemplate the Sandbox was made from (annotation `agents.x-k8s.io/sandbox-template-ref`), when set. */
  readonly template?: string;
  readonly podIPs: readonly string[];
  readonly resourceVersion: string;
  /**
   * Claims bound to an existing Sandbox (case recreate-adopts-stale-template): the blueprint hash the bound Sandbox was
   * made from. Adoption removes the label, so it comes, in this order, from the Sandbox's own label, the pool members'
   * labels the adapter stored on the claim at create (annotation `agentplane.dev/pool-template-hashes`),
   * `ref.template.hash`, or a live pool member with the same blueprint; absent when none of those tells it (see
   * `templateReason`). Source: kubernetes/template-hash.ts.
   */
  readonly templateHash?: string;
  /** The hash the pool's members at the template's current blueprint carry; absent when not determinable (see `templateReason`). */
  readonly currentTemplateHash?: string;
  /** Whether the bound Sandbox is behind the template's current blueprint (controller semantics); absent when it cannot be told. */
  readonly staleTemplate?: boolean;
  /** For claims: the verdict on the three fields above, as a code (`TEMPLATE_REASONS`: current, stale, unread, or why the claim has none). */
  readonly templateReason?: TemplateReason;
  /** For claims: how the three fields above were determined, each unknown with its reason, and the differences when stale. */
  readonly templateMessage?: string;
}

export interface Termination {
  readonly ref: SessionRef;
  /** `deleted` when this call deleted it, `already-gone` when it was not there (idempotent). */
  readonly outcome: 'deleted' | 'already-gone';
}

/** Where a runtime server is reached. */
export type TransportKind = 'router' | 'port-forward' | 'direct';

/** A request to run one command (argv, no shell) in a session's runtime. Limits are checked before anything is sent. */
export interface ExecutionRequest {
  readonly session: SessionRef;
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Deadline for the whole call, milliseconds. */
  readonly timeoutMs: number;
  /**
   * Bytes fed to the command's standard input, then end-of-file (sandboxd `WriteStdin`, its `eof` half-closes stdin while
   * output still streams). The python runtime takes no stdin: `rejected`, `StdinUnsupported`.
   * @default - none: stdin is closed at once, so a command that reads it sees end-of-file, never waits
   */
  readonly stdin?: Uint8Array;
}

/**
 * What a file upload carries: bytes (sent in parts with a Content-Length), or an async iterable of parts (e.g. a
 * `fs.createReadStream`) sent as it is read, its size counted against the limit while sending.
 */
export type FileContent = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * A file to write into a session's runtime through the runtime's file API (never a command's argv). `path` is relative
 * to the runtime's root (sandboxd `--root-dir`; the python runtime's `/app`, or `SANDBOX_BASE_DIR` from v1.0.3).
 */
export interface FileUploadRequest {
  readonly session: SessionRef;
  readonly path: string;
  readonly content: FileContent;
  /**
   * Octal permission bits, e.g. `0755`; sandboxd only (the python runtime sets none: `rejected`, `FileModeUnsupported`).
   * @default - the runtime's default (sandboxd `0644`)
   */
  readonly mode?: string;
  /** Deadline for the whole transfer, milliseconds. */
  readonly timeoutMs: number;
}

/** A file to read from a session's runtime (path relative to the runtime's root, as for {@link FileUploadRequest}). */
export interface FileDownloadRequest {
  readonly session: SessionRef;
  readonly path: string;
  /** Deadline for the whole transfer, milliseconds. */
  readonly timeoutMs: number;
}

/** A finished transfer: which runtime call moved how many bytes, and how long it took. */
export interface FileTransfer {
  readonly path: string;
  /** Bytes of file content moved. */
  readonly bytes: number;
  readonly durationMs: number;
  /** The runtime call used, e.g. `sandboxd PUT /v1/files` or `python-runtime POST /upload`. */
  readonly api: string;
}

/** A downloaded file: the transfer and the file's bytes. */
export interface FileDownload extends FileTransfer {
  readonly content: Buffer;
}

export interface ExecutionRef {
  readonly executionId: string;
  readonly session: SessionRef;
}

export interface ExecutionStatus {
  readonly executionId: string;
  /**
   * Coarse state, kept for existing callers; derived from `outcome`: `succeeded` is a completed exit 0, `timed-out` a
   * `timed-out` outcome, every other ending `failed`. Branch on `outcome` to tell a non-zero exit from a runtime error.
   */
  readonly state: 'running' | 'succeeded' | 'failed' | 'timed-out';
  /** Set only for a `completed` outcome (the command's own exit status); never the runtime's. */
  readonly exitCode?: number;
  /** The command's output as text (`output.stdout.text`). For an ending other than `completed`, stderr also carries the outcome's message. */
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  /** How the call ended; absent while `running`. */
  readonly outcome?: ExecutionOutcome;
  /** The command's output as bytes with its limits: what was kept, how much there was, how it was decoded. */
  readonly output?: { readonly stdout: StreamOutput; readonly stderr: StreamOutput };
}

/** Which layer decided how an execution ended. */
export type ExecutionLayer = 'command' | 'caller' | 'adapter' | 'transport' | 'router' | 'runtime' | 'node';

/**
 * How an execution ended: exactly one kind, with its stable reason code (src/adapter/reasons.ts, `EXECUTION_REASONS`)
 * and the layer that decided. `message` is prose; branch on `kind`, `reason`, `by`.
 */
export type ExecutionOutcome =
  | {
      readonly kind: 'completed';
      /** The command's exit status (128 + `signal` when a signal killed it); `success` is `exitCode === 0`. */
      readonly exitCode: number;
      readonly success: boolean;
      /** The signal that killed the command, when the runtime reports one (the python runtime does). */
      readonly signal?: number;
      readonly reason: 'CommandSucceeded' | 'CommandFailed' | 'CommandKilledBySignal';
      readonly layer: 'command';
      readonly message: string;
    }
  | {
      readonly kind: 'timed-out';
      /** Whose deadline passed: the caller's (the adapter's own deadline), the router's, or the runtime's exec limit. */
      readonly by: 'caller' | 'router' | 'runtime';
      readonly reason: 'CallerDeadlineExceeded' | 'RouterTimeout' | 'RuntimeExecTimeout';
      readonly layer: 'caller' | 'router' | 'runtime';
      /** The deadline that passed, ms, when known. */
      readonly deadlineMs?: number;
      /**
       * Whether the command may still be running in the sandbox: false when the runtime stopped it (its own limit), the
       * adapter stopped its process group (sandboxd), or the command ran under the runtime's `timeout`, which stopped
       * its group before the deadline (python runtime); true when only the call gave up (router timeout, no answer by
       * the deadline, or a python runtime image without GNU `timeout`).
       */
      readonly commandMayStillRun: boolean;
      readonly message: string;
    }
  | {
      readonly kind: 'runtime-error';
      readonly reason:
        | 'RuntimeDecodeFailed'
        | 'RuntimeExecFailed'
        | 'RuntimeNoExitStatus'
        | 'RuntimeAnswerInvalid'
        | 'RuntimeCallFailed';
      readonly layer: 'runtime' | 'router';
      /** HTTP status or gRPC code, when there was one. */
      readonly code?: number;
      readonly message: string;
    }
  | {
      readonly kind: 'transport-closed';
      /** `ExecTransportClosed` once the command was sent (it may have run), `TransportClosed` before. */
      readonly reason: 'TransportClosed' | 'ExecTransportClosed';
      readonly layer: 'transport';
      /** The network error code, when known. */
      readonly errno?: string;
      readonly message: string;
    }
  | {
      readonly kind: 'refused';
      readonly reason: 'RuntimeRefused';
      readonly layer: 'runtime' | 'router' | 'adapter';
      readonly code?: number;
      readonly message: string;
    }
  | {
      /**
       * The node killed the sandbox's container for memory (the kubelet's `OOMKilled`, read from the pod the call went
       * to, bound to its UID, ended after the call started): whatever the connection said, this is the ending.
       */
      readonly kind: 'oom-killed';
      readonly reason: 'RuntimeOOMKilled';
      readonly layer: 'node';
      /** The container's exit code as the kubelet reports it (137: SIGKILL). */
      readonly exitCode: number;
      /** The container the kubelet reports OOMKilled. */
      readonly container: string;
      readonly podUid: string;
      /** The container's `resources.limits.memory` in bytes, when it has one. */
      readonly memoryLimitBytes?: number;
      readonly message: string;
    }
  | {
      readonly kind: 'too-large';
      readonly reason: 'AnswerTooLarge';
      readonly layer: 'adapter' | 'runtime';
      /** The limit the answer passed, bytes. */
      readonly limitBytes?: number;
      readonly message: string;
    };

/** Every outcome reason is a catalogued execution reason (compile-time check). */
export type OutcomeReasonsCatalogued = ExecutionOutcome['reason'] extends ExecutionReason ? true : never;

/** One output stream of a command: bytes (base64, JSON-safe), and the text decoded from them. */
export interface StreamOutput {
  /** The bytes kept (at most the per-stream cap), base64. */
  readonly base64: string;
  /** How many bytes were kept. */
  readonly bytes: number;
  /** How many bytes the command wrote, when the runtime tells (else the bytes seen); more than `bytes` when `truncated`. */
  readonly totalBytes: number;
  /** Whether bytes were dropped at the per-stream cap. */
  readonly truncated: boolean;
  /** The kept bytes decoded as `encoding`. */
  readonly text: string;
  readonly encoding: 'utf-8';
  /** Whether decoding replaced bytes that were not valid `encoding` (the text is not the bytes). */
  readonly lossy: boolean;
}

/** One layer's limit on a synchronous call. */
export interface LayerLimit {
  readonly layer: 'router' | 'runtime' | 'adapter';
  /** Which setting: the router's two timeouts, the runtime's exec limit, the adapter's longest deadline. */
  readonly setting:
    'router-response-header-timeout' | 'router-proxy-timeout' | 'runtime-exec-timeout' | 'adapter-max-deadline';
  readonly limitMs: number;
  /**
   * Where the value comes from: a flag or variable of the deployed router, the pinned release's default, the runtime
   * spec the caller gave, or the adapter itself.
   */
  readonly source: 'deployment-flag' | 'deployment-env' | 'release-default' | 'runtime-spec' | 'adapter';
  /** The layer and value in words, e.g. `router response-header timeout 30s`. */
  readonly label: string;
}

/** The limits a synchronous call of one runtime over one transport meets, and the smallest of them. */
export interface SyncCallLimits {
  readonly transport: TransportKind;
  readonly runtime: 'sandboxd' | 'python-runtime';
  /**
   * The runtime answers as the command runs (sandboxd `Start`, a gRPC stream): no header wait applies, and only the
   * adapter's deadline bounds the call.
   */
  readonly streaming: boolean;
  /** Every layer's limit, smallest first. */
  readonly layers: readonly LayerLimit[];
  /** The smallest: the longest deadline a call may have. */
  readonly effective: LayerLimit;
}

/** What the adapter knows about a cluster's capabilities, as support states with reasons. */
export interface CapabilityReport {
  readonly cluster: string;
  readonly capabilities: ReadonlyArray<{
    readonly name: CapabilityName;
    readonly state: SupportState;
    /** Why this state (src/adapter/reasons.ts, `CAPABILITY_REASONS`). */
    readonly reason: CapabilityReason;
    /** The same in words, naming the group, versions or CRD read. */
    readonly message: string;
  }>;
  /**
   * The longest synchronous command per runtime over the adapter's transport, with every layer's limit (case
   * router-timeout-layers); absent when the adapter runs no commands.
   */
  readonly executionLimits?: readonly SyncCallLimits[];
}

/** The narrow interface the product uses (docs/architecture.md, "The capability adapter"). */
export interface CapabilityAdapter {
  createFromTemplate(
    scope: { namespace: string; template: string; warmPool?: string },
    templateVersion: string,
    operationId: string,
  ): Promise<Result<SessionRef>>;
  observe(ref: SessionRef): Promise<Result<Observation>>;
  terminate(ref: SessionRef, intentVersion: string): Promise<Result<Termination>>;
  capabilities(clusterIdentity: string): Promise<CapabilityReport>;
  startExecution(executionId: string, request: ExecutionRequest): Promise<Result<ExecutionRef>>;
  queryExecution(executionId: string): Promise<Result<ExecutionStatus>>;
  /** Writes a file through the runtime's file API, streamed and capped; over the cap: `failed`, category `too-large`. */
  uploadFile(request: FileUploadRequest): Promise<Result<FileTransfer>>;
  /** Reads a file through the runtime's file API, streamed and capped; over the cap: `failed`, category `too-large`. */
  downloadFile(request: FileDownloadRequest): Promise<Result<FileDownload>>;
}
