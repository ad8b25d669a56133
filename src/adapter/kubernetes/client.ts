/**
 * The adapter's one connection to a Kubernetes API server (@kubernetes/client-node 1.4).
 *
 * `KubeClient.connect` honours `--kubeconfig` / `--context`, checks the context, cluster and user exist, and routes
 * kubeconfig `exec` users through {@link ExecCredentialAuth} (refresh at expiry and once on 401, case client-node-exec-credential).
 * `call` runs one API call with a deadline and classifies every failure once (kubernetes/errors.ts, case client-node-1x-errors);
 * the deadline aborts the request itself, so an unanswered call's socket is closed, not left open.
 */
import * as k8s from '@kubernetes/client-node';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Agent } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Result } from '../types.js';
import { classifyKubeError, KubeconfigError, KubeDeadlineError } from './errors.js';
import { EXEC_PROVIDER_NAME, ExecCredentialAuth, type ExecSpec } from './exec-credential.js';

export interface KubeConnectOptions {
  /**
   * A kubeconfig file, or a list of files merged as kubectl merges `$KUBECONFIG` (missing files skipped, the first value of each name wins).
   * @default `$KUBECONFIG` (':'-separated, merged the same way), then `~/.kube/config`, then the pod's ServiceAccount
   */
  readonly kubeconfig?: string | readonly string[];
  /**
   * Use the pod's ServiceAccount token and the `KUBERNETES_SERVICE_HOST`/`_PORT` address; no kubeconfig is read.
   * @default false
   */
  readonly inCluster?: boolean;
  /**
   * Context to use.
   * @default the kubeconfig's `current-context`
   */
  readonly context?: string;
  /**
   * Deadline of each API call made through {@link KubeClient.call}, ms.
   * @default 30000
   */
  readonly callTimeoutMs?: number;
  /**
   * Client-side rate limit shared by every call and watch of this client, requests per second.
   * @default 100
   */
  readonly qps?: number;
  /**
   * Burst of that rate limit.
   * @default 200
   */
  readonly burst?: number;
}

/** What a call is, for error messages: `verb` and `resource` (`plural.group`) name it in 403s; `contentType` in 415/422s. */
export interface CallInfo {
  readonly verb: string;
  readonly resource: string;
  readonly contentType?: string;
}

/** A constructor of a generated client-node API class (CoreV1Api, CustomObjectsApi, ...). */
export type ApiConstructor<T> = new (config: k8s.Configuration) => T;

const DEFAULT_CALL_TIMEOUT_MS = 30_000;
export const DEFAULT_QPS = 100;
export const DEFAULT_BURST = 200;
/** Where a pod's ServiceAccount token is mounted (client-node loads in-cluster config when it exists). */
const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** A connected kubeconfig context. Never exposes a credential. */
export class KubeClient {
  /** Number of API calls made through {@link call} (including the one retry after a 401). */
  requests = 0;
  /** The abort signal of the call running in this async context, read by the middleware of every {@link api} client. */
  private readonly callSignal = new AsyncLocalStorage<AbortSignal>();

  private constructor(
    readonly kc: k8s.KubeConfig,
    readonly context: string,
    readonly user: string,
    readonly server: string,
    private readonly exec: ExecCredentialAuth,
    private readonly callTimeoutMs: number,
    private readonly bucket: TokenBucket,
  ) {}

  /**
   * Loads the kubeconfig and selects the context.
   * @throws {KubeconfigError} no kubeconfig anywhere, file missing or unreadable, context not in the file, context naming a missing cluster or user,
   *   or a cluster without a server address. The message says what is wrong and what to do.
   */
  static connect(opts: KubeConnectOptions = {}): KubeClient {
    const { kc, source, dirOfUser } = loadKubeconfig(opts);
    const contextName = opts.context ?? kc.getCurrentContext();
    const contexts = kc.getContexts();
    const ctx = contexts.find((c) => c.name === contextName);
    if (!ctx) {
      const known = contexts.map((c) => c.name).join(', ') || 'none';
      throw new KubeconfigError(
        contextName
          ? `context "${contextName}" is not in kubeconfig "${source}" (contexts: ${known})`
          : `kubeconfig "${source}" has no current-context`,
        'pass --context with one of the listed contexts (in code: the context option of connect())',
        {
          problem: contextName ? 'context-unknown' : 'no-current-context',
          ...(contextName ? { name: contextName } : {}),
          known: contexts.map((c) => c.name),
        },
      );
    }
    const cluster = kc.getCluster(ctx.cluster);
    if (!cluster || !cluster.server) {
      throw new KubeconfigError(
        `context "${ctx.name}" names cluster "${ctx.cluster}", which has no entry with a server address in "${source}"`,
        'add the cluster to the kubeconfig or pick another context (--context, or the context option of connect())',
        { problem: 'cluster-missing', name: ctx.cluster },
      );
    }
    const user = kc.getUser(ctx.user);
    if (!user) {
      throw new KubeconfigError(
        `context "${ctx.name}" names user "${ctx.user}", which is not in "${source}"`,
        'add the user to the kubeconfig or pick another context (--context, or the context option of connect())',
        { problem: 'user-missing', name: ctx.user },
      );
    }
    const specs = new Map<string, ExecSpec>();
    const users = kc.getUsers().map((u) => {
      const exec = u.exec as
        | {
            command?: string;
            args?: string[];
            env?: Array<{ name: string; value: string }> | null;
            apiVersion?: string;
          }
        | undefined;
      if (!exec) return u;
      if (!exec.command) {
        if (u.name !== ctx.user) return u; // not used by this context: leave it alone
        throw new KubeconfigError(
          `user "${u.name}" has an exec stanza without a command`,
          'set users[].user.exec.command in the kubeconfig',
          { problem: 'exec-without-command', name: u.name },
        );
      }
      // kubectl resolves a relative command containing a path separator against the kubeconfig's directory.
      const command =
        exec.command.includes('/') && !path.isAbsolute(exec.command)
          ? path.resolve(dirOfUser.get(u.name) ?? process.cwd(), exec.command)
          : exec.command;
      specs.set(u.name, {
        command,
        args: exec.args ?? [],
        env: exec.env ?? [],
        ...(exec.apiVersion ? { apiVersion: exec.apiVersion } : {}),
      });
      const { exec: _dropped, ...rest } = u;
      void _dropped;
      return { ...rest, authProvider: { name: EXEC_PROVIDER_NAME, config: {} } } as k8s.User;
    });
    const auth = new ExecCredentialAuth(specs);
    kc.addAuthenticator(auth);
    kc.loadFromOptions({ clusters: kc.getClusters(), contexts, users, currentContext: ctx.name });
    poolAgents(kc);
    return new KubeClient(
      kc,
      ctx.name,
      ctx.user,
      cluster.server,
      auth,
      opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      new TokenBucket(opts.qps ?? DEFAULT_QPS, opts.burst ?? DEFAULT_BURST),
    );
  }

  /**
   * A generated API client bound to this context, e.g. `client.api(k8s.CustomObjectsApi)`. As `KubeConfig.makeApiClient`,
   * plus a middleware that hands each request the abort signal of the {@link call} it runs in (client-node passes a
   * RequestContext's signal to fetch), so the call's deadline aborts the request and closes its socket.
   */
  api<T>(ctor: ApiConstructor<T>): T {
    const signals = this.callSignal;
    const config = k8s.createConfiguration({
      baseServer: new k8s.ServerConfiguration(this.server, {}),
      authMethods: { default: this.kc },
      promiseMiddleware: [
        {
          pre: (ctx) => {
            const signal = signals.getStore();
            if (signal) ctx.setSignal(signal);
            return Promise.resolve(ctx);
          },
          post: (response) => Promise.resolve(response),
        },
      ],
    });
    return new ctor(config);
  }

  /**
   * Runs one API call with the client's deadline and returns its outcome as a value.
   *
   * `what` is either a {@link CallInfo} or a string `"<verb> <resource>[ ...]"`, e.g. `"list sandboxes.agents.x-k8s.io in sbx"`.
   * Failures are classified by `classifyKubeError`; on a 401 for an exec-plugin user the cached credential is dropped and the
   * call is retried once. Never throws.
   */
  async call<T>(what: string | CallInfo, fn: () => Promise<T>): Promise<Result<T>> {
    const info = typeof what === 'string' ? parseWhat(what) : what;
    const label = typeof what === 'string' ? what : `${what.verb} ${what.resource}`;
    const ctx = { ...info, context: this.context, user: this.user };
    try {
      return { kind: 'ok', value: await this.withDeadline(label, fn) };
    } catch (err) {
      if (isUnauthorized(err) && this.exec.serves(this.user)) {
        this.exec.invalidate(this.user);
        try {
          return { kind: 'ok', value: await this.withDeadline(label, fn) };
        } catch (again) {
          return { kind: 'failed', error: classifyKubeError(again, ctx) };
        }
      }
      return { kind: 'failed', error: classifyKubeError(err, ctx) };
    }
  }

  /** Plugin runs for the current user so far (0 when it does not use an exec plugin). */
  get credentialRefreshes(): number {
    return this.exec.runs.get(this.user) ?? 0;
  }

  /** Waits for the shared rate limit to admit one more request (calls do this themselves; watch opens call it). */
  throttle(): Promise<void> {
    return this.bucket.take();
  }

  /**
   * Runs `fn` under the rate limit and the call deadline. At the deadline the call's AbortSignal fires, which aborts its
   * request (the {@link api} middleware hands the signal to fetch, which closes the socket), and the call fails with
   * {@link KubeDeadlineError}; the race only keeps the error the deadline's rather than fetch's abort.
   */
  private async withDeadline<T>(label: string, fn: () => Promise<T>): Promise<T> {
    await this.bucket.take();
    this.requests += 1;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new KubeDeadlineError(label, this.callTimeoutMs));
        abort.abort();
      }, this.callTimeoutMs);
    });
    const work = this.callSignal.run(abort.signal, fn);
    work.catch(() => undefined); // after the deadline its abort rejection is no longer awaited
    return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
  }
}

/** A token bucket: `rate` tokens per second up to `burst`; {@link take} resolves when a token is free, in FIFO order. */
class TokenBucket {
  private tokens: number;
  private at = Date.now();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(): Promise<void> {
    const next = this.queue.then(async () => {
      const now = Date.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.rate);
      this.at = now;
      if (this.tokens < 1) {
        await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.tokens) / this.rate) * 1000)));
        this.tokens = 1;
        this.at = Date.now();
      }
      this.tokens -= 1;
    });
    this.queue = next;
    return next;
  }
}

type AgentFactory = (cluster: k8s.Cluster | null, options: Record<string, unknown>) => Agent;

/**
 * client-node makes a new https.Agent (so a new TCP + TLS connection) for every call and every watch. This keeps one
 * keep-alive agent per distinct TLS identity (server, CA, client cert and key, verification settings) for the life of
 * the KubeConfig, so a run shares one connection pool. `createAgent` is private in client-node's types, hence the cast.
 */
function poolAgents(kc: k8s.KubeConfig): void {
  const target = kc as unknown as { createAgent: AgentFactory };
  const make = target.createAgent.bind(kc);
  const agents = new Map<string, Agent>();
  target.createAgent = (cluster, options) => {
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          cluster?.server,
          cluster?.proxyUrl,
          ...['ca', 'cert', 'key', 'pfx', 'passphrase'].map((k) => String(options[k] ?? '')),
          options.rejectUnauthorized,
          options.servername,
        ]),
      )
      .digest('hex');
    let agent = agents.get(key);
    if (!agent) {
      agent = make(cluster, { ...options, keepAlive: true, keepAliveMsecs: 30_000 });
      agents.set(key, agent);
    }
    return agent;
  };
}

function parseWhat(what: string): { verb?: string; resource?: string } {
  const [verb, resource] = what.trim().split(/\s+/);
  return { ...(verb ? { verb } : {}), ...(resource ? { resource } : {}) };
}

function isUnauthorized(err: unknown): boolean {
  return err instanceof k8s.ApiException && err.code === 401;
}

/** A loaded kubeconfig: the merged config, where it came from (for messages), and the directory each user was defined in. */
export interface LoadedKubeconfig {
  readonly kc: k8s.KubeConfig;
  /** The file, the files (joined with the path delimiter) or `in-cluster`, for messages. */
  readonly source: string;
  /** The directory of the file that defined each user, against which a relative exec command is resolved. */
  readonly dirOfUser: ReadonlyMap<string, string>;
}

/**
 * Loads kubeconfig as kubectl does (https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/):
 * `opts.inCluster` reads the pod's ServiceAccount; else `opts.kubeconfig` (one file, which must exist, or a list);
 * else `$KUBECONFIG`; else `~/.kube/config`; else the pod's ServiceAccount when there is one. A list (an array, or
 * `$KUBECONFIG` split on the path delimiter) is merged with kubectl's rules: empty entries and missing files are
 * skipped; the first file to set `current-context` wins; a cluster, user or context name defined in several files is
 * taken from the first. (client-node 1.4's `loadFromDefault` refuses duplicates and missing files, and lets the last
 * `current-context` win.) Relative paths in each file are resolved against that file's directory.
 * @throws {KubeconfigError} nothing to load (`none-found`), a named file missing (`file-missing`) or unreadable (`unreadable`).
 */
export function loadKubeconfig(opts: Pick<KubeConnectOptions, 'kubeconfig' | 'inCluster'> = {}): LoadedKubeconfig {
  const kc = new k8s.KubeConfig();
  if (opts.inCluster === true) {
    kc.loadFromCluster();
    return { kc, source: 'in-cluster', dirOfUser: new Map() };
  }
  const home = path.join(os.homedir(), '.kube', 'config');
  const env = process.env.KUBECONFIG;
  let files: readonly string[];
  if (typeof opts.kubeconfig === 'string') {
    if (!existsSync(opts.kubeconfig))
      throw new KubeconfigError(
        `kubeconfig file "${opts.kubeconfig}" does not exist`,
        'name an existing file (--kubeconfig, or the kubeconfig option of connect()) or set KUBECONFIG',
        { problem: 'file-missing', name: opts.kubeconfig },
      );
    files = [opts.kubeconfig];
  } else if (opts.kubeconfig !== undefined) files = opts.kubeconfig.filter((f) => f.length > 0);
  else if (env !== undefined && env.length > 0) files = env.split(path.delimiter).filter((f) => f.length > 0);
  else if (existsSync(home)) files = [home];
  else if (existsSync(IN_CLUSTER_TOKEN)) {
    kc.loadFromCluster();
    return { kc, source: 'in-cluster', dirOfUser: new Map() };
  } else
    // client-node would otherwise fall back to an unauthenticated http://localhost:8080.
    throw new KubeconfigError(
      'no kubeconfig found: no --kubeconfig, KUBECONFIG is unset, ~/.kube/config does not exist and this is not a pod',
      'pass --kubeconfig FILE (in code: the kubeconfig option of connect()) or set KUBECONFIG',
      { problem: 'none-found' },
    );
  const present = files.filter((f) => existsSync(f));
  const source = files.join(path.delimiter);
  if (present.length === 0)
    throw new KubeconfigError(
      `no kubeconfig found: none of the files listed (${files.join(', ') || 'none'}) exists`,
      'list existing files in --kubeconfig (in code: the kubeconfig option of connect()) or in KUBECONFIG',
      { problem: 'none-found' },
    );
  const clusters = new Map<string, k8s.Cluster>();
  const users = new Map<string, k8s.User>();
  const contexts = new Map<string, k8s.Context>();
  const dirOfUser = new Map<string, string>();
  let currentContext = '';
  for (const file of present) {
    const one = new k8s.KubeConfig();
    try {
      one.loadFromFile(file);
    } catch (err) {
      throw new KubeconfigError(
        `cannot read kubeconfig "${file}": ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
        'check the file is valid kubeconfig YAML',
        { problem: 'unreadable', name: file },
      );
    }
    if (currentContext === '' && one.currentContext) currentContext = one.currentContext;
    for (const c of one.clusters) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const c of one.contexts) if (!contexts.has(c.name)) contexts.set(c.name, c);
    for (const u of one.users)
      if (!users.has(u.name)) {
        users.set(u.name, u);
        dirOfUser.set(u.name, path.dirname(path.resolve(file)));
      }
  }
  kc.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext,
  });
  return { kc, source, dirOfUser };
}

/**
 * Connects to a Kubernetes API server: the public way to get the {@link KubeClient} that `KubeCapabilityAdapter`
 * (`cdk8s-agentplane/adapter`) and `runVerify` (`cdk8s-agentplane/verify`) take. Nothing is dialled until a call.
 *
 * ```ts
 * import { connect } from 'cdk8s-agentplane/adapter';
 * const client = connect({ context: 'kind-dev' }); // $KUBECONFIG (merged like kubectl), else ~/.kube/config
 * const inPod = connect({ inCluster: true }); // the pod's ServiceAccount
 * ```
 * @param opts.kubeconfig a file or a list of files (merged as kubectl merges `$KUBECONFIG`); default `$KUBECONFIG`,
 *   then `~/.kube/config`, then the pod's ServiceAccount. `opts.context` overrides the kubeconfig's current-context.
 * @throws {KubeconfigError} (reason `KubeconfigUnusable`) when the kubeconfig or context cannot be used.
 */
export function connect(opts: KubeConnectOptions = {}): KubeClient {
  return KubeClient.connect(opts);
}

/** The namespace the kubeconfig context sets (`opts.context`, else current-context), if any; undefined when none or unloadable. */
export function kubeconfigNamespace(opts: Pick<KubeConnectOptions, 'kubeconfig' | 'context'> = {}): string | undefined {
  try {
    const { kc } = loadKubeconfig(opts);
    return kc.getContextObject(opts.context ?? kc.getCurrentContext())?.namespace;
  } catch {
    return undefined;
  }
}
