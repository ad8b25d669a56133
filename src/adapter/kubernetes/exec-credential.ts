/**
 * Kubeconfig `exec` credentials (client.authentication.k8s.io ExecCredential) with a cache that refreshes when the
 * credential's `expirationTimestamp` passes and can be invalidated after a 401 (case client-node-exec-credential: exec tokens with short lifetimes).
 *
 * client-node 1.4's built-in ExecAuth caches by expiry but cannot be told to drop a credential the server rejected, and
 * reports a missing plugin as a bare ENOENT; this authenticator replaces it for `exec` users (see client.ts).
 */
import { execFile } from 'node:child_process';
import type https from 'node:https';
import type { KubeConfig, User } from '@kubernetes/client-node';
import { ExecCredentialError } from './errors.js';

/** The `users[].user.exec` stanza of a kubeconfig. */
export interface ExecSpec {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly apiVersion?: string;
}

/** Name of the authProvider stanza client.ts rewrites `exec` users to, so that this authenticator (not ExecAuth) serves them. */
export const EXEC_PROVIDER_NAME = 'agentplane-exec';

/** client-node's Authenticator interface (not re-exported by the package index in 1.4). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

interface Credential {
  readonly token?: string;
  readonly cert?: string;
  readonly key?: string;
  /** Epoch ms; undefined = no expiry given (re-used until a 401). */
  readonly expiresAt?: number;
}

/** Credentials are refreshed this long before their stated expiry (ms). */
const EXPIRY_SKEW_MS = 5_000;
/** The plugin must answer within this many ms. */
const PLUGIN_TIMEOUT_MS = 30_000;

/** Runs exec plugins, caches their credentials per kubeconfig user, and counts how often a plugin ran (`runs`). */
export class ExecCredentialAuth implements Authenticator {
  private readonly cache = new Map<string, Promise<Credential>>();
  private readonly settled = new Map<string, Credential>();
  /** Plugin invocations so far, per user name. */
  readonly runs = new Map<string, number>();

  constructor(private readonly specs: ReadonlyMap<string, ExecSpec>) {}

  isAuthProvider(user: User): boolean {
    return (user.authProvider as { name?: string } | undefined)?.name === EXEC_PROVIDER_NAME;
  }

  async applyAuthentication(user: User, opts: https.RequestOptions): Promise<void> {
    const cred = await this.credential(user.name);
    if (cred.cert) (opts as { cert?: string }).cert = cred.cert;
    if (cred.key) (opts as { key?: string }).key = cred.key;
    if (cred.token) {
      opts.headers = { ...(opts.headers ?? {}), Authorization: `Bearer ${cred.token}` };
    }
  }

  /** Drops the cached credential of `userName` so the next request runs the plugin again (after a 401). */
  invalidate(userName: string): void {
    this.cache.delete(userName);
    this.settled.delete(userName);
  }

  /** Whether `userName` authenticates through an exec plugin. */
  serves(userName: string): boolean {
    return this.specs.has(userName);
  }

  private credential(userName: string): Promise<Credential> {
    const known = this.settled.get(userName);
    if (known && (known.expiresAt === undefined || known.expiresAt - EXPIRY_SKEW_MS > Date.now()))
      return Promise.resolve(known);
    const pending = this.cache.get(userName);
    if (pending && !known) return pending;
    const spec = this.specs.get(userName);
    if (!spec)
      return Promise.reject(
        new ExecCredentialError(
          `no exec stanza for user "${userName}"`,
          '',
          'check users[].user.exec in the kubeconfig',
          { failure: 'no-exec-stanza' },
        ),
      );
    const run = this.runPlugin(spec).then(
      (cred) => {
        this.settled.set(userName, cred);
        return cred;
      },
      (err: unknown) => {
        this.cache.delete(userName);
        throw err;
      },
    );
    this.settled.delete(userName);
    this.cache.set(userName, run);
    this.runs.set(userName, (this.runs.get(userName) ?? 0) + 1);
    return run;
  }

  private runPlugin(spec: ExecSpec): Promise<Credential> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const { name, value } of spec.env ?? []) env[name] = value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify({
      apiVersion: spec.apiVersion ?? 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
    return new Promise((resolve, reject) => {
      execFile(
        spec.command,
        [...(spec.args ?? [])],
        { env, timeout: PLUGIN_TIMEOUT_MS, maxBuffer: 1 << 20 },
        (err, stdout, stderr) => {
          if (err) {
            const code = (err as NodeJS.ErrnoException).code;
            if (code === 'ENOENT') {
              reject(
                new ExecCredentialError(
                  `exec credential plugin "${spec.command}" was not found`,
                  spec.command,
                  `install "${spec.command}" on PATH or fix users[].user.exec.command in the kubeconfig`,
                  { failure: 'not-found' },
                ),
              );
            } else if ((err as { killed?: boolean }).killed) {
              reject(
                new ExecCredentialError(
                  `exec credential plugin "${spec.command}" did not answer within ${PLUGIN_TIMEOUT_MS} ms`,
                  spec.command,
                  'check the plugin; interactive plugins are not supported',
                  { failure: 'timeout' },
                ),
              );
            } else {
              const said = String(stderr).trim().split('\n').slice(-3).join(' ').slice(0, 300);
              reject(
                new ExecCredentialError(
                  `exec credential plugin "${spec.command}" failed (exit ${String(code)})${said ? `: ${said}` : ''}`,
                  spec.command,
                  'run the plugin by hand to see why it fails',
                  {
                    failure: 'failed',
                    ...(typeof code === 'number' ? { exitCode: code } : {}),
                    ...(said ? { stderr: said } : {}),
                  },
                ),
              );
            }
            return;
          }
          let parsed: {
            status?: {
              token?: string;
              clientCertificateData?: string;
              clientKeyData?: string;
              expirationTimestamp?: string;
            };
          };
          try {
            parsed = JSON.parse(String(stdout)) as typeof parsed;
          } catch {
            reject(
              new ExecCredentialError(
                `exec credential plugin "${spec.command}" printed something that is not an ExecCredential JSON object`,
                spec.command,
                'the plugin must print client.authentication.k8s.io ExecCredential JSON on stdout',
                { failure: 'not-exec-credential' },
              ),
            );
            return;
          }
          const status = parsed.status ?? {};
          if (!status.token && !status.clientCertificateData) {
            reject(
              new ExecCredentialError(
                `exec credential plugin "${spec.command}" returned neither status.token nor status.clientCertificateData`,
                spec.command,
                'fix the plugin output',
                { failure: 'no-credential' },
              ),
            );
            return;
          }
          const expiresAt = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : undefined;
          resolve({
            ...(status.token ? { token: status.token } : {}),
            ...(status.clientCertificateData ? { cert: status.clientCertificateData } : {}),
            ...(status.clientKeyData ? { key: status.clientKeyData } : {}),
            ...(expiresAt !== undefined && !Number.isNaN(expiresAt) ? { expiresAt } : {}),
          });
        },
      );
    });
  }
}
