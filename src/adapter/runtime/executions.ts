/**
 * `startExecution` / `queryExecution`: runs a command in a session's runtime only when `runtime-exec` is `verified` for the
 * session's template (the support state comes from the caller, normally the verifier's last report). A missing capability
 * is `unsupported`; there is no fallback to `pods/exec` or any broader identity (docs/architecture.md, "The capability adapter").
 */
import type {
  CapabilityName,
  ExecutionRef,
  ExecutionOutcome,
  ExecutionRequest,
  ExecutionStatus,
  Result,
  SupportState,
} from '../types.js';
import type { RuntimeTarget, Transport } from '../transports/types.js';
import { checkDeadline, checkRequestSize, DEFAULT_LIMITS, type CallLimits } from './limits.js';
import { PythonRuntimeClient } from './python-runtime.js';
import { ExecutionRegistry, type ExecutionEntry } from './registry.js';
import { SandboxdClient } from './sandboxd.js';
import { streamOutput, type ProcessResult } from './process.js';

/** Which runtime server a template's pods run, and on which ports. */
export type RuntimeSpec =
  | { readonly kind: 'sandboxd'; readonly restPort?: number; readonly grpcPort?: number }
  | { readonly kind: 'python-runtime'; readonly port?: number };

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
}

export class Executions {
  private readonly registry: ExecutionRegistry;
  private readonly limits: CallLimits;

  constructor(private readonly options: ExecutionsOptions) {
    this.registry = new ExecutionRegistry(options.capacity);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
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
    const state = this.options.supportStates('runtime-exec', binding.template);
    if (state !== 'verified') {
      return {
        kind: 'unsupported',
        capability: 'runtime-exec',
        state: state ?? 'absent',
        reason: 'RuntimeExecNotVerified',
        message: `runtime-exec is ${state ?? 'not assessed'} for ${binding.template}, not verified: run agentplane verify until the runtime answered a probe over the ${this.options.transport.kind} transport`,
      };
    }
    if (request.argv.length === 0) return { kind: 'rejected', reason: 'EmptyArgv', message: 'argv is empty' };
    const badDeadline = checkDeadline(request.timeoutMs);
    if (badDeadline) return { kind: 'rejected', reason: 'InvalidDeadline', message: badDeadline.message };
    const size = Buffer.byteLength(
      JSON.stringify({ argv: request.argv, env: request.env ?? {}, cwd: request.cwd ?? '' }),
    );
    const tooBig = checkRequestSize(`execution ${executionId}`, size, this.limits);
    if (tooBig) return { kind: 'rejected', reason: 'RequestTooLarge', message: tooBig.message };
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

    if (!this.registry.hasRoom())
      return {
        kind: 'rejected',
        reason: 'TooManyExecutions',
        message: `${this.registry.capacity} executions are running: wait for some to finish`,
      };

    const ref: ExecutionRef = { executionId, session: request.session };
    const startedAt = Date.now();
    const opts = {
      ...(request.env ? { env: request.env } : {}),
      ...(request.cwd ? { cwd: request.cwd } : {}),
      deadlineMs: request.timeoutMs,
    };
    let live = (): LiveOutput => ({ stdout: '', stderr: '' });
    let done: Promise<Result<ProcessResult>>;
    let close = (): void => {};
    if (binding.runtime.kind === 'sandboxd') {
      const client = new SandboxdClient(this.options.transport, binding.target, {
        ports: {
          ...(binding.runtime.restPort ? { rest: binding.runtime.restPort } : {}),
          ...(binding.runtime.grpcPort ? { grpc: binding.runtime.grpcPort } : {}),
        },
        limits: this.limits,
      });
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
    void done.then((r) => {
      const partial = live();
      close();
      entry.final = toStatus(executionId, r, Date.now() - startedAt, partial, this.options.transport.kind);
    });
    return { kind: 'ok', value: ref };
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
  transport: Transport['kind'],
): ExecutionStatus {
  const outcome = outcomeOf(r, transport);
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
