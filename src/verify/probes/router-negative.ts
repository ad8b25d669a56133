/**
 * The router as an attack surface (case router-podip-ssrf): requests without credentials that a router must refuse.
 * (a) `X-Sandbox-ID: ../kube-system/x`, not a DNS label; (b) a Sandbox's name with `X-Sandbox-Pod-IP` naming an address
 * that is not its pod's; (c) `X-Sandbox-Pod-IP: 127.0.0.1`. Each counts only when refused with a 4xx and no upstream
 * connection was made, proved against a listener the verifier opens at the plan's canary host (where the router can
 * dial it): the header names that listener, so a router that forwards connects to it. Without a canary the refusal is
 * seen but the no-connection part stays unproven (unknown). A request for a Sandbox without credentials tells whether
 * the router authenticates anyone: one it lets through is a finding unless the environment acknowledged allow-all.
 * All evidence is on the `verified` step of `router`; it runs after the workloads, so a live Sandbox name is at hand.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { httpStatus, type StatusOutcome } from '../../adapter/runtime/http.js';
import { DEFAULT_LIMITS } from '../../adapter/runtime/limits.js';
import type { Verdict } from '../evidence.js';
import type { EvidenceReason } from '../reasons.js';
import type { Probe } from '../runner.js';
import { Facts, reads, type ProbeDeps } from './common.js';

/** The three negative probes. */
export type NegativeKind = 'invalid-id' | 'foreign-pod-ip' | 'loopback-pod-ip';

/** The sandbox id of probe (a): a path, not a DNS label (case router-podip-ssrf). */
export const INVALID_SANDBOX_ID = '../kube-system/x';
/** How long after an answer a late connection to the canary still counts (a router may retry its dial). */
const LATE_DIAL_MS = 250;
/** Port named by (c) when the verifier does not share the router's loopback: nothing should listen on TCP 1. */
const UNOWNED_LOOPBACK_PORT = 1;

/** What one negative request got: an HTTP status code, or no usable answer (timeout, refused, redirect). */
export type NegativeAnswer = StatusOutcome;

/** Judges one negative probe (pure): a connection to the canary or a non-4xx answer means it was not refused. */
export function judgeNegative(
  answer: NegativeAnswer,
  owned: boolean,
  dialled: number,
): { verdict: Verdict; reason: EvidenceReason } {
  if (dialled > 0) return { verdict: 'missing', reason: 'RouterDialedCanary' };
  if ('failure' in answer) return { verdict: 'unknown', reason: 'RouterNegativeUnanswered' };
  if (answer.code >= 400 && answer.code < 500)
    return owned
      ? { verdict: 'proven', reason: 'RouterRefusedNegative' }
      : { verdict: 'unknown', reason: 'RouterNoConnectionUnproven' };
  return { verdict: 'missing', reason: 'RouterAcceptedNegative' };
}

/**
 * Judges the credential-less request (pure): 401/403 = the router demands credentials; an answer from past its
 * authorization (2xx, 5xx) = it authenticates nobody, acceptable only when acknowledged; anything else tells nothing.
 */
export function judgeAuthorization(
  answer: NegativeAnswer,
  acknowledged: boolean,
): { verdict: Verdict; reason: EvidenceReason } {
  if ('failure' in answer) return { verdict: 'unknown', reason: 'RouterAuthorizationUnknown' };
  if (answer.code === 401 || answer.code === 403) return { verdict: 'proven', reason: 'RouterRequiresCredentials' };
  if (answer.code >= 400 && answer.code < 500) return { verdict: 'unknown', reason: 'RouterAuthorizationUnknown' };
  return acknowledged
    ? { verdict: 'proven', reason: 'RouterUnauthenticatedAcknowledged' }
    : { verdict: 'missing', reason: 'RouterUnauthenticated' };
}

/** Whether `host` is an IPv4 loopback address (127.0.0.0/8) or `::1`. */
export function isLoopback(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1';
}

/** A listener of the verifier's that counts the connections made to it and answers each with a marker. */
export class Canary {
  private count = 0;
  private firstLine: string | undefined;
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
  ) {}

  /** Opens a listener on `host` (an ephemeral port); the error text when it cannot. */
  static async open(host: string): Promise<Canary | string> {
    const server = createServer();
    let canary: Canary | undefined;
    server.on('connection', (socket) => {
      if (canary) {
        canary.count += 1;
        canary.sockets.add(socket);
        socket.once('close', () => canary?.sockets.delete(socket));
      }
      socket.setTimeout(2_000, () => socket.destroy());
      socket.once('data', (chunk: Buffer) => {
        if (canary && canary.firstLine === undefined) canary.firstLine = chunk.toString('latin1').split('\r\n')[0];
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 17\r\nConnection: close\r\n\r\nagentplane-canary');
      });
      socket.on('error', () => undefined);
    });
    return new Promise((resolve) => {
      server.once('error', (err) => resolve(err.message));
      server.listen(0, host, () => {
        const addr = server.address();
        canary = new Canary(server, host, typeof addr === 'object' && addr ? addr.port : 0);
        resolve(canary);
      });
    });
  }

  get connections(): number {
    return this.count;
  }

  /** The first request line a connection sent, e.g. `GET /v1/health HTTP/1.1`. */
  get request(): string | undefined {
    return this.firstLine;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A live Sandbox to name in the probes (the workloads' probe sandboxes exist until cleanup), else a DNS label naming none. */
async function sandboxToName(deps: ProbeDeps): Promise<{ namespace: string; name: string; live: boolean }> {
  const namespaces = [...new Set(deps.plan.templates.map((t) => t.namespace))];
  const read = reads(deps);
  for (const ns of namespaces) {
    const r = await read.sandboxes(ns);
    const name = r.kind === 'ok' ? r.value[0]?.meta.name : undefined;
    if (name) return { namespace: ns, name, live: true };
  }
  return {
    namespace: namespaces[0] ?? deps.plan.router!.namespace,
    name: deps.workload.name('negative'),
    live: false,
  };
}

export function routerNegativeProbe(deps: ProbeDeps, after: readonly string[]): Probe {
  return {
    id: 'router-negative',
    after,
    covers: ['router'],
    timeoutStep: 'verified',
    deadlineMs: 4 * (deps.plan.probeTimeoutMs + LATE_DIAL_MS) + 10_000,
    async run(ctx) {
      const f = new Facts('router');
      const router = deps.plan.router!;
      if (!router.url)
        return f.add(
          'verified',
          'unknown',
          `router ${router.namespace}/${router.service}`,
          'NoRouterUrl',
          'no router URL for the negative probes (pass --router-url)',
        ).list;
      const url = router.url.replace(/\/+$/, '');
      const subject = `router ${url}`;
      const sb = await sandboxToName(deps);
      const named = sb.live
        ? `Sandbox ${sb.namespace}/${sb.name}`
        : `${sb.namespace}/${sb.name} (no live Sandbox; a DNS label naming none)`;
      const canaries: Canary[] = [];
      const open = async (host: string): Promise<Canary | string> => {
        const c = await Canary.open(host);
        if (typeof c !== 'string') canaries.push(c);
        return c;
      };
      const send = async (headers: Record<string, string>, what: string): Promise<NegativeAnswer> => {
        const answer = await httpStatus(
          { baseUrl: url, headers, describe: `router ${url}` },
          { method: 'GET', path: '/v1/health' },
          { ...DEFAULT_LIMITS, deadlineMs: deps.plan.probeTimeoutMs },
          `router ${what}`,
        );
        await new Promise((resolve) => setTimeout(resolve, LATE_DIAL_MS));
        return answer;
      };
      try {
        // Authorization: a Sandbox addressed by name, as clients do, with no credentials.
        const port = deps.plan.templates.find((t) => t.namespace === sb.namespace)?.ports.rest ?? 8080;
        const auth = await send(
          { 'X-Sandbox-ID': sb.name, 'X-Sandbox-Namespace': sb.namespace, 'X-Sandbox-Port': String(port) },
          'request without credentials',
        );
        const ack = router.acknowledgeUnauthenticated === true;
        const a = judgeAuthorization(auth, ack);
        const declared = router.authorizationMode
          ? `declared authorizationMode ${router.authorizationMode}${router.authorizationMode === 'allow-all' ? (ack ? ' (acknowledged)' : ' (not acknowledged)') : ''}`
          : 'no authorization mode declared';
        const got = 'failure' in auth ? auth.failure.message : `answered ${auth.code}`;
        const authText: Record<string, string> = {
          RouterRequiresCredentials: `a request for ${named} without credentials was refused (${got}); ${declared}`,
          RouterUnauthenticated: `the router authenticates nobody: a request for ${named} without credentials passed its authorization (${got}); ${declared}: anyone who reaches the router can use every sandbox`,
          RouterUnauthenticatedAcknowledged: `the router authenticates nobody: a request for ${named} without credentials passed its authorization (${got}); the environment acknowledged allow-all (acknowledgeUnauthenticated)`,
          RouterAuthorizationUnknown: `a request for ${named} without credentials ${got}, which does not tell whether the router authenticates callers; ${declared}`,
        };
        f.add('verified', a.verdict, subject, a.reason, authText[a.reason]!, {
          field: 'request without credentials',
          value: 'failure' in auth ? 'no answer' : String(auth.code),
        });

        const canary = router.canaryHost ? await open(router.canaryHost) : undefined;
        const loopback =
          router.canaryHost && isLoopback(router.canaryHost)
            ? router.canaryHost === '127.0.0.1' && typeof canary === 'object'
              ? canary
              : await open('127.0.0.1')
            : undefined;
        const owned = (c: Canary | string | undefined): Canary | undefined => (typeof c === 'object' ? c : undefined);
        const noTarget = (c: Canary | string | undefined, fallback: string): string =>
          typeof c === 'string' ? `the verifier could not listen there (${c})` : fallback;
        const cases: Array<{
          kind: NegativeKind;
          field: string;
          headers: Record<string, string>;
          target: Canary | undefined;
          why?: string;
        }> = [];
        const base = { 'X-Sandbox-Namespace': sb.namespace };
        const target = owned(canary);
        cases.push({
          kind: 'invalid-id',
          field: `(a) X-Sandbox-ID ${INVALID_SANDBOX_ID}`,
          headers: {
            ...base,
            'X-Sandbox-ID': INVALID_SANDBOX_ID,
            ...(target ? { 'X-Sandbox-Pod-IP': target.host, 'X-Sandbox-Port': String(target.port) } : {}),
          },
          target,
          ...(target ? {} : { why: noTarget(canary, 'no canary host (--router-canary-host) to point the request at') }),
        });
        if (target)
          cases.push({
            kind: 'foreign-pod-ip',
            field: `(b) X-Sandbox-ID ${sb.name} + X-Sandbox-Pod-IP ${target.host}`,
            headers: {
              ...base,
              'X-Sandbox-ID': sb.name,
              'X-Sandbox-Pod-IP': target.host,
              'X-Sandbox-Port': String(target.port),
            },
            target,
          });
        const lo = owned(loopback);
        cases.push({
          kind: 'loopback-pod-ip',
          field: '(c) X-Sandbox-Pod-IP 127.0.0.1',
          headers: {
            ...base,
            'X-Sandbox-ID': sb.name,
            'X-Sandbox-Pod-IP': '127.0.0.1',
            'X-Sandbox-Port': String(lo ? lo.port : UNOWNED_LOOPBACK_PORT),
          },
          target: lo,
          ...(lo
            ? {}
            : {
                why: noTarget(
                  loopback,
                  `the verifier does not share the router's loopback (canary host ${router.canaryHost ?? 'unset'} is not 127.0.0.0/8); port ${UNOWNED_LOOPBACK_PORT} named instead`,
                ),
              }),
        });
        for (const c of cases) {
          ctx.note(`negative probe ${c.field}`);
          const before = c.target?.connections ?? 0;
          const answer = await send(c.headers, c.field);
          const dialled = (c.target?.connections ?? 0) - before;
          const j = judgeNegative(answer, c.target !== undefined, dialled);
          const at = c.target
            ? `the verifier's listener ${c.target.host}:${c.target.port}`
            : 'no listener of the verifier';
          const got = 'failure' in answer ? answer.failure.message : `answered ${answer.code}`;
          const text: Record<string, string> = {
            RouterRefusedNegative: `${c.field}: refused (${got}) and ${at} saw no connection`,
            RouterDialedCanary: `${c.field}: the router connected to ${at} (${dialled} connection(s), request "${c.target?.request ?? '?'}"; it ${got}): it forwards what it should refuse`,
            RouterAcceptedNegative: `${c.field}: not refused: the router ${got} (a 2xx or 5xx means it passed validation and tried the upstream)`,
            RouterNoConnectionUnproven: `${c.field}: refused (${got}), but that no upstream connection was made is unproven: ${c.why ?? at}`,
            RouterNegativeUnanswered: `${c.field}: no usable answer (${got}); neither refusal nor forwarding is shown`,
          };
          f.add('verified', j.verdict, subject, j.reason, text[j.reason]!, {
            field: c.field,
            value:
              dialled > 0
                ? `dialled ${c.target!.host}:${c.target!.port}`
                : 'failure' in answer
                  ? 'no answer'
                  : String(answer.code),
          });
        }
        if (!target)
          f.add(
            'verified',
            'unknown',
            subject,
            'RouterNoConnectionUnproven',
            `(b) a pod-IP header naming an address not the sandbox's: not sent, ${noTarget(canary, 'no canary host (--router-canary-host) of the verifier to name')}`,
            { field: '(b) X-Sandbox-Pod-IP <not the sandbox>' },
          );
      } finally {
        await Promise.all(canaries.map((c) => c.close()));
      }
      return f.list;
    },
  };
}
