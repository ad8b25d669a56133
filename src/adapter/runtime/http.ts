/**
 * One bounded HTTP/1.1 call to a runtime server over a transport endpoint (`node:http`, see {@link requestTimeouts}):
 * one deadline over headers and body, request size checked before sending, response read up to a cap. Failures come back classified.
 * Redirects are never followed: a 3xx is a `redirect` failure naming its Location, so no command,
 * file or bearer token ever reaches an address the transport did not choose (case router-podip-ssrf).
 */
import http from 'node:http';
import https from 'node:https';
import { HTTP_BODY_CHARS, type AdapterError, type Result } from '../types.js';
import type { HttpEndpoint } from '../transports/types.js';
import { checkRequestSize, ROUTER_RESPONSE_HEADER_TIMEOUT_MS, type CallLimits } from './limits.js';

export interface HttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
  readonly durationMs: number;
  /** For an answer through a router: its response-header timeout, ms, when it has one (from the endpoint). */
  readonly router?: { readonly headerTimeoutMs?: number };
}

export interface HttpRequest {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Path with leading slash, already URL-encoded. */
  readonly path: string;
  readonly body?: Buffer | string | StreamBody;
  readonly contentType?: string;
  /** Extra request headers (after the endpoint's), e.g. the router's `X-Sandbox-Timeout`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A request body sent part by part as it is produced, so a large upload is never held whole: with `length` it goes
 * with a Content-Length (checked against the limit before sending), without it chunked, counted while sending and cut at
 * the limit.
 */
export interface StreamBody {
  readonly parts: AsyncIterable<Uint8Array>;
  readonly length?: number;
}

function isStreamBody(b: HttpRequest['body']): b is StreamBody {
  return typeof b === 'object' && !Buffer.isBuffer(b);
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

/**
 * Through the router, a 504, or a 502 that arrives at (or after) the router's response-header timeout, is the router's
 * timeout, not a connection failure (case router-timeout-layers): a command may still be running in the sandbox. Every
 * runtime client checks its answers through the router with it.
 */
export function routerTimeout(transport: string, a: HttpAnswer, what: string): AdapterError | undefined {
  if (transport !== 'router') return undefined;
  // The endpoint's router says its own header timeout (none for the python router); else the Go router's default.
  const headerMs = a.router ? a.router.headerTimeoutMs : ROUTER_RESPONSE_HEADER_TIMEOUT_MS;
  const atHeaderTimeout = a.status === 502 && headerMs !== undefined && a.durationMs >= headerMs - 1000;
  if (a.status !== 504 && !atHeaderTimeout) return undefined;
  return {
    ...refusedAnswer(what, a),
    category: 'timeout',
    message: `${what}: the router gave up after ${a.durationMs} ms (answered ${a.status}${atHeaderTimeout ? `, at its ${headerMs / 1000} s response-header timeout` : ''}); the command may still be running`,
    hint: "shorten the command, call the runtime directly, or raise the router's --response-header-timeout / --proxy-timeout",
    decided: { reason: 'RouterTimeout', layer: 'router' },
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

/** Network error codes that mean the connection could not be opened or was closed before an answer. */
const CLOSED_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'EPIPE']);

/** Maps a fetch or `node:http` failure to an AdapterError (timeouts, refused/reset connections). */
export function classifyFetchError(err: unknown, what: string, deadlineMs: number): AdapterError {
  const e = err as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return {
      category: 'timeout',
      deadlineMs,
      message: `${what}: no answer within ${deadlineMs} ms`,
      hint: 'the runtime is busy or hung; check the pod and the runtime process',
    };
  }
  const code = e?.cause?.code ?? e?.code;
  if (code && CLOSED_CODES.has(code)) {
    return {
      category: 'unreachable',
      errno: code,
      message: `${what}: ${code}`,
      hint: 'check that the runtime server listens on that port and the transport reaches the pod',
    };
  }
  return {
    category: 'unreachable',
    ...(code ? { errno: code } : {}),
    message: `${what}: ${e?.cause?.message ?? e?.message ?? String(err)}`,
  };
}

/**
 * The client-side timeouts of one request, all from the caller's deadline. Node's `fetch` (undici) waits at most
 * 300 s for response headers and 300 s between body chunks whatever the caller asked (case router-timeout-layers), so
 * runtime calls use `node:http`, which has no timeout of its own: the deadline timer covers headers and body, and the
 * socket's idle timeout is the same deadline.
 */
export function requestTimeouts(deadlineMs: number): { headersMs: number; bodyMs: number; socketIdleMs: number } {
  return { headersMs: deadlineMs, bodyMs: deadlineMs, socketIdleMs: deadlineMs };
}

/** Sends one request; never throws. `what` names the call in errors, e.g. `sandboxd GET /v1/health via direct ...`. */
export async function httpCall(
  endpoint: HttpEndpoint,
  req: HttpRequest,
  limits: CallLimits,
  what: string,
): Promise<Result<HttpAnswer>> {
  const stream = isStreamBody(req.body) ? req.body : undefined;
  const size =
    req.body === undefined ? 0 : stream ? (stream.length ?? 0) : Buffer.byteLength(req.body as Buffer | string);
  const tooBig = checkRequestSize(what, size, limits);
  if (tooBig) return { kind: 'failed', error: tooBig };
  const started = Date.now();
  let url: URL;
  try {
    url = new URL(`${endpoint.baseUrl}${req.path}`);
  } catch (err) {
    return { kind: 'failed', error: { category: 'invalid', message: `${what}: ${(err as Error).message}` } };
  }
  const timeouts = requestTimeouts(limits.deadlineMs);
  const sized = req.body !== undefined && (!stream || stream.length !== undefined);
  const deadlineHeader = endpoint.router?.deadlineHeader;
  const headers: Record<string, string> = {
    ...endpoint.headers,
    // Only routers that take it get the deadline (seconds, rounded up so the router never cuts the call first).
    ...(deadlineHeader ? { [deadlineHeader]: String(Math.max(1, Math.ceil(limits.deadlineMs / 1000))) } : {}),
    ...req.headers,
    ...(req.contentType ? { 'Content-Type': req.contentType } : {}),
    ...(sized ? { 'Content-Length': String(size) } : {}),
  };
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise<Result<HttpAnswer>>((resolve) => {
    let settled = false;
    /** Whether the whole request reached the connection: a close after that may come after the server acted on it. */
    let sent = false;
    let answered = false;
    const finish = (r: Result<HttpAnswer>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const failed = (err: unknown): void => {
      const e = classifyFetchError(err, what, limits.deadlineMs);
      finish({
        kind: 'failed',
        error:
          sent && e.category === 'unreachable' && e.errno !== 'ECONNREFUSED'
            ? { ...e, decided: { reason: 'ExecTransportClosed', layer: 'transport' } }
            : e,
      });
    };
    const timeout = (): void => {
      finish({ kind: 'failed', error: classifyFetchError({ name: 'TimeoutError' }, what, limits.deadlineMs) });
      request.destroy();
    };
    const timer = setTimeout(timeout, Math.max(timeouts.headersMs, timeouts.bodyMs));
    // A request with a body gets a connection of its own: it cannot be retried, and a kept-alive socket the server
    // closed while idle (uvicorn after 5 s) fails the write with EPIPE, which would read as a dropped connection.
    const agent = req.body === undefined ? {} : { agent: false as const };
    const request = send(url, { method: req.method, headers, timeout: timeouts.socketIdleMs, ...agent }, (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        const location = res.headers.location ?? '(no Location)';
        res.resume();
        request.destroy();
        finish({
          kind: 'failed',
          error: {
            category: 'redirect',
            code: status,
            message: `${what}: answered ${status} redirect to ${location}; not followed`,
            hint: 'a runtime or router that redirects is misconfigured or hostile: the call and its credentials stay with the address the transport chose',
          },
        });
        return;
      }
      const tooLarge = (bytes: number): void => {
        // Too large is its own outcome, decided here: never read as a timeout or a dropped connection.
        finish({
          kind: 'failed',
          error: {
            category: 'too-large',
            size: { bytes, limitBytes: limits.maxResponseBytes },
            message: `${what}: response exceeds ${limits.maxResponseBytes} bytes`,
            hint: 'ask for less output or raise maxResponseBytes',
          },
        });
        request.destroy();
      };
      // A declared length over the cap is refused before a byte of the body is read.
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxResponseBytes) return tooLarge(declared);
      const chunks: Buffer[] = [];
      let total = 0;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        total += chunk.length;
        if (total > limits.maxResponseBytes) return tooLarge(total);
        chunks.push(chunk);
      });
      res.on('end', () =>
        finish({
          kind: 'ok',
          value: {
            status,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks),
            durationMs: Date.now() - started,
            ...(endpoint.router
              ? {
                  router:
                    endpoint.router.headerTimeoutMs !== undefined
                      ? { headerTimeoutMs: endpoint.router.headerTimeoutMs }
                      : {},
                }
              : {}),
          },
        }),
      );
      res.on('error', failed);
      // The connection closed before the body ended: settle now, not at the deadline.
      res.on('close', () => {
        if (!res.complete)
          failed(Object.assign(new Error('connection closed before the answer ended'), { code: 'ECONNRESET' }));
      });
    });
    request.on('timeout', timeout);
    request.on('error', failed);
    request.on('finish', () => (sent = true));
    request.on('close', () => {
      if (!settled && !answered)
        failed(Object.assign(new Error('connection closed before an answer'), { code: 'ECONNRESET' }));
    });
    if (!stream) {
      if (req.body !== undefined) request.end(req.body);
      else request.end();
      return;
    }
    void pump(stream, request, limits.maxRequestBytes, () => settled).then((cut) => {
      if (cut === undefined) return;
      request.destroy();
      finish({ kind: 'failed', error: { ...cut, message: `${what}: ${cut.message}` } });
    });
  });
}

/**
 * Writes a streamed body with backpressure and ends the request; stops at `limit` bytes (a `too-large` error: the
 * server got an incomplete body, which it discards) or when the source fails. Resolves undefined when all was written.
 */
async function pump(
  body: StreamBody,
  request: http.ClientRequest,
  limit: number,
  settled: () => boolean,
): Promise<AdapterError | undefined> {
  let sent = 0;
  try {
    for await (const part of body.parts) {
      if (settled() || request.destroyed) return undefined;
      sent += part.length;
      if (sent > limit)
        return {
          category: 'too-large',
          size: { bytes: sent, limitBytes: limit },
          message: `request passed ${limit} bytes while streaming (at ${sent}); the rest was not sent`,
          hint: 'send a smaller file or raise the file size limit',
        };
      if (!request.write(part))
        await new Promise<void>((resolve) => {
          const go = (): void => {
            request.off('drain', go);
            request.off('close', go);
            resolve();
          };
          request.on('drain', go);
          request.on('close', go);
        });
    }
  } catch (err) {
    return { category: 'invalid', message: `the request body's source failed: ${(err as Error).message}` };
  }
  if (!settled() && !request.destroyed) request.end();
  return undefined;
}
