/**
 * Client of the legacy python runtime (`examples/python-runtime-sandbox/main.py@v0.5.6`, FACTS.md §5a): HTTP on port 8888,
 * `GET /` answers `{"status":"ok",...}`, `POST /execute {"command": "<string>"}` answers 200
 * `{"stdout","stderr","exit_code"}`. The server splits `command` with shell-word rules and runs it without a shell, so argv is
 * joined with POSIX quoting. It has no per-request environment or working directory. Pre-v0.5.6 images block every other
 * request while a command runs (case 02), which is why every call here carries its own deadline.
 */
import type { Result } from '../types.js';
import type { RuntimeTarget, Transport } from '../transports/types.js';
import { httpCall } from './http.js';
import { checkDeadline, DEFAULT_LIMITS, type CallLimits } from './limits.js';
import type { ProcessOptions, ProcessResult } from './process.js';

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
    const parsed = parseJson(r.value.body) as { status?: unknown } | undefined;
    if (r.value.status !== 200 || parsed?.status !== 'ok') {
      return { kind: 'failed', error: { category: 'runtime', code: r.value.status, message: `${what}: answered ${r.value.status} ${r.value.body.toString('utf8').slice(0, 200)}` } };
    }
    return { kind: 'ok', value: { status: 'ok', durationMs: r.value.durationMs } };
  }

  /** `POST /execute`; env and cwd are `rejected` (the python runtime cannot take them). */
  async execute(argv: readonly string[], opts: ProcessOptions = {}): Promise<Result<ProcessResult>> {
    if (argv.length === 0) return { kind: 'rejected', reason: 'EmptyArgv', message: 'argv is empty' };
    if (opts.env && Object.keys(opts.env).length) return { kind: 'rejected', reason: 'RuntimeTakesCommandOnly', message: 'the python runtime /execute takes only a command: no per-command environment' };
    if (opts.cwd) return { kind: 'rejected', reason: 'RuntimeTakesCommandOnly', message: 'the python runtime /execute takes only a command: no working directory' };
    const deadlineMs = opts.deadlineMs ?? this.limits.deadlineMs;
    const bad = checkDeadline(deadlineMs);
    if (bad) return { kind: 'failed', error: bad };
    const ep = await this.transport.http(this.target, this.port);
    if (ep.kind !== 'ok') return ep;
    const what = `python runtime POST /execute via ${ep.value.describe}`;
    const body = JSON.stringify({ command: shellJoin(argv) });
    const r = await httpCall(ep.value, { method: 'POST', path: '/execute', body, contentType: 'application/json' }, { ...this.limits, deadlineMs }, what);
    if (r.kind !== 'ok') return r;
    const parsed = parseJson(r.value.body) as { stdout?: unknown; stderr?: unknown; exit_code?: unknown } | undefined;
    if (r.value.status !== 200 || !parsed || typeof parsed.exit_code !== 'number' || typeof parsed.stdout !== 'string' || typeof parsed.stderr !== 'string') {
      return { kind: 'failed', error: { category: 'runtime', code: r.value.status, message: `${what}: unexpected answer ${r.value.status} ${r.value.body.toString('utf8').slice(0, 200)}` } };
    }
    return { kind: 'ok', value: { exitCode: parsed.exit_code, stdout: parsed.stdout, stderr: parsed.stderr, truncated: false, durationMs: r.value.durationMs } };
  }
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
