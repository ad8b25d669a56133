/**
 * The time limits of the layers a synchronous runtime call crosses, per pinned release: the sandbox router's timeouts
 * (and which flags and variables set them) and the runtime's own exec limit. The adapter refuses a call up front when
 * one of them is shorter than the caller's deadline; synthesis compares a router's limits with its runtimes' (case
 * router-timeout-layers).
 */
import { familyOfTag } from '../model/releases.js';

/** The router of one release and the timeouts it applies to a proxied request. */
export interface RouterLimitFacts {
  /** The pinned release tag. */
  readonly release: string;
  /** `go`: `sandbox-router/**` (v0.5.1+); `python`: `clients/python/agentic-sandbox-client/sandbox-router/sandbox_router.py`. */
  readonly router: 'go' | 'python';
  /**
   * Longest wait for the upstream's response headers, ms (Go `ResponseHeaderTimeout`); past it the Go router answers
   * 502. Absent for the python router, which has no separate header wait.
   */
  readonly responseHeaderTimeoutMs?: number;
  /** Whole-request budget, ms (Go `ProxyTimeout`; python `PROXY_TIMEOUT_SECONDS`). */
  readonly proxyTimeoutMs: number;
  /** Flags that set the two timeouts (Go duration syntax); absent where the router takes no flag for it. */
  readonly flags: { readonly responseHeaderTimeout?: string; readonly proxyTimeout?: string };
  /** Environment variable read for the proxy timeout (numeric seconds); a flag wins over it. */
  readonly proxyTimeoutEnv: 'PROXY_TIMEOUT_SECONDS';
  /** Whether the router takes a per-request `X-Sandbox-Timeout` (seconds, capped at its proxy timeout). */
  readonly honoursSandboxTimeout: boolean;
  readonly cite: string;
}

const GO_ROUTER = {
  router: 'go',
  responseHeaderTimeoutMs: 30_000,
  proxyTimeoutMs: 180_000,
  flags: { responseHeaderTimeout: '--response-header-timeout', proxyTimeout: '--proxy-timeout' },
  proxyTimeoutEnv: 'PROXY_TIMEOUT_SECONDS',
  // No `X-Sandbox-Timeout` anywhere in `sandbox-router/**/*.go` at v0.5.6 or v1.0.3.
  honoursSandboxTimeout: false,
} as const;

const PYTHON_ROUTER = {
  router: 'python',
  proxyTimeoutMs: 180_000,
  flags: {},
  proxyTimeoutEnv: 'PROXY_TIMEOUT_SECONDS',
} as const;

const PY_ROUTER_PATH = 'clients/python/agentic-sandbox-client/sandbox-router/sandbox_router.py';

/**
 * The router limits of `tag`: the Go router from v0.5.1 (`sandbox-router/config/config.go@v0.5.6` `Defaults()`,
 * `config/flags.go@v0.5.6`, unchanged at `@v1.0.3`), the python router before (`sandbox_router.py@v0.4.6`: a fixed
 * client timeout from `PROXY_TIMEOUT_SECONDS`; from `@v0.5.0` also `X-Sandbox-Timeout` up to it). Undefined for a
 * tag of no known family.
 */
export function routerLimitFacts(tag: string): RouterLimitFacts | undefined {
  const family = familyOfTag(tag);
  if (family === undefined) return undefined;
  if (family === 'v1.0' || (family === 'v0.5' && tag !== 'v0.5.0'))
    return {
      release: tag,
      ...GO_ROUTER,
      cite: `sandbox-router/config/config.go@${tag}, sandbox-router/config/flags.go@${tag}, sandbox-router/proxy/proxy.go@${tag}`,
    };
  return {
    release: tag,
    ...PYTHON_ROUTER,
    honoursSandboxTimeout: family === 'v0.5',
    cite: `${PY_ROUTER_PATH}@${tag}`,
  };
}

/** The exec limit of one runtime server under one release. */
export interface RuntimeExecLimitFacts {
  readonly runtime: 'python-runtime' | 'sandboxd';
  /** The runtime's default exec limit, ms; absent when it has none. */
  readonly execLimitMs?: number;
  /** The variable that sets it (seconds), when there is one. */
  readonly env?: 'SANDBOX_EXEC_TIMEOUT_SECONDS';
  /** Whether the runtime has a streaming exec API (sandboxd `Start`), whose answer starts before the command ends. */
  readonly streaming: boolean;
  readonly cite: string;
}

/**
 * The exec limit of `runtime` under `tag`: the python runtime stops a command at `SANDBOX_EXEC_TIMEOUT_SECONDS` (300 s
 * by default) from v0.5.6 (`examples/python-runtime-sandbox/main.py@v0.5.6`, `@v1.0.3`) and had none before
 * (`main.py@v0.5.0`, `@v0.4.6`); sandboxd's `Execute` and `Start` have no server-side limit, only the caller's deadline
 * (`packages/sandboxd/pkg/server/process.go@v0.5.6`), and `Start` streams.
 */
export function runtimeExecLimitFacts(tag: string, runtime: 'python-runtime' | 'sandboxd'): RuntimeExecLimitFacts {
  if (runtime === 'sandboxd')
    return { runtime, streaming: true, cite: `packages/sandboxd/pkg/server/process.go@${tag}` };
  const family = familyOfTag(tag);
  const limited = family === 'v1.0' || (family === 'v0.5' && tag !== 'v0.5.0');
  return limited
    ? {
        runtime,
        execLimitMs: 300_000,
        env: 'SANDBOX_EXEC_TIMEOUT_SECONDS',
        streaming: false,
        cite: `examples/python-runtime-sandbox/main.py@${tag}`,
      }
    : { runtime, streaming: false, cite: `examples/python-runtime-sandbox/main.py@${tag}` };
}

/** One router timeout and where its value came from: a flag or variable of the router's container, or the default. */
export interface RouterTimeout {
  readonly ms: number;
  readonly source: 'flag' | 'env' | 'default';
}

/** A router's two timeouts; `responseHeaderTimeout` absent for the python router, which has none. */
export interface RouterTimeouts {
  readonly responseHeaderTimeout?: RouterTimeout;
  readonly proxyTimeout: RouterTimeout;
}

/** The value of flag `name` in `args` (`--name=v`, `-name=v`, `--name v`); the last one wins, as Go's flag package does. */
function flagValue(args: readonly string[], name: string): string | undefined {
  const bare = name.replace(/^-+/, '');
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([a-z0-9-]+)(?:=(.*))?$/.exec(args[i]!);
    if (m?.[1] === bare) value = m[2] ?? args[i + 1];
  }
  return value;
}

/**
 * The timeouts a router container with `args` and literal `env` runs with: flags win over the environment, which wins
 * over the defaults (`sandbox-router/config/flags.go@v0.5.6`). A value the router would refuse or ignore (not a
 * duration, not positive) leaves the default, as its lenient environment parsing does.
 */
export function routerTimeouts(
  facts: RouterLimitFacts,
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): RouterTimeouts {
  const flag = (name: string | undefined): number | undefined => {
    const v = name === undefined ? undefined : flagValue(args, name);
    const ms = v === undefined ? undefined : parseGoDuration(v);
    return ms !== undefined && ms > 0 ? ms : undefined;
  };
  const raw = env[facts.proxyTimeoutEnv];
  const envMs = raw !== undefined && Number(raw) > 0 ? Math.round(Number(raw) * 1000) : undefined;
  const header = flag(facts.flags.responseHeaderTimeout);
  const proxy = flag(facts.flags.proxyTimeout);
  const proxyTimeout: RouterTimeout =
    proxy !== undefined
      ? { ms: proxy, source: 'flag' }
      : envMs !== undefined
        ? { ms: envMs, source: 'env' }
        : { ms: facts.proxyTimeoutMs, source: 'default' };
  if (header !== undefined) return { responseHeaderTimeout: { ms: header, source: 'flag' }, proxyTimeout };
  return facts.responseHeaderTimeoutMs !== undefined
    ? { responseHeaderTimeout: { ms: facts.responseHeaderTimeoutMs, source: 'default' }, proxyTimeout }
    : { proxyTimeout };
}

/** Milliseconds of a Go `time.ParseDuration` string (`30s`, `1m30s`, `500ms`, `1.5h`); undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * units[m[2]!]!;
    at = re.lastIndex;
  }
  return at === 0 ? undefined : Math.round(total);
}

/** `30s`, `3m`, `1m30s`, `500ms`: a Go duration for `ms`, as the router's flags take it. */
export function formatGoDuration(ms: number): string {
  if (ms % 1000 !== 0) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60 || s % 60 !== 0) return s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
  return s % 3600 === 0 ? `${s / 3600}h` : `${s / 60}m`;
}
