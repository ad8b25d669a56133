/**
 * Client of sandboxd (v0.5.1+, `packages/sandboxd/**@v0.5.6`): REST on `--rest-port` (8080: `/v1/health`,
 * `/v1/files/{path}`) and gRPC `process.v1.ProcessService` on `--grpc-port` (9090: `Start`, `WriteStdin`, `SendSignal`), both bound to
 * 127.0.0.1 inside the pod up to v0.5.6, to `--listen-host` (default `0.0.0.0`) from v1.0.1
 * (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`). gRPC uses @grpc/grpc-js over the project's own proto (proto/process/v1/process.proto). Every call
 * has a deadline; request sizes are checked on the serialized message before sending.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import { dataFile } from '../../model/package-info.js';
import { HTTP_BODY_CHARS, type AdapterError, type FileContent, type Result } from '../types.js';
import { contentParts } from './files.js';
import type { RuntimeTarget, Transport } from '../transports/types.js';
import { classifyGrpcError, droppedAfterSend } from './grpc-errors.js';
import { httpCall, refusedAnswer, routerTimeout } from './http.js';
import { checkDeadline, checkRequestSize, DEFAULT_LIMITS, type CallLimits } from './limits.js';
import { Capture, type ProcessOptions, type ProcessResult } from './process.js';

/** sandboxd's default ports (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`). */
export const SANDBOXD_PORTS = { rest: 8080, grpc: 9090 } as const;

export interface SandboxdPorts {
  readonly rest: number;
  readonly grpc: number;
}

const SERVICE = 'process.v1.ProcessService';

let loaded: protoLoader.PackageDefinition | undefined;
function definition(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(fileURLToPath(dataFile('src/adapter/runtime/proto/process/v1/process.proto')), {
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return loaded;
}

let service: grpc.ServiceClientConstructor | undefined;
/** The generated client class, made once (protobufjs code generation is not free). */
function serviceClient(): grpc.ServiceClientConstructor {
  service ??= (
    grpc.loadPackageDefinition(definition()) as unknown as {
      process: { v1: { ProcessService: grpc.ServiceClientConstructor } };
    }
  ).process.v1.ProcessService;
  return service;
}

interface ProcessConfigMsg {
  command: string[];
  envVars: Record<string, string>;
  cwd?: string;
}
interface StartResponseMsg {
  event?: 'init' | 'stdout' | 'stderr' | 'exit';
  init?: { processId: number };
  stdout?: Buffer;
  stderr?: Buffer;
  exit?: { exitCode: number };
}
type ProcessServiceClient = grpc.Client & {
  Start(req: { config: ProcessConfigMsg }, opts: grpc.CallOptions): grpc.ClientReadableStream<StartResponseMsg>;
  WriteStdin(
    req: { processId: number; input?: Buffer; eof?: Record<string, never> },
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null) => void,
  ): grpc.ClientUnaryCall;
  SendSignal(
    req: { processId: number; signal: 'SIGNAL_SIGTERM' | 'SIGNAL_SIGKILL' },
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null) => void,
  ): grpc.ClientUnaryCall;
};

/** Default time between SIGTERM and SIGKILL when a deadline stops a process, ms. */
export const DEFAULT_STOP_GRACE_MS = 2_000;
/** Extra time the stream stays open beyond deadline + grace so the signals can be delivered, ms. */
const STOP_MARGIN_MS = 2_000;
/** Largest stdin part in one `WriteStdin` message, bytes (well under gRPC's 4 MiB default receive limit). */
const STDIN_PART_BYTES = 256 << 10;

/** A process started with {@link SandboxdClient.start}. */
export interface RunningProcess {
  /** Resolves once the process exits, the deadline passes (`timeout`) or the call fails; never rejects. */
  readonly done: Promise<Result<ProcessResult>>;
  /** Output so far (UTF-8), for progress queries. */
  snapshot(): { stdout: string; stderr: string; processId?: number; output: ProcessResult['output'] };
  /**
   * Stops a process still running: `SendSignal` SIGTERM to its process group, SIGKILL after the grace period, then
   * cancels the call. Cancelling alone would not do: sandboxd v0.5.6 then kills only the group leader. Resolves when
   * done; a no-op once `done` settled.
   */
  cancel(): Promise<void>;
}

export class SandboxdClient {
  private readonly limits: CallLimits;
  private readonly ports: SandboxdPorts;
  /** Time between SIGTERM and SIGKILL when a deadline stops a process, ms. */
  readonly stopGraceMs: number;
  private grpcClient?: { target: string; client: ProcessServiceClient; unreachable: boolean } | undefined;

  /**
   * @param opts.ports sandboxd's REST and gRPC ports in the pod. Default {@link SANDBOXD_PORTS} (8080 / 9090).
   * @param opts.limits per-call limits. Default {@link DEFAULT_LIMITS} (30 s, 1 MiB requests, 4 MiB responses per stream).
   * @param opts.stopGraceMs time between SIGTERM and SIGKILL when a deadline stops a process. Default {@link DEFAULT_STOP_GRACE_MS}.
   */
  constructor(
    private readonly transport: Transport,
    private readonly target: RuntimeTarget,
    opts: { ports?: Partial<SandboxdPorts>; limits?: Partial<CallLimits>; stopGraceMs?: number } = {},
  ) {
    this.ports = { ...SANDBOXD_PORTS, ...opts.ports };
    this.stopGraceMs = opts.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
  }

  /** `GET /v1/health`: ok when 200 `{"status":"ok"}`; a 503 (shutting down) or another answer is `failed`/`runtime`. */
  async health(deadlineMs = this.limits.deadlineMs): Promise<Result<{ status: string; durationMs: number }>> {
    const ep = await this.transport.http(this.target, this.ports.rest);
    if (ep.kind !== 'ok') return ep;
    const what = `sandboxd GET /v1/health via ${ep.value.describe}`;
    const r = await httpCall(ep.value, { method: 'GET', path: '/v1/health' }, { ...this.limits, deadlineMs }, what);
    if (r.kind !== 'ok') return r;
    const late = routerTimeout(this.transport.kind, r.value, what);
    if (late) return { kind: 'failed', error: late };
    let status: unknown;
    try {
      status = (JSON.parse(r.value.body.toString('utf8')) as { status?: unknown }).status;
    } catch {
      status = undefined;
    }
    if (r.value.status !== 200 || status !== 'ok') {
      return { kind: 'failed', error: refusedAnswer(what, r.value) };
    }
    return { kind: 'ok', value: { status: 'ok', durationMs: r.value.durationMs } };
  }

  /**
   * `GET /v1/files/{path}` (path relative to sandboxd's root dir): the file's bytes, read as they stream in and cut at
   * `maxBytes` (default: the call's `maxResponseBytes`): past it, or a Content-Length over it, `failed`/`too-large`.
   * 404 → `failed`/`not-found`; a directory (sandboxd answers its JSON listing) → `failed`/`invalid`.
   */
  async readFile(path: string, deadlineMs = this.limits.deadlineMs, maxBytes?: number): Promise<Result<Buffer>> {
    const ep = await this.transport.http(this.target, this.ports.rest);
    if (ep.kind !== 'ok') return ep;
    const what = `sandboxd GET /v1/files/${path} via ${ep.value.describe}`;
    const r = await httpCall(
      ep.value,
      { method: 'GET', path: `/v1/files/${encodePath(path)}` },
      { ...this.limits, deadlineMs, ...(maxBytes !== undefined ? { maxResponseBytes: maxBytes } : {}) },
      what,
    );
    if (r.kind !== 'ok') return r;
    const late = routerTimeout(this.transport.kind, r.value, what);
    if (late) return { kind: 'failed', error: late };
    if (r.value.status !== 200) return { kind: 'failed', error: restError(r.value.status, r.value.body, what) };
    if (r.value.contentType.startsWith('application/json'))
      return {
        kind: 'failed',
        error: { category: 'invalid', message: `${what}: ${path} is a directory, not a file` },
      };
    return { kind: 'ok', value: r.value.body };
  }

  /**
   * `PUT /v1/files/{path}?mode=` with the raw bytes as the body (atomic temp file and rename, creates parents; 204).
   * `data` is streamed in parts; over `maxBytes` (default: the call's `maxRequestBytes`) it is `failed`/`too-large`:
   * before sending when its size is known, else when the count passes it (sandboxd then drops its temp file).
   * `mode` is octal text, default `0644`.
   */
  async writeFile(
    path: string,
    data: string | FileContent,
    mode = '0644',
    deadlineMs = this.limits.deadlineMs,
    maxBytes?: number,
  ): Promise<Result<void>> {
    const ep = await this.transport.http(this.target, this.ports.rest);
    if (ep.kind !== 'ok') return ep;
    const what = `sandboxd PUT /v1/files/${path} via ${ep.value.describe}`;
    const r = await httpCall(
      ep.value,
      {
        method: 'PUT',
        path: `/v1/files/${encodePath(path)}?mode=${encodeURIComponent(mode)}`,
        body: typeof data === 'string' ? data : contentParts(data),
        contentType: 'application/octet-stream',
      },
      { ...this.limits, deadlineMs, ...(maxBytes !== undefined ? { maxRequestBytes: maxBytes } : {}) },
      what,
    );
    if (r.kind !== 'ok') return r;
    const late = routerTimeout(this.transport.kind, r.value, what);
    if (late) return { kind: 'failed', error: late };
    if (r.value.status !== 204 && r.value.status !== 200)
      return { kind: 'failed', error: restError(r.value.status, r.value.body, what) };
    return { kind: 'ok', value: undefined };
  }

  /**
   * Runs argv to completion through {@link start} and waits for its ending: the output streams (cut at the per-stream
   * cap, never a one-message size failure), stdin is closed at once (or fed `opts.stdin`), and at the deadline the
   * process group is stopped. Unary `Execute` is not used: on a cancelled call sandboxd v0.5.6 kills only the group
   * leader, and its answer names no process id to signal, so children in the background would outlive the deadline.
   */
  async execute(argv: readonly string[], opts: ProcessOptions = {}): Promise<Result<ProcessResult>> {
    const started = await this.start(argv, opts);
    return started.kind === 'ok' ? started.value.done : started;
  }

  /**
   * gRPC `Start` (server streaming): returns at once with a handle whose `done` settles on the exit event, deadline or
   * failure. At the deadline the command is stopped, not abandoned (case runtime-timeout-process-fate): sandboxd
   * v0.5.6 kills only the group leader when a call is cancelled (`exec.CommandContext`), so children in the background
   * would outlive it; instead the adapter sends `SendSignal` SIGTERM to the process group, SIGKILL after
   * {@link SandboxdClient.stopGraceMs}, and only then cancels the call. The gRPC deadline is the caller's plus that
   * grace and a margin, so the stream (and with it the process registration `SendSignal` needs) stays open meanwhile.
   * The result is `failed`/`timeout` with the deadline, whatever exit the signalled process reported.
   */
  async start(argv: readonly string[], opts: ProcessOptions = {}): Promise<Result<RunningProcess>> {
    const prep = await this.prepare(argv, opts);
    if (prep.kind !== 'ok') return prep;
    const { client, config, deadlineMs, what } = prep.value;
    const started = Date.now();
    const out = new Capture(this.limits.maxResponseBytes);
    const errOut = new Capture(this.limits.maxResponseBytes);
    let processId: number | undefined;
    let exitCode: number | undefined;
    const grace = this.stopGraceMs;
    const call = client.Start({ config }, { deadline: Date.now() + deadlineMs + grace + STOP_MARGIN_MS });
    let settled = false;
    let stopping: Promise<void> | undefined;
    /** Whether sandboxd accepted a signal to the process group (else only the call was cancelled). */
    let signalled = false;
    const timers: NodeJS.Timeout[] = [];
    /** Resolvers of pending waits, woken when the call settles so {@link stop} never hangs. */
    const waking = new Set<() => void>();
    /** The SIGTERM in flight: a result after the deadline waits for its answer, so it knows whether the group was signalled. */
    let termSent: Promise<void> | undefined;
    const signal = (sig: 'SIGNAL_SIGTERM' | 'SIGNAL_SIGKILL'): Promise<void> =>
      new Promise((resolve) => {
        if (processId === undefined) return resolve();
        client.SendSignal({ processId, signal: sig }, { deadline: Date.now() + STOP_MARGIN_MS }, (err) => {
          if (!err) signalled = true;
          resolve();
        });
      });
    const wait = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        if (settled) return resolve();
        waking.add(resolve);
        timers.push(
          setTimeout(() => {
            waking.delete(resolve);
            resolve();
          }, ms),
        );
      });
    /** SIGTERM to the group, SIGKILL after the grace period unless the stream ended, then cancel the call. */
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        if (!settled && processId !== undefined) {
          termSent = signal('SIGNAL_SIGTERM');
          await termSent;
          await wait(grace);
          if (!settled) await signal('SIGNAL_SIGKILL');
          await wait(settled ? 0 : 500);
        }
        if (!settled) call.cancel();
      })());
    let stdinFailed: AdapterError | undefined;
    /**
     * Feeds `opts.stdin` in parts, then end-of-file; with no stdin, end-of-file at once. sandboxd keeps a Start'ed
     * process's stdin pipe open until told (unlike unary Execute's /dev/null), so without it a command that reads stdin
     * would wait until its deadline.
     */
    const feedStdin = async (pid: number): Promise<void> => {
      const write = (req: { input?: Buffer; eof?: Record<string, never> }): Promise<grpc.ServiceError | null> =>
        new Promise((resolve) =>
          client.WriteStdin({ processId: pid, ...req }, { deadline: Date.now() + deadlineMs }, (err) => resolve(err)),
        );
      const input = opts.stdin
        ? Buffer.from(opts.stdin.buffer, opts.stdin.byteOffset, opts.stdin.byteLength)
        : undefined;
      for (let at = 0; input && at < input.length && !settled; at += STDIN_PART_BYTES) {
        const err = await write({ input: input.subarray(at, at + STDIN_PART_BYTES) });
        if (err) {
          stdinFailed = {
            ...classifyGrpcError(err, what, deadlineMs),
            message: `${what}: stdin was not delivered after ${at} of ${input.length} bytes (${err.details || err.message}): the command ran on partial input`,
          };
          break;
        }
      }
      // A process that already exited is gone from sandboxd's registry (NOT_FOUND): nothing to close then.
      if (!settled) await write({ eof: {} });
    };
    let timedOut = false;
    timers.push(
      setTimeout(() => {
        timedOut = true;
        void stop();
      }, deadlineMs),
    );
    const timeout = (): Result<ProcessResult> => ({
      kind: 'failed',
      error: {
        category: 'timeout',
        deadlineMs,
        message: `${what}: no exit within ${deadlineMs} ms; ${signalled ? `the process group was stopped (SIGTERM, SIGKILL after ${grace} ms if still running)` : 'the call was cancelled, the process group could not be signalled: it may still run'}`,
        hint: 'give the command a longer deadline or make it finish sooner',
        // Set only when the group was signalled: the command was stopped, not just abandoned.
        ...(signalled ? { decided: { reason: 'CallerDeadlineExceeded' as const, layer: 'caller' as const } } : {}),
      },
    });
    const done = new Promise<Result<ProcessResult>>((resolve) => {
      const finish = (r: Result<ProcessResult>): void => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        for (const wake of waking) wake();
        waking.clear();
        if (timedOut) void (termSent ?? Promise.resolve()).then(() => resolve(timeout()));
        else resolve(r);
      };
      const result = (): ProcessResult => ({
        exitCode: exitCode ?? -1,
        stdout: out.text(),
        stderr: errOut.text(),
        truncated: out.truncated || errOut.truncated,
        durationMs: Date.now() - started,
        output: { stdout: out.stream(), stderr: errOut.stream() },
      });
      call.on('data', (ev: StartResponseMsg) => {
        if (ev.event === 'init' && ev.init) {
          processId = ev.init.processId;
          void feedStdin(ev.init.processId);
        } else if (ev.event === 'stdout' && ev.stdout) out.add(Buffer.from(ev.stdout));
        else if (ev.event === 'stderr' && ev.stderr) errOut.add(Buffer.from(ev.stderr));
        else if (ev.event === 'exit' && ev.exit) exitCode = ev.exit.exitCode;
      });
      call.on('error', (err: grpc.ServiceError) => {
        const e = classifyGrpcError(err, what, deadlineMs);
        const left = droppedAfterSend(err);
        // A connection that could not be made: the next call gets a new client (see channel()).
        if (this.grpcClient && err.code === grpc.status.UNAVAILABLE && !left) this.grpcClient.unreachable = true;
        // Once the call left (its init may be lost with the connection), a dropped stream leaves the ending unknown.
        finish({
          kind: 'failed',
          error:
            e.category === 'unreachable' && (processId !== undefined || left)
              ? { ...e, decided: { reason: 'ExecTransportClosed', layer: 'transport' } }
              : e,
        });
      });
      call.on('end', () => {
        if (exitCode === undefined)
          finish({
            kind: 'failed',
            error: {
              category: 'unreachable',
              message: `${what}: the stream ended without an exit event: the command's ending is unknown`,
              hint: 'the runtime closed the call (shutting down, or its pod was stopped); check the pod',
              decided: { reason: 'ExecTransportClosed', layer: 'transport' },
            },
          });
        else if (exitCode === NO_EXIT_STATUS) finish({ kind: 'failed', error: noExitStatus(what) });
        else if (stdinFailed) finish({ kind: 'failed', error: stdinFailed });
        else finish({ kind: 'ok', value: result() });
      });
    });
    return {
      kind: 'ok',
      value: {
        done,
        snapshot: () => ({
          stdout: out.text(),
          stderr: errOut.text(),
          ...(processId !== undefined ? { processId } : {}),
          output: { stdout: out.stream(), stderr: errOut.stream() },
        }),
        cancel: () => {
          // The caller ends it before the deadline: the same stop, the same `timeout` result.
          if (!settled) timedOut = true;
          return stop();
        },
      },
    };
  }

  /** Closes the gRPC channel, if one was opened. */
  close(): void {
    this.grpcClient?.client.close();
    this.grpcClient = undefined;
  }

  private async prepare(
    argv: readonly string[],
    opts: ProcessOptions,
  ): Promise<Result<{ client: ProcessServiceClient; config: ProcessConfigMsg; deadlineMs: number; what: string }>> {
    if (argv.length === 0) return { kind: 'rejected', reason: 'EmptyArgv', message: 'argv is empty' };
    const deadlineMs = opts.deadlineMs ?? this.limits.deadlineMs;
    const badDeadline = checkDeadline(deadlineMs);
    if (badDeadline) return { kind: 'failed', error: badDeadline };
    const config: ProcessConfigMsg = {
      command: [...argv],
      envVars: { ...opts.env },
      ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
    };
    const serialize = (definition()[SERVICE] as grpc.ServiceDefinition)['Start']!.requestSerialize;
    const size = serialize({ config }).length;
    const target = await this.transport.grpc(this.target, this.ports.grpc);
    if (target.kind !== 'ok') return target;
    const what = `sandboxd Start ${JSON.stringify(argv[0])} via ${this.transport.kind} ${target.value}`;
    const tooBig: AdapterError | undefined = checkRequestSize(what, size, this.limits);
    if (tooBig) return { kind: 'failed', error: tooBig };
    return { kind: 'ok', value: { client: this.channel(target.value), config, deadlineMs, what } };
  }

  /**
   * The gRPC client for `target`: its own subchannels (grpc-js shares them process-wide by default, and a connection
   * that failed for one client, e.g. to a pod IP now reused, fails every client's calls at once until its reconnect
   * backoff ends, up to 120 s), and a new one after a connection could not be made, so each call is a fresh attempt.
   */
  private channel(target: string): ProcessServiceClient {
    if (this.grpcClient?.target === target && !this.grpcClient.unreachable) return this.grpcClient.client;
    this.grpcClient?.client.close();
    const client = new (serviceClient())(target, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 2 * this.limits.maxResponseBytes + 4096,
      'grpc.max_send_message_length': this.limits.maxRequestBytes + 4096,
      'grpc.use_local_subchannel_pool': 1,
    }) as unknown as ProcessServiceClient;
    this.grpcClient = { target, client, unreachable: false };
    return client;
  }
}

/**
 * sandboxd's exit code when there is no exit status: Go's `ExitCode()` is -1 for a process killed by a signal, and
 * sandboxd sends -1 when waiting failed (`pkg/server/process.go@v0.5.6`). Never a command's own exit status.
 */
const NO_EXIT_STATUS = -1;

function noExitStatus(what: string): AdapterError {
  return {
    category: 'runtime',
    message: `${what}: the runtime reported no exit status (-1): the command was killed by a signal or could not be waited for`,
    hint: 'check whether the runtime is shutting down or the sandbox ran out of memory',
    decided: { reason: 'RuntimeNoExitStatus', layer: 'runtime' },
  };
}

function encodePath(path: string): string {
  return path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
}

/** sandboxd REST errors are `{code, message}` (spec/filesystem/v1/filesystem.yaml@v0.5.6). */
function restError(status: number, body: Buffer, what: string): AdapterError {
  const text = body.toString('utf8').slice(0, HTTP_BODY_CHARS);
  let message = text;
  try {
    message = (JSON.parse(body.toString('utf8')) as { message?: string }).message ?? message;
  } catch {
    // not JSON: keep the text
  }
  const category =
    status === 404
      ? 'not-found'
      : status === 403
        ? 'forbidden'
        : status === 413
          ? 'too-large'
          : status === 400 || status === 409
            ? 'invalid'
            : 'runtime';
  return {
    category,
    code: status,
    message: `${what}: ${status} ${message}`,
    http: { code: status, body: text },
    ...(status === 404 ? { missing: 'object' as const } : {}),
  };
}
