/**
 * `startExecution` / `queryExecution`: runs a command in a session's runtime only when `runtime-exec` is `verified` for the
 * session's template (the support state comes from the caller, normally the verifier's last report). A missing capability
 * is `unsupported`; there is no fallback to `pods/exec` or any broader identity (docs/architecture.md, "The capability adapter").
 */
import type {
  CapabilityName,
  FileContent,
  FileDownload,
  FileDownloadRequest,
  FileTransfer,
  FileUploadRequest,
  ExecutionRef,
  ExecutionOutcome,
  ExecutionRequest,
  ExecutionStatus,
  Result,
  SupportState,
} from '../types.js';
import { RouterTransport } from '../transports/router.js';
import type { RuntimeTarget, Transport } from '../transports/types.js';
import { checkDeadline, checkRequestSize, DEFAULT_LIMITS, type CallLimits } from './limits.js';
import { checkFilePath, DEFAULT_MAX_FILE_BYTES, fileTooLarge } from './files.js';
import { PYTHON_RUNTIME_PORT, PythonRuntimeClient, PythonRuntimeFiles } from './python-runtime.js';
import { exceededLayer, syncCallLimits, type RouterLimits, type SyncCallLimits } from './layer-limits.js';
import { ExecutionRegistry, type ExecutionEntry } from './registry.js';
import { SandboxdClient } from './sandboxd.js';
import { streamOutput, type ProcessResult } from './process.js';
import { awaitOomKill, mayHideOomKill, podNameOf, type PodRead } from './pod-fate.js';

/** Which runtime server a template's pods run, and on which ports. */
export type RuntimeSpec =
  | { readonly kind: 'sandboxd'; readonly restPort?: number; readonly grpcPort?: number }
  | {
      readonly kind: 'python-runtime';
      readonly port?: number;
      /** The runtime's exec limit, ms (its `SANDBOX_EXEC_TIMEOUT_SECONDS`); absent = the release's default (300 s from v0.5.6). */
      readonly execLimitMs?: number;
    };

/** The support state of `capability` for a template (`template/<ns>/<name>`), or undefined when never assessed. */
export type SupportLookup = (
  capability: CapabilityName,
  template: `template/${string}/${string}`,
) => SupportState | undefined;

/** Where a session runs: its template, runtime and pod. Resolved by the caller (the adapter observes the session). */
export interface RuntimeBinding {
  readonly template: `template/${string}/${string}`;
  readonly runtime: RuntimeSpec;
  readonly target: RuntimeTarget;
}

export interface ExecutionsOptions {
  readonly transport: Transport;
  readonly supportStates: SupportLookup;
  readonly limits?: Partial<CallLimits>;
  readonly capacity?: number;
  /** Largest file one upload or download moves, bytes; default {@link DEFAULT_MAX_FILE_BYTES} (64 MiB). */
  readonly maxFileBytes?: number;
  /**
   * Reads the session's pod: a call that lost its runtime is checked against the pod's container statuses, so a
   * container the node killed for memory ends as `oom-killed` (pod-fate.ts). Without it such calls keep their
   * connection or runtime error.
   */
  readonly pods?: PodRead;
  /** The pinned release, whose router and runtime defaults apply where nothing else says. Default {@link DEFAULT_LIMIT_RELEASE}. */
  readonly release?: string;
  /**
   * The router's limits (the adapter reads them from the router's Deployment); asked only over the router transport.
   * Default: the RouterTransport's own limits.
   */
  readonly routerLimits?: () => Promise<RouterLimits | undefined>;
}

/** The release whose defaults apply when the caller names none: the default pinned release. */
export const DEFAULT_LIMIT_RELEASE = 'v1.0.3';

export class Executions {
  private readonly registry: ExecutionRegistry;
  private readonly limits: CallLimits;
  private readonly maxFileBytes: number;

  constructor(private readonly options: ExecutionsOptions) {
    this.registry = new ExecutionRegistry(options.capacity);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /** `unsupported` unless `runtime-exec` is verified for the binding's template. */
  private gate(binding: RuntimeBinding): Result<never> | undefined {
    const state = this.options.supportStates('runtime-exec', binding.template);
    if (state === 'verified') return undefined;
    return {
      kind: 'unsupported',
      capability: 'runtime-exec',
      state: state ?? 'absent',
      reason: 'RuntimeExecNotVerified',
      message: `runtime-exec is ${state ?? 'not assessed'} for ${binding.template}, not verified: run agentplane verify until the runtime answered a probe over the ${this.options.transport.kind} transport`,
    };
  }

  /** The gate, the path and the deadline of a file transfer, checked before anything is sent. */
  private checkTransfer(path: string, timeoutMs: number, binding: RuntimeBinding): Result<never> | undefined {
    const gate = this.gate(binding);
    if (gate) return gate;
    const badPath = checkFilePath(path);
    if (badPath)
      return { kind: 'rejected', reason: 'InvalidFilePath', message: `file path ${JSON.stringify(path)}: ${badPath}` };
    const badDeadline = checkDeadline(timeoutMs);
    if (badDeadline) return { kind: 'rejected', reason: 'InvalidDeadline', message: badDeadline.message };
    return undefined;
  }

  private sandboxd(runtime: RuntimeSpec & { kind: 'sandboxd' }, target: RuntimeTarget): SandboxdClient {
    return new SandboxdClient(this.options.transport, target, {
      ports: {
        ...(runtime.restPort ? { rest: runtime.restPort } : {}),
        ...(runtime.grpcPort ? { grpc: runtime.grpcPort } : {}),
      },
      limits: this.limits,
    });
  }

  private pythonFiles(binding: RuntimeBinding): PythonRuntimeFiles {
    const port = binding.runtime.kind === 'python-runtime' ? binding.runtime.port : undefined;
    return new PythonRuntimeFiles(this.options.transport, binding.target, port ?? PYTHON_RUNTIME_PORT, this.limits);
  }

  /**
   * Checks the request (gate, deadline, size) before anything is sent, then starts it. A repeated `executionId` for the same
   * session returns the existing execution (idempotent); for another session it is `rejected`.
   */
  async start(executionId: string, request: ExecutionRequest, binding: RuntimeBinding): Promise<Result<ExecutionRef>> {
    const known = this.registry.get(executionId);
    if (known) {
      if (known.ref.session.uid === request.session.uid && known.ref.session.name === request.session.name)
        return { kind: 'ok', value: known.ref };
      return {
        kind: 'rejected',
        reason: 'ExecutionIdInUse',
        message: `execution id ${executionId} is already used for session ${known.ref.session.namespace}/${known.ref.session.name}`,
      };
    }
    const gate = this.gate(binding);
    if (gate) return gate;
    if (request.argv.length === 0) return { kind: 'rejected', reason: 'EmptyArgv', message: 'argv is empty' };
    const badDeadline = checkDeadline(request.timeoutMs);
    if (badDeadline) return { kind: 'rejected', reason: 'InvalidDeadline', message: badDeadline.message };
    const size = Buffer.byteLength(
      JSON.stringify({ argv: request.argv, env: request.env ?? {}, cwd: request.cwd ?? '' }),
    );
    const tooBig = checkRequestSize(`execution ${executionId}`, size, this.limits);
    if (tooBig) return { kind: 'rejected', reason: 'RequestTooLarge', message: tooBig.message };
    // stdin is streamed in parts like an upload, so the file cap bounds it, not the one-message request limit.
    const stdinBytes = request.stdin?.byteLength ?? 0;
    if (stdinBytes > this.maxFileBytes)
      return {
        kind: 'rejected',
        reason: 'RequestTooLarge',
        message: fileTooLarge(`execution ${executionId} stdin`, stdinBytes, this.maxFileBytes).message,
      };
    const layers = await this.limitsFor(binding.runtime);
    const exceeded = exceededLayer(request.timeoutMs, layers);
    if (exceeded)
      return {
        kind: 'rejected',
        reason: 'ExceedsLayerLimit',
        message: `execution ${executionId}: the deadline of ${request.timeoutMs} ms is longer than the ${exceeded.label} (${exceeded.source}) on the ${layers.transport} transport: nothing was sent`,
        limit: exceeded,
      };
    if (
      binding.runtime.kind === 'python-runtime' &&
      ((request.env && Object.keys(request.env).length) || request.cwd)
    ) {
      return {
        kind: 'rejected',
        reason: 'RuntimeTakesCommandOnly',
        message: 'the python runtime /execute takes only a command: no per-command environment or working directory',
      };
    }
    if (binding.runtime.kind === 'python-runtime' && request.stdin)
      return {
        kind: 'rejected',
        reason: 'StdinUnsupported',
        message: 'the python runtime /execute takes no stdin: write the input as a file with uploadFile first',
      };

    if (!this.registry.hasRoom())
      return {
        kind: 'rejected',
        reason: 'TooManyExecutions',
        message: `${this.registry.capacity} executions are running: wait for some to finish`,
      };

    const ref: ExecutionRef = { executionId, session: request.session };
    const startedAt = Date.now();
    // The pod's UID as the call starts, read beside it: a later OOM kill counts only for this pod.
    const pods = this.options.pods;
    const podUid = pods
      ? pods(binding.target.namespace, podNameOf(binding.target)).then(
          (p) => p?.meta.uid,
          () => undefined,
        )
      : undefined;
    const opts = {
      ...(request.env ? { env: request.env } : {}),
      ...(request.cwd ? { cwd: request.cwd } : {}),
      ...(request.stdin ? { stdin: request.stdin } : {}),
      deadlineMs: request.timeoutMs,
    };
    let live = (): LiveOutput => ({ stdout: '', stderr: '' });
    let done: Promise<Result<ProcessResult>>;
    let close = (): void => {};
    if (binding.runtime.kind === 'sandboxd') {
      const client = this.sandboxd(binding.runtime, binding.target);
      const started = await client.start(request.argv, opts);
      if (started.kind !== 'ok') {
        client.close();
        return started;
      }
      live = () => started.value.snapshot();
      done = started.value.done;
      close = () => {
        // Stops the process group if it still runs (a no-op once done), then closes the channel.
        void started.value.cancel().finally(() => client.close());
      };
    } else {
      const client = new PythonRuntimeClient(this.options.transport, binding.target, {
        ...(binding.runtime.port ? { port: binding.runtime.port } : {}),
        limits: this.limits,
      });
      done = client.execute(request.argv, { deadlineMs: request.timeoutMs });
    }
    const entry: ExecutionEntry = { ref, startedAt, live };
    if (!this.registry.add(entry)) {
      close();
      return {
        kind: 'rejected',
        reason: 'TooManyExecutions',
        message: `${this.registry.capacity} executions are running: wait for some to finish`,
      };
    }
    void done.then(async (r) => {
      const partial = live();
      close();
      const endedMs = Date.now() - startedAt;
      let outcome = outcomeOf(r, this.options.transport.kind);
      const uid = pods && podUid && mayHideOomKill(outcome) ? await podUid : undefined;
      if (pods && uid) outcome = (await awaitOomKill(pods, binding.target, uid, startedAt)) ?? outcome;
      entry.final = toStatus(executionId, r, endedMs, partial, outcome);
    });
    return { kind: 'ok', value: ref };
  }

  /**
   * Writes a file through the runtime's file API (sandboxd `PUT /v1/files`, python runtime `POST /upload`), streamed,
   * at most `maxFileBytes`; gated like commands (the file API is the same runtime server).
   */
  async upload(request: FileUploadRequest, binding: RuntimeBinding): Promise<Result<FileTransfer>> {
    const bad = this.checkTransfer(request.path, request.timeoutMs, binding);
    if (bad) return bad;
    const started = Date.now();
    let bytes = 0;
    const counted = countParts(request.content, (n) => (bytes += n));
    if (binding.runtime.kind === 'sandboxd') {
      const client = this.sandboxd(binding.runtime, binding.target);
      const mode = request.mode ?? '0644';
      const size = request.content instanceof Uint8Array ? request.content.byteLength : undefined;
      const r =
        size !== undefined && size > this.maxFileBytes
          ? ({
              kind: 'failed',
              error: fileTooLarge(`sandboxd PUT /v1/files/${request.path}`, size, this.maxFileBytes),
            } as const)
          : await client.writeFile(request.path, counted, mode, request.timeoutMs, this.maxFileBytes);
      client.close();
      if (r.kind !== 'ok') return r;
      return { kind: 'ok', value: transfer(request.path, bytes, started, 'sandboxd PUT /v1/files') };
    }
    if (request.mode !== undefined)
      return {
        kind: 'rejected',
        reason: 'FileModeUnsupported',
        message: `the python runtime's /upload sets no file mode (asked ${request.mode}): nothing was sent`,
      };
    const r = await this.pythonFiles(binding).write(request.path, counted, request.timeoutMs, this.maxFileBytes);
    if (r.kind !== 'ok') return r;
    return { kind: 'ok', value: transfer(request.path, bytes, started, 'python-runtime POST /upload') };
  }

  /** Reads a file through the runtime's file API (sandboxd `GET /v1/files`, python runtime `GET /download`), at most `maxFileBytes`. */
  async download(request: FileDownloadRequest, binding: RuntimeBinding): Promise<Result<FileDownload>> {
    const bad = this.checkTransfer(request.path, request.timeoutMs, binding);
    if (bad) return bad;
    const started = Date.now();
    if (binding.runtime.kind === 'sandboxd') {
      const client = this.sandboxd(binding.runtime, binding.target);
      const r = await client.readFile(request.path, request.timeoutMs, this.maxFileBytes);
      client.close();
      if (r.kind !== 'ok') return r;
      return {
        kind: 'ok',
        value: { ...transfer(request.path, r.value.length, started, 'sandboxd GET /v1/files'), content: r.value },
      };
    }
    const r = await this.pythonFiles(binding).read(request.path, request.timeoutMs, this.maxFileBytes);
    if (r.kind !== 'ok') return r;
    return {
      kind: 'ok',
      value: {
        ...transfer(request.path, r.value.content.length, started, 'python-runtime GET /download'),
        content: r.value.content,
      },
    };
  }

  /**
   * The limits a synchronous call of `runtime` meets over this transport: the router's (when the transport is the
   * router), the runtime's exec limit, the adapter's longest deadline.
   */
  async limitsFor(runtime: RuntimeSpec): Promise<SyncCallLimits> {
    const transport = this.options.transport;
    const router = this.options.routerLimits
      ? await this.options.routerLimits()
      : transport instanceof RouterTransport
        ? transport.limits
        : undefined;
    return syncCallLimits(
      this.options.transport.kind,
      runtime.kind === 'python-runtime' && runtime.execLimitMs !== undefined
        ? { kind: runtime.kind, execLimitMs: runtime.execLimitMs }
        : { kind: runtime.kind },
      this.options.release ?? DEFAULT_LIMIT_RELEASE,
      router,
    );
  }

  /** The execution's status; `rejected` when the id is unknown (never started here, or evicted). */
  query(executionId: string): Result<ExecutionStatus> {
    const entry = this.registry.get(executionId);
    if (!entry)
      return {
        kind: 'rejected',
        reason: 'ExecutionUnknown',
        message: `no execution ${executionId} in this process (unknown or evicted after ${this.registry.capacity} newer ones)`,
      };
    return { kind: 'ok', value: this.registry.status(entry) };
  }
}

/** The transfer record of a finished upload or download. */
function transfer(path: string, bytes: number, started: number, api: string): FileTransfer {
  return { path, bytes, durationMs: Date.now() - started, api };
}

/** The content, its parts counted as they are sent (`onPart` gets each part's size). */
function countParts(content: FileContent, onPart: (n: number) => void): FileContent {
  if (content instanceof Uint8Array) {
    onPart(content.byteLength);
    return content;
  }
  return (async function* () {
    for await (const part of content) {
      onPart(part.byteLength);
      yield part;
    }
  })();
}

/** Live output of a running execution: text for progress, and the bytes captured so far. */
interface LiveOutput {
  readonly stdout: string;
  readonly stderr: string;
  readonly output?: ProcessResult['output'];
}

/** The outcome of a finished call: exactly one ending, with its reason and the layer that decided. */
export function outcomeOf(r: Result<ProcessResult>, transport: Transport['kind']): ExecutionOutcome {
  if (r.kind === 'ok') {
    const { exitCode, signal } = r.value;
    const success = exitCode === 0;
    return {
      kind: 'completed',
      exitCode,
      success,
      ...(signal === undefined ? {} : { signal }),
      reason: signal !== undefined ? 'CommandKilledBySignal' : success ? 'CommandSucceeded' : 'CommandFailed',
      layer: 'command',
      message: signal !== undefined ? `the command was killed by signal ${signal}` : `the command exited ${exitCode}`,
    };
  }
  if (r.kind !== 'failed') return { kind: 'refused', reason: 'RuntimeRefused', layer: 'adapter', message: r.message };
  const e = r.error;
  const message = e.message;
  const code = e.code !== undefined ? { code: e.code } : {};
  switch (e.decided?.reason) {
    case 'RuntimeExecTimeout':
      return {
        kind: 'timed-out',
        by: 'runtime',
        reason: 'RuntimeExecTimeout',
        layer: 'runtime',
        ...(e.deadlineMs !== undefined ? { deadlineMs: e.deadlineMs } : {}),
        commandMayStillRun: false,
        message,
      };
    case 'RouterTimeout':
      return {
        kind: 'timed-out',
        by: 'router',
        reason: 'RouterTimeout',
        layer: 'router',
        commandMayStillRun: true,
        message,
      };
    case 'ExecTransportClosed':
      return {
        kind: 'transport-closed',
        reason: 'ExecTransportClosed',
        layer: 'transport',
        ...(e.errno ? { errno: e.errno } : {}),
        message,
      };
    case 'RuntimeDecodeFailed':
    case 'RuntimeExecFailed':
    case 'RuntimeNoExitStatus':
    case 'RuntimeAnswerInvalid':
    case 'RuntimeCallFailed':
      return {
        kind: 'runtime-error',
        reason: e.decided.reason,
        layer: e.decided.layer === 'router' ? 'router' : 'runtime',
        ...code,
        message,
      };
    default:
      break;
  }
  switch (e.category) {
    case 'timeout':
      return {
        kind: 'timed-out',
        by: 'caller',
        reason: 'CallerDeadlineExceeded',
        layer: 'caller',
        ...(e.deadlineMs !== undefined ? { deadlineMs: e.deadlineMs } : {}),
        // Only a stop the runtime client confirmed (sandboxd: the process group signalled) says it no longer runs.
        commandMayStillRun: e.decided?.reason !== 'CallerDeadlineExceeded',
        message,
      };
    case 'unreachable':
      return {
        kind: 'transport-closed',
        reason: 'TransportClosed',
        layer: 'transport',
        ...(e.errno ? { errno: e.errno } : {}),
        message,
      };
    case 'too-large':
      return {
        kind: 'too-large',
        reason: 'AnswerTooLarge',
        layer: 'adapter',
        ...(e.size ? { limitBytes: e.size.limitBytes } : {}),
        message,
      };
    case 'invalid':
    case 'not-found':
    case 'forbidden':
    case 'unauthenticated':
    case 'conflict':
    case 'redirect':
      return {
        kind: 'refused',
        reason: 'RuntimeRefused',
        layer:
          e.code === undefined || e.category === 'redirect'
            ? 'adapter'
            : transport === 'router' && e.http
              ? 'router'
              : 'runtime',
        ...code,
        message,
      };
    default:
      return { kind: 'runtime-error', reason: 'RuntimeCallFailed', layer: 'runtime', ...code, message };
  }
}

/** `state` for older callers, derived from the outcome. */
function stateOf(o: ExecutionOutcome): ExecutionStatus['state'] {
  if (o.kind === 'completed') return o.success ? 'succeeded' : 'failed';
  return o.kind === 'timed-out' ? 'timed-out' : 'failed';
}

function toStatus(
  executionId: string,
  r: Result<ProcessResult>,
  durationMs: number,
  partial: LiveOutput,
  outcome: ExecutionOutcome,
): ExecutionStatus {
  const state = stateOf(outcome);
  if (r.kind === 'ok') {
    return {
      executionId,
      state,
      exitCode: r.value.exitCode,
      stdout: r.value.stdout,
      stderr: r.value.stderr,
      durationMs,
      outcome,
      output: { stdout: streamOutput(r.value.output.stdout), stderr: streamOutput(r.value.output.stderr) },
    };
  }
  return {
    executionId,
    state,
    stdout: partial.stdout,
    stderr: `${partial.stderr}${partial.stderr ? '\n' : ''}${outcome.message}`,
    durationMs,
    outcome,
    output: {
      stdout: streamOutput(partial.output?.stdout ?? EMPTY),
      stderr: streamOutput(partial.output?.stderr ?? EMPTY),
    },
  };
}

const EMPTY = { data: Buffer.alloc(0), totalBytes: 0, truncated: false } as const;
