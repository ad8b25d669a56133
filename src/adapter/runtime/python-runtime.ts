/**
 * Client of the legacy python runtime (`examples/python-runtime-sandbox/main.py@v0.5.6`): HTTP on port 8888,
 * `GET /` answers `{"status":"ok",...}`, `POST /execute {"command": "<string>"}` answers 200
 * `{"stdout","stderr","exit_code"}`. The server splits `command` with shell-word rules and runs it without a shell, so argv is
 * joined with POSIX quoting. It has no per-request environment or working directory. Pre-v0.5.6 images block every other
 * request while a command runs (case runtime-exec-starves-probe), which is why every call here carries its own
 * deadline. Files (`main.py@v0.5.6`, confined to /app): `POST /upload` (multipart part `file`, its filename the
 * relative target path), `GET /download/<path>`, `GET /list/<path>`, `GET /exists/<path>`, paths quoted as the official
 * client quotes them (`urllib.parse.quote(path, safe='')`, `k8s_agent_sandbox/files/filesystem.py@1.0.8`). Through a
 * router that takes `X-Sandbox-Timeout` (the python router from v0.5.0; not the Go router, `sandbox-router/**@v1.0.3`)
 * each call carries its deadline there in seconds (httpCall, from the endpoint).
 */
import type { AdapterError, FileContent, Result } from '../types.js';
import { fileTooLarge, framedBody } from './files.js';
import type { RuntimeTarget, Transport } from '../transports/types.js';
import { httpCall, refusedAnswer, routerTimeout, type HttpAnswer, type StreamBody } from './http.js';
import { checkDeadline, DEFAULT_LIMITS, type CallLimits } from './limits.js';
import { textStream, type ProcessOptions, type ProcessResult } from './process.js';

/** Default port of the python runtime (`main.py@v0.5.6`). */
export const PYTHON_RUNTIME_PORT = 8888;

/** Joins argv so that Python's `shlex.split` gives it back unchanged. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`)).join(' ');
}

export class PythonRuntimeClient {
  private readonly limits: CallLimits;
  private readonly port: number;

  /** @param opts.port runtime port in the pod, default {@link PYTHON_RUNTIME_PORT} (8888); `opts.limits` default DEFAULT_LIMITS. */
  constructor(
    private readonly transport: Transport,
    private readonly target: RuntimeTarget,
    opts: { port?: number; limits?: Partial<CallLimits> } = {},
  ) {
    this.port = opts.port ?? PYTHON_RUNTIME_PORT;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
  }

  /** `GET /`: ok with the status string when the server answers 200 with `status: "ok"`; `failed`/`runtime` otherwise. */
  async health(deadlineMs = this.limits.deadlineMs): Promise<Result<{ status: string; durationMs: number }>> {
    const ep = await this.transport.http(this.target, this.port);
    if (ep.kind !== 'ok') return ep;
    const what = `python runtime GET / via ${ep.value.describe}`;
    const r = await httpCall(ep.value, { method: 'GET', path: '/' }, { ...this.limits, deadlineMs }, what);
    if (r.kind !== 'ok') return r;
    const late = routerTimeout(this.transport.kind, r.value, what);
    if (late) return { kind: 'failed', error: late };
    const parsed = parseJson(r.value.body) as { status?: unknown } | undefined;
    if (r.value.status !== 200 || parsed?.status !== 'ok') {
      return { kind: 'failed', error: refusedAnswer(what, r.value) };
    }
    return { kind: 'ok', value: { status: 'ok', durationMs: r.value.durationMs } };
  }

  /** `POST /execute`; env and cwd are `rejected` (the python runtime cannot take them). */
  async execute(argv: readonly string[], opts: ProcessOptions = {}): Promise<Result<ProcessResult>> {
    if (argv.length === 0) return { kind: 'rejected', reason: 'EmptyArgv', message: 'argv is empty' };
    if (opts.env && Object.keys(opts.env).length)
      return {
        kind: 'rejected',
        reason: 'RuntimeTakesCommandOnly',
        message: 'the python runtime /execute takes only a command: no per-command environment',
      };
    if (opts.cwd)
      return {
        kind: 'rejected',
        reason: 'RuntimeTakesCommandOnly',
        message: 'the python runtime /execute takes only a command: no working directory',
      };
    const deadlineMs = opts.deadlineMs ?? this.limits.deadlineMs;
    const bad = checkDeadline(deadlineMs);
    if (bad) return { kind: 'failed', error: bad };
    const startedAt = Date.now();
    // The first call to a runtime finds out whether it can stop a command at a deadline; that time counts against it.
    const enforced =
      inSandboxDeadline(deadlineMs) !== undefined &&
      (await this.enforcesDeadline(Math.min(PROBE_DEADLINE_MS, deadlineMs)));
    const left = deadlineMs - (Date.now() - startedAt);
    if (left < 1) return { kind: 'failed', error: callerTimeout('python runtime POST /execute', deadlineMs) };
    const plan = enforced ? inSandboxDeadline(left) : undefined;
    const r = await this.post(plan ? withDeadline(argv, plan) : argv, left);
    if (r.kind !== 'ok') return r;
    const { what, parsed } = r.value;
    const own = runtimeOwnFailure(parsed.exit_code, parsed.stdout, parsed.stderr, what, deadlineMs);
    if (own) return { kind: 'failed', error: own };
    if (plan) {
      const stopped = deadlineStopped(parsed.exit_code, parsed.stderr, what, deadlineMs, plan);
      if (stopped) return { kind: 'failed', error: stopped };
    }
    // A negative exit_code is Python's `returncode` for a command killed by signal -exit_code (subprocess docs).
    const signal = parsed.exit_code < 0 ? -parsed.exit_code : undefined;
    return {
      kind: 'ok',
      value: {
        exitCode: signal === undefined ? parsed.exit_code : 128 + signal,
        ...(signal === undefined ? {} : { signal }),
        stdout: parsed.stdout,
        stderr: parsed.stderr,
        truncated: false,
        durationMs: r.value.durationMs,
        output: { stdout: textStream(parsed.stdout), stderr: textStream(parsed.stderr) },
      },
    };
  }

  /** `POST /execute` of `argv` (joined for `shlex.split`): the runtime's answer, or why there is none. */
  private async post(
    argv: readonly string[],
    deadlineMs: number,
  ): Promise<Result<{ what: string; parsed: ExecuteAnswer; durationMs: number }>> {
    const ep = await this.transport.http(this.target, this.port);
    if (ep.kind !== 'ok') return ep;
    const what = `python runtime POST /execute via ${ep.value.describe}`;
    const body = JSON.stringify({ command: shellJoin(argv) });
    const r = await httpCall(
      ep.value,
      { method: 'POST', path: '/execute', body, contentType: 'application/json' },
      { ...this.limits, deadlineMs },
      what,
    );
    if (r.kind !== 'ok') return r;
    const viaRouter = routerTimeout(this.transport.kind, r.value, what);
    if (viaRouter) return { kind: 'failed', error: viaRouter };
    const parsed = parseJson(r.value.body) as Partial<Record<keyof ExecuteAnswer, unknown>> | undefined;
    if (
      r.value.status !== 200 ||
      !parsed ||
      typeof parsed.exit_code !== 'number' ||
      typeof parsed.stdout !== 'string' ||
      typeof parsed.stderr !== 'string'
    ) {
      return {
        kind: 'failed',
        error: {
          ...refusedAnswer(what, r.value, 'unexpected answer'),
          decided: { reason: 'RuntimeAnswerInvalid', layer: this.transport.kind === 'router' ? 'router' : 'runtime' },
        },
      };
    }
    return { kind: 'ok', value: { what, parsed: parsed as ExecuteAnswer, durationMs: r.value.durationMs } };
  }

  /**
   * Whether this runtime stops a command's whole process group under `timeout` (see {@link withDeadline}), found once per
   * runtime (transport, sandbox, pod IP and port) by a real run: `timeout -v -k 0.2 0.2 sh -c 'sleep 3 & sleep 3'` must
   * answer 124 with timeout's notice well before 3 s (a background child left alive would hold the output open). An
   * image without GNU `timeout` (or without `sh`) answers otherwise: no enforcement, and a caller's deadline then says
   * the command may still run. A call that got no answer is not remembered.
   */
  private enforcesDeadline(deadlineMs: number): Promise<boolean> {
    let known = probed.get(this.transport);
    if (!known) probed.set(this.transport, (known = new Map()));
    const key = `${this.target.namespace}/${this.target.sandboxName}@${this.target.podIP ?? ''}:${this.port}`;
    const cached = known.get(key);
    if (cached) return cached;
    const probe = this.post(['timeout', '-v', '-k', '0.2', '0.2', 'sh', '-c', 'sleep 3 & sleep 3'], deadlineMs).then(
      (r) => {
        if (r.kind === 'ok') return r.value.parsed.exit_code === 124 && TIMEOUT_NOTICE.test(r.value.parsed.stderr);
        // Past the probe's deadline is an answer (the group was not stopped); no connection is none.
        if (r.kind !== 'failed' || r.error.category !== 'timeout') known.delete(key);
        return false;
      },
    );
    known.set(key, probe);
    return probe;
  }
}

/** The python runtime's `/execute` answer (`ExecuteResponse`, `main.py@v0.5.6`). */
interface ExecuteAnswer {
  readonly stdout: string;
  readonly stderr: string;
  readonly exit_code: number;
}

/** Per transport, per runtime: whether it enforces a deadline under `timeout` ({@link PythonRuntimeClient}). */
const probed = new WeakMap<Transport, Map<string, Promise<boolean>>>();

/** Deadline of the one probe for `timeout`, ms (it answers in about 0.2 s when it works). */
const PROBE_DEADLINE_MS = 2_000;

/** The line GNU `timeout -v` writes to stderr when it signals the command (C locale; the quotes vary by locale). */
const TIMEOUT_NOTICE = /^timeout: sending signal TERM to command /m;

/** When, inside the sandbox, the command gets SIGTERM and how long before SIGKILL, ms. */
interface InSandboxDeadline {
  readonly termAfterMs: number;
  readonly graceMs: number;
}

/**
 * The in-sandbox stop for a caller's deadline: SIGTERM at the deadline less a tenth for the grace before SIGKILL and a
 * tenth for the answer's way back (each 0.1–2 s; at least 0.2 s for the answer), so the runtime answers before the
 * caller gives up. Undefined when that leaves under 0.1 s to run (the call is then not wrapped).
 */
function inSandboxDeadline(deadlineMs: number): InSandboxDeadline | undefined {
  const tenth = Math.round(deadlineMs / 10);
  const graceMs = Math.min(2000, Math.max(100, tenth));
  const termAfterMs = deadlineMs - graceMs - Math.min(2000, Math.max(200, tenth));
  return termAfterMs >= 100 ? { termAfterMs, graceMs } : undefined;
}

/**
 * `argv` under GNU `timeout` (coreutils, in the runtime image's Debian base: `FROM python:3.14-slim`,
 * `examples/python-runtime-sandbox/Dockerfile@v0.5.6` and `@v1.0.3`). The runtime starts each command in a new session
 * (`start_new_session=True`, `main.py@v0.5.6`), so `timeout` and every descendant share its process group; at the
 * deadline `timeout` sends SIGTERM to the whole group (background children too), SIGKILL after the grace, and answers
 * 124 (or dies by SIGKILL, -9) after its `-v` notice on stderr. A command's own exit status and signal pass through.
 */
function withDeadline(argv: readonly string[], plan: InSandboxDeadline): string[] {
  const secs = (ms: number): string => (ms / 1000).toFixed(3);
  return ['timeout', '-v', '-k', secs(plan.graceMs), secs(plan.termAfterMs), ...argv];
}

/**
 * The ending of a command run {@link withDeadline}: the caller's deadline enforced in the sandbox (timeout's notice and
 * 124, or -9 after its SIGKILL), or `timeout` unable to start the command (its 126/127, `failed to run command`: the
 * runtime's failure to run it, as without the wrapper); undefined for the command's own ending.
 */
function deadlineStopped(
  exitCode: number,
  stderr: string,
  what: string,
  deadlineMs: number,
  plan: InSandboxDeadline,
): AdapterError | undefined {
  if ((exitCode === 124 || exitCode === -9) && TIMEOUT_NOTICE.test(stderr))
    return {
      ...callerTimeout(what, deadlineMs),
      message: `${what}: no exit within the ${deadlineMs} ms deadline; the runtime's timeout stopped the command's process group (SIGTERM at ${plan.termAfterMs} ms, SIGKILL ${plan.graceMs} ms later if still running)`,
      decided: { reason: 'CallerDeadlineExceeded', layer: 'caller' },
    };
  if ((exitCode === 126 || exitCode === 127) && /^timeout: failed to run command /.test(stderr))
    return {
      category: 'runtime',
      message: `${what}: the runtime could not run the command (${stderr.trim()})`,
      hint: 'check that the executable exists in the sandbox image',
      decided: { reason: 'RuntimeExecFailed', layer: 'runtime' },
    };
  return undefined;
}

/** The caller's deadline passed; nothing says the command stopped (no `decided`). */
function callerTimeout(what: string, deadlineMs: number): AdapterError {
  return {
    category: 'timeout',
    deadlineMs,
    message: `${what}: no answer within the ${deadlineMs} ms deadline; the command may still run`,
    hint: 'give the command a longer deadline or make it finish sooner',
  };
}

/** The prefix the python runtime puts before its own exceptions (`main.py@v0.5.6` `execute_command`). */
export const RUNTIME_FAILURE_PREFIX = 'Failed to execute command: ';

/**
 * The python runtime answers its own failures as a command result: HTTP 200, `exit_code: 1`, empty stdout and stderr
 * `Failed to execute command: <exception>` (`main.py@v0.5.6`): its exec timeout (`subprocess.TimeoutExpired`, "timed
 * out after N seconds", after it killed the process group), a decode failure of non-UTF-8 output ("codec can't
 * decode"), or a command it could not start. Those are the runtime's endings, not the command's exit status 1 (case
 * runtime-payload-bytes). A command that itself exits 1 with nothing on stdout and that exact prefix on stderr is
 * indistinguishable and read the same way.
 */
export function runtimeOwnFailure(
  exitCode: number,
  stdout: string,
  stderr: string,
  what: string,
  deadlineMs: number,
): AdapterError | undefined {
  if (exitCode !== 1 || stdout !== '' || !stderr.startsWith(RUNTIME_FAILURE_PREFIX)) return undefined;
  const detail = stderr.slice(RUNTIME_FAILURE_PREFIX.length);
  const timedOut = /timed out after ([0-9.]+) seconds/.exec(detail);
  if (timedOut) {
    const limitMs = Math.round(Number(timedOut[1]) * 1000);
    return {
      category: 'timeout',
      deadlineMs: limitMs,
      message: `${what}: the runtime's exec limit (${timedOut[1]} s, SANDBOX_EXEC_TIMEOUT_SECONDS) stopped the command before the ${deadlineMs} ms deadline`,
      hint: "raise the runtime's SANDBOX_EXEC_TIMEOUT_SECONDS or shorten the command",
      decided: { reason: 'RuntimeExecTimeout', layer: 'runtime' },
    };
  }
  if (/codec can't decode/.test(detail)) {
    return {
      category: 'runtime',
      message: `${what}: the runtime could not decode the command's output (${detail}); the command's exit status is unknown`,
      hint: 'the python runtime decodes output strictly as UTF-8: write binary output to a file and download it',
      decided: { reason: 'RuntimeDecodeFailed', layer: 'runtime' },
    };
  }
  return {
    category: 'runtime',
    message: `${what}: the runtime could not run the command (${detail})`,
    hint: 'check that the executable exists in the sandbox image',
    decided: { reason: 'RuntimeExecFailed', layer: 'runtime' },
  };
}

/** One entry of `GET /list/<path>`. */
export interface PythonRuntimeEntry {
  readonly name: string;
  readonly size: number;
  readonly type: 'file' | 'directory';
}

/** `urllib.parse.quote(s, safe='')`: everything but letters, digits and `_.-~` percent-encoded (UTF-8). */
export function pyQuote(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The file calls of the python runtime, on the client used for execution. */
export class PythonRuntimeFiles {
  constructor(
    private readonly transport: Transport,
    private readonly target: RuntimeTarget,
    private readonly port: number = PYTHON_RUNTIME_PORT,
    private readonly limits: CallLimits = DEFAULT_LIMITS,
  ) {}

  /**
   * `POST /upload`: multipart/form-data, one part `file` whose filename is `relPath` (v0.5.6 needs its directory to
   * exist; v1.0.3 creates it). The content is streamed in parts; over `maxBytes` (default: the call's
   * `maxRequestBytes`) it is `failed`/`too-large`, before sending when its size is known, else when the count passes
   * it (the runtime gets an incomplete body and writes nothing: it saves only after reading the whole part).
   */
  async write(
    relPath: string,
    content: FileContent,
    deadlineMs = this.limits.deadlineMs,
    maxBytes = this.limits.maxRequestBytes,
  ): Promise<Result<{ durationMs: number }>> {
    const boundary = `agentplane${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`;
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${relPath.replace(/["\\\r\n]/g, '_')}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const size = content instanceof Uint8Array ? content.byteLength : undefined;
    if (size !== undefined && size > maxBytes)
      return { kind: 'failed', error: fileTooLarge(`python runtime POST /upload ${relPath}`, size, maxBytes) };
    const body = framedBody(Buffer.from(head), content, Buffer.from(tail));
    const r = await this.call('POST', '/upload', deadlineMs, {
      body,
      contentType: `multipart/form-data; boundary=${boundary}`,
      // The multipart frame is not the file: the cap counts it on top.
      maxRequestBytes: maxBytes + head.length + tail.length,
    });
    if (r.kind === 'failed' && r.error.category === 'too-large' && r.error.size)
      // Cut while streaming: the count included the multipart head; report the file's bytes against the file cap.
      return {
        kind: 'failed',
        error: { ...r.error, size: { bytes: r.error.size.bytes - head.length, limitBytes: maxBytes } },
      };
    if (r.kind !== 'ok') return r;
    if (r.value.answer.status !== 200) return this.unexpected(r.value.what, r.value.answer);
    return { kind: 'ok', value: { durationMs: r.value.answer.durationMs } };
  }

  /**
   * `GET /download/<path>`: the file's bytes, read as they stream in; past `maxBytes` (default: the call's
   * `maxResponseBytes`), or a Content-Length over it, `failed`/`too-large`. 404 (no such file) → `failed`/`not-found`.
   */
  async read(
    relPath: string,
    deadlineMs = this.limits.deadlineMs,
    maxBytes = this.limits.maxResponseBytes,
  ): Promise<Result<{ content: Buffer; durationMs: number }>> {
    const r = await this.call('GET', `/download/${pyQuote(relPath)}`, deadlineMs, { maxResponseBytes: maxBytes });
    if (r.kind !== 'ok') return r;
    if (r.value.answer.status === 404)
      return {
        kind: 'failed',
        error: { ...refusedAnswer(r.value.what, r.value.answer), category: 'not-found', missing: 'object' },
      };
    if (r.value.answer.status !== 200) return this.unexpected(r.value.what, r.value.answer);
    return { kind: 'ok', value: { content: r.value.answer.body, durationMs: r.value.answer.durationMs } };
  }

  /** `GET /list/<path>`: the directory's entries. */
  async list(
    relPath: string,
    deadlineMs = this.limits.deadlineMs,
  ): Promise<Result<{ entries: PythonRuntimeEntry[]; durationMs: number }>> {
    const r = await this.call('GET', `/list/${pyQuote(relPath)}`, deadlineMs);
    if (r.kind !== 'ok') return r;
    const parsed = parseJson(r.value.answer.body);
    if (
      r.value.answer.status !== 200 ||
      !Array.isArray(parsed) ||
      !parsed.every(
        (e) =>
          typeof e?.name === 'string' && typeof e?.size === 'number' && (e?.type === 'file' || e?.type === 'directory'),
      )
    ) {
      return this.unexpected(r.value.what, r.value.answer);
    }
    return {
      kind: 'ok',
      value: {
        entries: (parsed as PythonRuntimeEntry[]).map((e) => ({ name: e.name, size: e.size, type: e.type })),
        durationMs: r.value.answer.durationMs,
      },
    };
  }

  /** `GET /exists/<path>`: `{"exists": bool}`. */
  async exists(
    relPath: string,
    deadlineMs = this.limits.deadlineMs,
  ): Promise<Result<{ exists: boolean; durationMs: number }>> {
    const r = await this.call('GET', `/exists/${pyQuote(relPath)}`, deadlineMs);
    if (r.kind !== 'ok') return r;
    const parsed = parseJson(r.value.answer.body) as { exists?: unknown } | undefined;
    if (r.value.answer.status !== 200 || typeof parsed?.exists !== 'boolean')
      return this.unexpected(r.value.what, r.value.answer);
    return { kind: 'ok', value: { exists: parsed.exists, durationMs: r.value.answer.durationMs } };
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    deadlineMs: number,
    extra: { body?: StreamBody; contentType?: string; maxRequestBytes?: number; maxResponseBytes?: number } = {},
  ): Promise<Result<{ answer: HttpAnswer; what: string }>> {
    const bad = checkDeadline(deadlineMs);
    if (bad) return { kind: 'failed', error: bad };
    const ep = await this.transport.http(this.target, this.port);
    if (ep.kind !== 'ok') return ep;
    const what = `python runtime ${method} ${path.replace(/^(\/[a-z]+\/).+$/, '$1…')} via ${ep.value.describe}`;
    // X-Sandbox-Timeout goes only to routers that take it: the endpoint says so (httpCall adds it).
    const r = await httpCall(
      ep.value,
      {
        method,
        path,
        ...(extra.body !== undefined ? { body: extra.body } : {}),
        ...(extra.contentType ? { contentType: extra.contentType } : {}),
      },
      {
        ...this.limits,
        deadlineMs,
        ...(extra.maxRequestBytes !== undefined ? { maxRequestBytes: extra.maxRequestBytes } : {}),
        ...(extra.maxResponseBytes !== undefined ? { maxResponseBytes: extra.maxResponseBytes } : {}),
      },
      what,
    );
    if (r.kind !== 'ok') return r;
    const late = routerTimeout(this.transport.kind, r.value, what);
    if (late) return { kind: 'failed', error: late };
    return { kind: 'ok', value: { answer: r.value, what } };
  }

  private unexpected(what: string, a: HttpAnswer): Result<never> {
    return { kind: 'failed', error: refusedAnswer(what, a, 'unexpected answer') };
  }
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
