/**
 * One bounded HTTP/1.1 call to a runtime server over a transport endpoint (Node's built-in fetch): deadline via
 * AbortSignal, request size checked before sending, response read up to a cap. Failures come back classified.
 * Redirects are never followed (`redirect: 'manual'`): a 3xx is a `redirect` failure naming its Location, so no command,
 * file or bearer token ever reaches an address the transport did not choose (case router-podip-ssrf).
 */
import { HTTP_BODY_CHARS, type AdapterError, type Result } from '../types.js';
import type { HttpEndpoint } from '../transports/types.js';
import { checkRequestSize, type CallLimits } from './limits.js';

export interface HttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
  readonly durationMs: number;
}

export interface HttpRequest {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Path with leading slash, already URL-encoded. */
  readonly path: string;
  readonly body?: Buffer | string;
  readonly contentType?: string;
  /** Extra request headers (after the endpoint's), e.g. the router's `X-Sandbox-Timeout`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A runtime answer the caller refuses (wrong status or shape), as a `runtime` failure that keeps status and body. */
export function refusedAnswer(what: string, a: HttpAnswer, verb = 'answered'): AdapterError {
  const body = a.body.toString('utf8').slice(0, HTTP_BODY_CHARS);
  return {
    category: 'runtime',
    code: a.status,
    message: `${what}: ${verb} ${a.status} ${body}`,
    http: { code: a.status, body },
  };
}

/** A call judged by its status code alone: the code the server answered, or the classified failure (no answer). */
export type StatusOutcome = { readonly code: number } | { readonly failure: AdapterError };

/** {@link httpCall} for callers that read only the status code; never throws. */
export async function httpStatus(
  endpoint: HttpEndpoint,
  req: HttpRequest,
  limits: CallLimits,
  what: string,
): Promise<StatusOutcome> {
  const r = await httpCall(endpoint, req, limits, what);
  if (r.kind === 'ok') return { code: r.value.status };
  return { failure: r.kind === 'failed' ? r.error : { category: 'internal', message: r.message } };
}

/** Maps a fetch failure to an AdapterError (timeouts, refused/reset connections). */
export function classifyFetchError(err: unknown, what: string, deadlineMs: number): AdapterError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return {
      category: 'timeout',
      deadlineMs,
      message: `${what}: no answer within ${deadlineMs} ms`,
      hint: 'the runtime is busy or hung; check the pod and the runtime process',
    };
  }
  const code = e?.cause?.code;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'EPIPE'
  ) {
    return {
      category: 'unreachable',
      message: `${what}: ${code}`,
      hint: 'check that the runtime server listens on that port and the transport reaches the pod',
    };
  }
  return { category: 'unreachable', message: `${what}: ${e?.cause?.message ?? e?.message ?? String(err)}` };
}

/** Sends one request; never throws. `what` names the call in errors, e.g. `sandboxd GET /v1/health via direct ...`. */
export async function httpCall(
  endpoint: HttpEndpoint,
  req: HttpRequest,
  limits: CallLimits,
  what: string,
): Promise<Result<HttpAnswer>> {
  const size = req.body === undefined ? 0 : Buffer.byteLength(req.body);
  const tooBig = checkRequestSize(what, size, limits);
  if (tooBig) return { kind: 'failed', error: tooBig };
  const started = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(Object.assign(new Error('deadline'), { name: 'TimeoutError' })),
    limits.deadlineMs,
  );
  try {
    const res = await fetch(`${endpoint.baseUrl}${req.path}`, {
      method: req.method,
      headers: { ...endpoint.headers, ...req.headers, ...(req.contentType ? { 'Content-Type': req.contentType } : {}) },
      ...(req.body !== undefined ? { body: req.body } : {}),
      signal: controller.signal,
      redirect: 'manual',
    });
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location') ?? '(no Location)';
      await res.body?.cancel().catch(() => undefined);
      return {
        kind: 'failed',
        error: {
          category: 'redirect',
          code: res.status,
          message: `${what}: answered ${res.status} redirect to ${location}; not followed`,
          hint: 'a runtime or router that redirects is misconfigured or hostile: the call and its credentials stay with the address the transport chose',
        },
      };
    }
    const chunks: Buffer[] = [];
    let total = 0;
    if (res.body) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        total += chunk.byteLength;
        if (total > limits.maxResponseBytes) {
          controller.abort();
          return {
            kind: 'failed',
            error: {
              category: 'too-large',
              message: `${what}: response exceeds ${limits.maxResponseBytes} bytes`,
              hint: 'ask for less output or raise maxResponseBytes',
            },
          };
        }
        chunks.push(Buffer.from(chunk));
      }
    }
    return {
      kind: 'ok',
      value: {
        status: res.status,
        contentType: res.headers.get('content-type') ?? '',
        body: Buffer.concat(chunks),
        durationMs: Date.now() - started,
      },
    };
  } catch (err) {
    return {
      kind: 'failed',
      error: classifyFetchError(controller.signal.aborted ? controller.signal.reason : err, what, limits.deadlineMs),
    };
  } finally {
    clearTimeout(timer);
  }
}
