/**
 * Where the router's negative probes (./router-negative.ts, case router-podip-ssrf) can prove that nothing was dialled.
 * The verifier's listener (the canary) counts the connections made to it. It proves something only where the router
 * can reach it: on loopback when the verifier shares the router's network namespace, or at a pod IP (the VerifierJob's)
 * on a port the router's egress admits, which a control request naming it shows live. `X-Sandbox-Pod-IP: 127.0.0.1` from
 * another pod is judged against the router pod's own health listener, which its loopback reaches.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { StatusOutcome } from '../../adapter/runtime/http.js';
import type { Verdict } from '../evidence.js';
import type { EvidenceReason } from '../reasons.js';

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

  /**
   * Opens a listener on `host`, on the first of `ports` it can bind, else on an ephemeral port; the error text when it
   * cannot listen on `host` at all.
   */
  static async open(host: string, ports: readonly number[] = []): Promise<Canary | string> {
    for (const port of ports) {
      const c = await Canary.listen(host, port);
      if (typeof c !== 'string') return c;
    }
    return Canary.listen(host, 0);
  }

  private static listen(host: string, port: number): Promise<Canary | string> {
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
      server.listen(port, host, () => {
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

/**
 * Judges the control request (pure): a request the router may forward, naming the canary in `X-Sandbox-Pod-IP`. A
 * connection proves the router can reach the canary; none means it cannot (egress policy, routing) or it refuses
 * pod-IP headers from this caller, so the canary proves nothing either way.
 */
export function judgeControl(dialled: number): { verdict: Verdict; reason: EvidenceReason } {
  return dialled > 0
    ? { verdict: 'proven', reason: 'RouterCanaryReached' }
    : { verdict: 'unknown', reason: 'RouterCanaryUnreachable' };
}

/**
 * The port of the router's health listener when it is bound on every address (`--health-probe-bind-address=:8081`,
 * `sandbox-router/config/flags.go@v0.5.6`), so the pod's own loopback reaches it; undefined when the flag is absent or
 * binds one address.
 */
export function healthListenerPort(args: readonly string[]): number | undefined {
  for (const a of args) {
    const m = /^--health-probe-bind-address=(?:0\.0\.0\.0|\[::\])?:(\d{1,5})$/.exec(a);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** Whether the witness answered as a live listener does: a 2xx (the router's `/readyz`). */
export function witnessAnswered(answer: StatusOutcome): boolean {
  return !('failure' in answer) && answer.code >= 200 && answer.code < 300;
}
