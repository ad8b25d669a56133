/**
 * What the verifier asks of a runtime server, over the client's transport: health, one bounded command, one file
 * round trip. Every call has its own deadline and returns a value; nothing throws for a silent, hanging or wrong runtime.
 * {@link AdapterRuntimeProber} does it with the adapter's runtime clients (sandboxd REST + gRPC, python runtime HTTP)
 * and transports (router, port-forward, direct); the verifier never reaches a runtime any other way (no pods/exec).
 */
import type { KubeClient } from '../adapter/kubernetes/client.js';
import type { PodView } from '../adapter/kubernetes/views.js';
import { PythonRuntimeClient, PythonRuntimeFiles } from '../adapter/runtime/python-runtime.js';
import { SandboxdClient } from '../adapter/runtime/sandboxd.js';
import { DirectTransport } from '../adapter/transports/direct.js';
import { PortForwardTransport } from '../adapter/transports/port-forward.js';
import { RouterTransport } from '../adapter/transports/router.js';
import type { Transport } from '../adapter/transports/types.js';
import type { ExecutionOutcome, HttpRefusal, Result, TransportKind } from '../adapter/types.js';
import { outcomeOf } from '../adapter/runtime/executions.js';
import type { ExecutionReason } from '../adapter/reasons.js';
import type { RuntimeKind } from './plan.js';

/** Where a sandbox's runtime server is reached. */
export interface RuntimeTarget {
  readonly kind: RuntimeKind;
  readonly transport: TransportKind;
  readonly namespace: string;
  /** Sandbox name (router `X-Sandbox-ID`). */
  readonly sandbox: string;
  readonly pod: string;
  /**
   * UID of the pod the answers must come from: with a pod reader, every call is bracketed by two reads of the pod, and an
   * answer while the pod was replaced (same name, new UID), terminating or gone is no answer (`replaced`). Unset: unbound.
   */
  readonly podUid?: string;
  readonly podIP?: string;
  /** REST port (sandboxd 8080, python runtime 8888). */
  readonly restPort: number;
  /** gRPC port (sandboxd 9090). */
  readonly grpcPort?: number;
}

/** A runtime call's outcome. `silent` = nothing answers the connection (refused/unreachable); `timeout` = no answer within the deadline. */
export type RuntimeCall<T> =
  | { readonly kind: 'answered'; readonly value: T; readonly durationMs: number }
  | {
      readonly kind: 'timeout';
      readonly durationMs: number;
      readonly detail: string;
      /** The execution reason when the adapter could tell whose timeout it was (e.g. `RuntimeExecTimeout`, `RouterTimeout`). */
      readonly outcome?: ExecutionReason;
    }
  | {
      readonly kind: 'silent';
      readonly durationMs: number;
      readonly detail: string;
      /** `ExecTransportClosed` when the connection closed after the command was sent (it may have run). */
      readonly outcome?: ExecutionReason;
    }
  | {
      readonly kind: 'error';
      readonly durationMs: number;
      readonly detail: string;
      readonly redirect?: true;
      /** The API server refused the transport's port-forward to the pod: nothing reached the runtime. */
      readonly refused?: true;
      /** The pod named by the target was not the one (UID) the call was bound to, before or after the call. */
      readonly replaced?: true;
      /** The answer passed the adapter's response cap: too large, not a timeout. */
      readonly tooLarge?: true;
      /** The HTTP answer the call refused (status and the start of its body), when there was one. */
      readonly http?: HttpRefusal;
      /** The execution reason when the runtime's own failure was recognised (e.g. `RuntimeDecodeFailed`), never an exit status. */
      readonly outcome?: ExecutionReason;
    };

export interface ExecOutput {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  /**
   * stdout as the bytes the adapter kept, with how many the command wrote and whether the cap cut them.
   * @default - absent: the prober reported text only
   */
  readonly stdoutBytes?: { readonly data: Buffer; readonly totalBytes: number; readonly truncated: boolean };
  /**
   * How the command ended, in the adapter's outcome types.
   * @default - absent: the prober reported no outcome
   */
  readonly outcome?: ExecutionOutcome;
}

export interface RuntimeProber {
  /**
   * Health endpoint (sandboxd `GET /v1/health` → `{"status":"ok"}`; python runtime `GET /`), over the target's
   * transport or through the router; `router-pod-ip` adds `X-Sandbox-Pod-IP` (the router skips its cache and DNS), a
   * control for telling a failed name resolution from a pod the router cannot reach.
   */
  health(target: RuntimeTarget, deadlineMs: number, via?: 'router' | 'router-pod-ip'): Promise<RuntimeCall<string>>;
  /**
   * Runs argv (no shell): sandboxd gRPC `Start` to its exit event (stdin closed; at the deadline the process group is
   * stopped, so no probe process outlives it); python runtime `POST /execute`. Over the target's transport or through the router. */
  execute(
    target: RuntimeTarget,
    argv: readonly string[],
    deadlineMs: number,
    via?: 'router',
  ): Promise<RuntimeCall<ExecOutput>>;
  /**
   * Writes then reads back one file; `value` is the content read back. sandboxd: `PUT`/`GET /v1/files`. Python runtime:
   * `POST /upload`, `GET /download/…`, and the file must show in `GET /list/` and `GET /exists/…` (an `error` otherwise).
   */
  fileRoundTrip(
    target: RuntimeTarget,
    path: string,
    content: string,
    deadlineMs: number,
    via?: 'router',
  ): Promise<RuntimeCall<string>>;
  /**
   * Reads one file over the target's transport; `value` is its content, `null` when the runtime says there is no such
   * file (sandboxd `GET /v1/files` 404; python runtime `GET /exists/…` false).
   */
  readFile(target: RuntimeTarget, path: string, deadlineMs: number): Promise<RuntimeCall<string | null>>;
  close(): Promise<void>;
}

/** Polls (25 ms apart, up to 1 s: the text trails further on a loaded node) for a transport's out-of-band failure text after a failed call. */
const STREAM_FAILURE_POLLS = 40;

/** Adapter-backed prober. `routerUrl` enables `router` transport and router health checks. */
export class AdapterRuntimeProber implements RuntimeProber {
  private readonly transports = new Map<TransportKind, Transport>();
  private byPodIP: Transport | undefined;
  /** One sandboxd client (so one gRPC channel) per target and transport, reused by the run's calls, closed by {@link close}. */
  private readonly sandboxds = new Map<Transport, Map<string, SandboxdClient>>();

  /**
   * `routerToken`: bearer token for a router that demands credentials (tokenreview, scoped-token); default none.
   * `routerPodIPHeader`: the `router` transport names the pod in `X-Sandbox-Pod-IP`, as a declared client that sends it
   * does; default false (by name, as the SDKs address a sandbox whose pod IP they do not know).
   */
  constructor(
    private readonly opts: {
      client?: KubeClient;
      routerUrl?: string;
      routerToken?: string;
      routerPodIPHeader?: boolean;
      /** Reads a pod by name (the verifier's cluster reads): binds every call to the target's `podUid`. Default: unbound. */
      pods?: (namespace: string, name: string) => Promise<Result<PodView | undefined>>;
    },
  ) {}

  health(target: RuntimeTarget, deadlineMs: number, via?: 'router' | 'router-pod-ip'): Promise<RuntimeCall<string>> {
    return this.bound(target, via, () => this.healthCall(target, deadlineMs, via));
  }

  execute(
    target: RuntimeTarget,
    argv: readonly string[],
    deadlineMs: number,
    via?: 'router',
  ): Promise<RuntimeCall<ExecOutput>> {
    return this.bound(target, via, () => this.executeCall(target, argv, deadlineMs, via));
  }

  fileRoundTrip(
    target: RuntimeTarget,
    path: string,
    content: string,
    deadlineMs: number,
    via?: 'router',
  ): Promise<RuntimeCall<string>> {
    return this.bound(target, via, () => this.fileRoundTripCall(target, path, content, deadlineMs, via));
  }

  readFile(target: RuntimeTarget, path: string, deadlineMs: number): Promise<RuntimeCall<string | null>> {
    return this.bound(target, undefined, () => this.readFileCall(target, path, deadlineMs));
  }

  /**
   * One call bound to the pod it must reach: the pod read before and after must be the target's UID, running and not
   * terminating (two reads of one name showing one UID mean no replacement happened between them, since a UID is never
   * reused), else the outcome is `replaced`, whatever answered. A failed call over port-forward carries the kubelet's
   * error-channel text when there was one.
   */
  private async bound<T>(
    target: RuntimeTarget,
    via: string | undefined,
    call: () => Promise<RuntimeCall<T>>,
  ): Promise<RuntimeCall<T>> {
    const started = Date.now();
    const before = await this.podIdentity(target);
    if (before)
      return { kind: 'error', durationMs: Date.now() - started, detail: `before the call: ${before}`, replaced: true };
    const r = await call();
    const after = await this.podIdentity(target);
    if (after)
      return {
        kind: 'error',
        durationMs: r.durationMs,
        detail: `${r.kind === 'answered' ? 'an answer came, but' : `the call ended ${r.kind}, and`} after the call ${after}: the sample is void`,
        replaced: true,
      };
    if (r.kind === 'answered' || via !== undefined) return r;
    const t = this.transports.get(target.transport);
    if (!t?.streamFailure) return r;
    // The error channel's text can trail the end of the connection the client saw: give it a moment.
    let why = t.streamFailure(this.adapterTarget(target), started);
    for (let i = 0; !why && i < STREAM_FAILURE_POLLS; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      why = t.streamFailure(this.adapterTarget(target), started);
    }
    return why ? { ...r, detail: why.message } : r;
  }

  /** Undefined when the target's pod is the bound one (or nothing is bound), else what was seen instead. */
  private async podIdentity(target: RuntimeTarget): Promise<string | undefined> {
    if (target.podUid === undefined || !this.opts.pods) return undefined;
    const name = `pod ${target.namespace}/${target.pod}`;
    const r = await this.opts.pods(target.namespace, target.pod);
    if (r.kind !== 'ok') return `${name} could not be read (${r.kind === 'failed' ? r.error.message : r.kind})`;
    const pod = r.value;
    if (!pod) return `${name} uid ${target.podUid} is gone`;
    if (pod.meta.uid !== target.podUid) return `${name} is uid ${pod.meta.uid ?? '?'}, not ${target.podUid} (replaced)`;
    if (pod.meta.deleting) return `${name} uid ${target.podUid} is terminating`;
    return undefined;
  }

  private async healthCall(
    target: RuntimeTarget,
    deadlineMs: number,
    via?: 'router' | 'router-pod-ip',
  ): Promise<RuntimeCall<string>> {
    const started = Date.now();
    const t = via === 'router-pod-ip' ? this.podIPRouter() : this.transport(via ?? target.transport);
    if (t.kind !== 'ok') return { kind: 'error', durationMs: 0, detail: t.detail };
    const r =
      target.kind === 'sandboxd'
        ? await this.sandboxd(t.value, target).health(deadlineMs)
        : await new PythonRuntimeClient(t.value, this.adapterTarget(target), { port: target.restPort }).health(
            deadlineMs,
          );
    return toCall(r, started, (v) => v.status);
  }

  private async executeCall(
    target: RuntimeTarget,
    argv: readonly string[],
    deadlineMs: number,
    via?: 'router',
  ): Promise<RuntimeCall<ExecOutput>> {
    const started = Date.now();
    const t = this.transport(via ?? target.transport);
    if (t.kind !== 'ok') return { kind: 'error', durationMs: 0, detail: t.detail };
    const r =
      target.kind === 'sandboxd'
        ? await this.sandboxd(t.value, target).execute(argv, {
            deadlineMs,
          })
        : await new PythonRuntimeClient(t.value, this.adapterTarget(target), { port: target.restPort }).execute(argv, {
            deadlineMs,
          });
    return toCall(r, started, (v) => ({
      exitCode: v.exitCode,
      stdout: v.stdout,
      stderr: v.stderr,
      stdoutBytes: v.output.stdout,
      outcome: outcomeOf({ kind: 'ok', value: v }, t.value.kind),
    }));
  }

  private async fileRoundTripCall(
    target: RuntimeTarget,
    path: string,
    content: string,
    deadlineMs: number,
    via?: 'router',
  ): Promise<RuntimeCall<string>> {
    const started = Date.now();
    const t = this.transport(via ?? target.transport);
    if (t.kind !== 'ok') return { kind: 'error', durationMs: 0, detail: t.detail };
    const left = (): number => Math.max(1, deadlineMs - (Date.now() - started));
    if (target.kind === 'python-runtime') {
      const files = new PythonRuntimeFiles(t.value, this.adapterTarget(target), target.restPort);
      const w = await files.write(path, Buffer.from(content), deadlineMs);
      if (w.kind !== 'ok') return toCall(w, started, () => '');
      const listed = await files.list('', left());
      if (listed.kind !== 'ok') return toCall(listed, started, () => '');
      if (!listed.value.entries.some((e) => e.name === path && e.type === 'file'))
        return {
          kind: 'error',
          durationMs: Date.now() - started,
          detail: `GET /list/ does not show ${path} after the upload`,
        };
      const ex = await files.exists(path, left());
      if (ex.kind !== 'ok') return toCall(ex, started, () => '');
      if (!ex.value.exists)
        return {
          kind: 'error',
          durationMs: Date.now() - started,
          detail: `GET /exists/${path} answers false after the upload`,
        };
      const r = await files.read(path, left());
      return toCall(r, started, (v) => v.content.toString('utf8'));
    }
    const client = this.sandboxd(t.value, target);
    const w = await client.writeFile(path, content, '0644', deadlineMs);
    if (w.kind !== 'ok') return toCall(w, started, () => '');
    const r = await client.readFile(path, left());
    return toCall(r, started, (b) => b.toString('utf8'));
  }

  private async readFileCall(
    target: RuntimeTarget,
    path: string,
    deadlineMs: number,
  ): Promise<RuntimeCall<string | null>> {
    const started = Date.now();
    const t = this.transport(target.transport);
    if (t.kind !== 'ok') return { kind: 'error', durationMs: 0, detail: t.detail };
    if (target.kind === 'python-runtime') {
      const files = new PythonRuntimeFiles(t.value, this.adapterTarget(target), target.restPort);
      const ex = await files.exists(path, deadlineMs);
      if (ex.kind !== 'ok') return toCall(ex, started, () => null);
      if (!ex.value.exists) return { kind: 'answered', value: null, durationMs: Date.now() - started };
      const r = await files.read(path, Math.max(1, deadlineMs - (Date.now() - started)));
      return toCall(r, started, (v) => v.content.toString('utf8'));
    }
    const client = this.sandboxd(t.value, target);
    const r = await client.readFile(path, deadlineMs);
    if (r.kind === 'failed' && r.error.category === 'not-found' && r.error.http?.code === 404)
      return { kind: 'answered', value: null, durationMs: Date.now() - started };
    return toCall(r, started, (b) => b.toString('utf8'));
  }

  async close(): Promise<void> {
    for (const byTarget of this.sandboxds.values()) for (const c of byTarget.values()) c.close();
    this.sandboxds.clear();
    await Promise.all([...this.transports.values(), ...(this.byPodIP ? [this.byPodIP] : [])].map((t) => t.close()));
  }

  private podIPRouter(): { kind: 'ok'; value: Transport } | { kind: 'no'; detail: string } {
    if (!this.opts.routerUrl)
      return { kind: 'no', detail: 'no router URL known (pass --router-url): the router transport cannot be used' };
    this.byPodIP ??= new RouterTransport(this.opts.routerUrl, { podIPHeader: true, ...this.routerToken() });
    return { kind: 'ok', value: this.byPodIP };
  }

  private transport(kind: TransportKind): { kind: 'ok'; value: Transport } | { kind: 'no'; detail: string } {
    const have = this.transports.get(kind);
    if (have) return { kind: 'ok', value: have };
    let made: Transport;
    if (kind === 'direct') made = new DirectTransport();
    else if (kind === 'router') {
      if (!this.opts.routerUrl)
        return { kind: 'no', detail: 'no router URL known (pass --router-url): the router transport cannot be used' };
      made = new RouterTransport(this.opts.routerUrl, {
        ...this.routerToken(),
        ...(this.opts.routerPodIPHeader === true ? { podIPHeader: true } : {}),
      });
    } else {
      if (!this.opts.client) return { kind: 'no', detail: 'port-forward needs a cluster connection' };
      made = new PortForwardTransport(this.opts.client);
    }
    this.transports.set(kind, made);
    return { kind: 'ok', value: made };
  }

  private routerToken(): { token?: string } {
    return this.opts.routerToken ? { token: this.opts.routerToken } : {};
  }

  private sandboxd(transport: Transport, target: RuntimeTarget): SandboxdClient {
    let byTarget = this.sandboxds.get(transport);
    if (!byTarget) this.sandboxds.set(transport, (byTarget = new Map()));
    const key = JSON.stringify([
      target.namespace,
      target.sandbox,
      target.pod,
      target.podIP,
      target.restPort,
      target.grpcPort,
    ]);
    let client = byTarget.get(key);
    if (!client) {
      client = new SandboxdClient(transport, this.adapterTarget(target), { ports: this.ports(target) });
      byTarget.set(key, client);
    }
    return client;
  }

  private adapterTarget(t: RuntimeTarget): { namespace: string; sandboxName: string; podName: string; podIP?: string } {
    return { namespace: t.namespace, sandboxName: t.sandbox, podName: t.pod, ...(t.podIP ? { podIP: t.podIP } : {}) };
  }

  private ports(t: RuntimeTarget): { rest: number; grpc?: number } {
    return { rest: t.restPort, ...(t.grpcPort !== undefined ? { grpc: t.grpcPort } : {}) };
  }
}

function toCall<A, B>(r: Result<A>, started: number, map: (a: A) => B): RuntimeCall<B> {
  const durationMs = Date.now() - started;
  if (r.kind === 'ok') return { kind: 'answered', value: map(r.value), durationMs };
  if (r.kind === 'failed') {
    const outcome = r.error.decided ? { outcome: r.error.decided.reason } : {};
    if (r.error.category === 'timeout') return { kind: 'timeout', durationMs, detail: r.error.message, ...outcome };
    if (r.error.category === 'unreachable') return { kind: 'silent', durationMs, detail: r.error.message, ...outcome };
    if (r.error.category === 'redirect') return { kind: 'error', durationMs, detail: r.error.message, redirect: true };
    if (r.error.request) return { kind: 'error', durationMs, detail: r.error.message, refused: true };
    if (r.error.category === 'too-large') return { kind: 'error', durationMs, detail: r.error.message, tooLarge: true };
    return {
      kind: 'error',
      durationMs,
      detail: r.error.message,
      ...(r.error.http ? { http: r.error.http } : {}),
      ...outcome,
    };
  }
  return { kind: 'error', durationMs, detail: r.message };
}
