/**
 * The one classifier for Kubernetes API failures seen through @kubernetes/client-node 1.4.
 *
 * In 1.x a non-2xx answer throws `ApiException{code, body, headers}` whose `body` is the raw response text (not a parsed
 * `V1Status`), and transport failures throw node-fetch's `FetchError{code: 'ECONNREFUSED' | ...}`.
 * Every failure is mapped here once to an {@link AdapterError}; nothing else in
 * the product inspects raw client errors.
 */
import type { AdapterError, KubeRequest } from '../types.js';
import { AgentPlaneError } from '../../model/errors.js';

/** Who was calling and what for; names only, never credentials. */
export interface KubeErrorContext {
  /** Kubernetes verb, e.g. `list`, `patch`. */
  readonly verb?: string;
  /** Resource as `plural.group` (or `plural` for core), e.g. `sandboxes.agents.x-k8s.io`. */
  readonly resource?: string;
  /** Kubeconfig context name. */
  readonly context: string;
  /** Kubeconfig user name (the entry's name, never its token). */
  readonly user: string;
  /** Content-Type the request carried (patches), named in 415/422 errors. */
  readonly contentType?: string;
}

/** Parsed `metav1.Status` fields we use. */
interface StatusBody {
  readonly reason?: string;
  readonly message?: string;
  readonly details?: { readonly name?: string; readonly group?: string; readonly kind?: string };
}

/** Thrown by the exec-credential plugin runner; classified as `unauthenticated`. */
export class ExecCredentialError extends AgentPlaneError {
  readonly reason = 'ExecCredentialFailed';
  readonly exitCategory = 'unauthenticated';
  /** What went wrong with the plugin. */
  readonly failure: ExecCredentialFailure;
  /** `failed`: the plugin's exit code. */
  readonly exitCode?: number;
  /** `failed`: the start of what the plugin wrote on stderr (its own words). */
  readonly stderr?: string;
  constructor(
    message: string,
    readonly command: string,
    readonly hint: string,
    details: { failure: ExecCredentialFailure; exitCode?: number; stderr?: string },
  ) {
    super(message);
    this.failure = details.failure;
    if (details.exitCode !== undefined) this.exitCode = details.exitCode;
    if (details.stderr !== undefined) this.stderr = details.stderr;
  }
}

/** Why an exec credential plugin gave no credential. */
export type ExecCredentialFailure =
  'no-exec-stanza' | 'not-found' | 'timeout' | 'failed' | 'not-exec-credential' | 'no-credential';

/** Thrown by {@link KubeClient.connect} for a kubeconfig that cannot be used; `hint` says what to do. */
export class KubeconfigError extends AgentPlaneError {
  readonly reason = 'KubeconfigUnusable';
  readonly exitCategory = 'usage';
  override readonly hintInMessage = true;
  constructor(
    message: string,
    readonly hint: string,
    /** What is wrong with the kubeconfig, and the names involved (a context, user or cluster; the contexts it has). */
    readonly details: {
      readonly problem?: KubeconfigProblem;
      readonly name?: string;
      readonly known?: readonly string[];
    } = {},
  ) {
    super(`${message}; ${hint}`, { summary: message });
  }
}

/** Why a kubeconfig cannot be used. */
export type KubeconfigProblem =
  | 'file-missing'
  | 'none-found'
  | 'unreadable'
  | 'context-unknown'
  | 'no-current-context'
  | 'cluster-missing'
  | 'user-missing'
  | 'exec-without-command';

/** Thrown (and classified as `timeout`) when a call to the API server exceeds its deadline. */
export class KubeDeadlineError extends AgentPlaneError {
  readonly reason = 'DeadlineExceeded';
  readonly exitCategory = 'cluster';
  constructor(
    readonly what: string,
    readonly deadlineMs: number,
  ) {
    super(`${what}: no answer from the API server within ${deadlineMs} ms`);
  }
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Parses an ApiException body (raw text in client-node 1.4, an object in some paths) into a Status, if it is one. */
export function parseStatus(body: unknown): StatusBody | undefined {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (value && typeof value === 'object' && (value as { kind?: unknown }).kind === 'Status') return value as StatusBody;
  return undefined;
}

function isApiException(err: unknown): err is { code: number; body: unknown } {
  return (
    !!err &&
    typeof err === 'object' &&
    typeof (err as { code?: unknown }).code === 'number' &&
    'body' in err &&
    (err as { constructor?: { name?: string } }).constructor?.name === 'ApiException'
  );
}

function describeTarget(ctx: KubeErrorContext, status?: StatusBody): string {
  const resource = ctx.resource ?? [status?.details?.kind, status?.details?.group].filter(Boolean).join('.');
  return resource || 'the resource';
}

/** Go's crypto/tls and crypto/x509 error texts, as the API server relays a failed webhook call. */
const WEBHOOK_TLS_FAILURE = /x509:|tls:|certificate|handshake/i;

/**
 * Whether a 5xx Status says a webhook the API server called (conversion, admission) failed its TLS handshake. The one
 * place product code reads message text: kube-apiserver v1.36.3 answers such a call with a bare 500 Status (no
 * `reason`, no `details.causes`) whose `message` relays Go's error, the same shape as a refused connection, so the
 * text is the only signal (test/cluster/cases/conversion-cabundle-drift.webhook-tls.test.ts).
 */
export function isWebhookTlsFailure(code: number, status: StatusBody | undefined): boolean {
  return code >= 500 && status?.message !== undefined && WEBHOOK_TLS_FAILURE.test(status.message);
}

/**
 * Maps any failure of a client-node call to an {@link AdapterError}.
 *
 * - 404: `not-found`; `missing: 'object'` when the server's Status names the object, else `missing: 'api'`
 *   (the CRD is not installed or that version is not served).
 * - 403: `forbidden`, naming verb, resource and user. 401: `unauthenticated`, naming context and user (never the token).
 * - 409 `conflict`, 410 `gone`, 415/422/400 `invalid` (naming the Content-Type sent), 408/504 `timeout`, 429/5xx `internal`.
 * - FetchError / socket errors: `unreachable` (TLS errors too, with a TLS hint); aborts and deadlines: `timeout`.
 * - {@link ExecCredentialError}: `unauthenticated`, naming the plugin command.
 */
export function classifyKubeError(err: unknown, ctx: KubeErrorContext): AdapterError {
  const who = `user "${ctx.user}" (context "${ctx.context}")`;
  if (err instanceof ExecCredentialError) {
    return {
      category: 'unauthenticated',
      message: `${who}: ${err.message}`,
      hint: err.hint,
      credentialPlugin: err.command,
    };
  }
  if (err instanceof KubeDeadlineError) {
    return {
      category: 'timeout',
      deadlineMs: err.deadlineMs,
      message: err.message,
      hint: 'check the API server load and network path, or raise the deadline',
    };
  }
  if (isApiException(err)) {
    const status = parseStatus(err.body);
    const code = err.code;
    const reason = status?.reason;
    const serverSays = status?.message ? `: ${status.message}` : '';
    const target = describeTarget(ctx, status);
    const verb = ctx.verb ?? 'access';
    const tls = isWebhookTlsFailure(code, status);
    const request: KubeRequest = {
      verb,
      resource: target,
      user: ctx.user,
      context: ctx.context,
      ...(status?.details?.name ? { name: status.details.name } : {}),
      ...(ctx.contentType ? { contentType: ctx.contentType } : {}),
      ...(status?.message ? { serverMessage: status.message } : {}),
    };
    const base = { code, ...(reason ? { reason } : {}), ...(tls ? { tls: true as const } : {}), request };
    switch (code) {
      case 404:
        if (status?.details?.name) {
          return {
            ...base,
            category: 'not-found',
            missing: 'object',
            message: `${target} "${status.details.name}" not found${serverSays}`,
            hint: 'the object was deleted or never created; check the name and namespace',
          };
        }
        return {
          ...base,
          category: 'not-found',
          missing: 'api',
          message: `the API for ${target} is not served by the cluster (CRD not installed or this version not served)`,
          hint: 'install the pinned release (agentplane synth, then apply) or check which versions its CRDs serve',
        };
      case 403:
        return {
          ...base,
          category: 'forbidden',
          message: `forbidden: ${who} may not ${verb} ${target}${serverSays}`,
          hint: `grant "${verb}" on ${target} to that identity (agentplane can synthesize the verifier's Role) or use a context that has it`,
        };
      case 401:
        return {
          ...base,
          category: 'unauthenticated',
          message: `the API server rejected the credentials of ${who}`,
          hint: 'refresh the credentials of that kubeconfig user (token, client certificate or exec plugin) or pick another context (--context, or the context option of connect())',
        };
      case 409:
        return {
          ...base,
          category: 'conflict',
          message: `conflict on ${target}${serverSays}`,
          hint: 'read the object again and retry with its current resourceVersion',
        };
      case 410:
        return {
          ...base,
          category: 'gone',
          message: `resourceVersion expired for ${target}${serverSays}`,
          hint: 'list again to get a fresh resourceVersion, then resume watching',
        };
      case 400:
      case 415:
      case 422: {
        const sent = ctx.contentType ? ` (Content-Type sent: ${ctx.contentType})` : '';
        // 422 is the object failing the server's validation; 415 and body-decoding 400s point at the media type.
        const hint =
          code === 422
            ? 'the object is invalid for this cluster: fix the fields the server names (a CRD or admission rule of this cluster may differ from the pinned release)'
            : 'fix the request; for patches check the media type matches the body shape';
        return {
          ...base,
          category: 'invalid',
          message: `the API server refused the request body for ${verb} ${target}${sent}${serverSays}`,
          hint,
        };
      }
      case 408:
      case 504:
        return {
          ...base,
          category: 'timeout',
          message: `the API server timed out on ${verb} ${target}${serverSays}`,
          hint: 'retry later or raise the deadline',
        };
      default:
        return {
          ...base,
          category: 'internal',
          message: `the API server answered ${code} on ${verb} ${target}${serverSays}`,
          hint: code === 429 ? 'back off and retry' : 'check the API server logs; retry later',
        };
    }
  }
  if (err && typeof err === 'object') {
    const e = err as { name?: string; code?: string; type?: string; message?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code;
    if (
      e.name === 'AbortError' ||
      e.type === 'request-timeout' ||
      code === 'ETIMEDOUT' ||
      code === 'UND_ERR_CONNECT_TIMEOUT'
    ) {
      return {
        category: 'timeout',
        message: `no answer from the API server for ${ctx.verb ?? 'the request'} ${ctx.resource ?? ''}`.trimEnd(),
        hint: 'check the server address and network path',
      };
    }
    if (code && TLS_CODES.has(code)) {
      return {
        category: 'unreachable',
        tls: true,
        message: `TLS handshake with the API server failed (${code})`,
        hint: `check the cluster CA of context "${ctx.context}" in the kubeconfig`,
      };
    }
    if ((code && UNREACHABLE_CODES.has(code)) || e.name === 'FetchError') {
      return {
        category: 'unreachable',
        ...(code ? { errno: code } : {}),
        message: `cannot reach the API server of context "${ctx.context}" (${code ?? e.type ?? 'network error'})`,
        hint: 'check that the cluster is running and the kubeconfig server address is right',
      };
    }
  }
  const text = err instanceof Error ? err.message : String(err);
  return { category: 'internal', message: `unexpected failure: ${text.split('\n')[0]}` };
}
