/**
 * TCP relays between the host's loopback and the real node's network namespace, over unix sockets (a unix socket
 * path is visible from every network namespace, a TCP port only in its own). No IP traffic crosses namespaces, so
 * nothing dials an address outside 127.0.0.0/8 or the node namespace the run made.
 *
 *   node --import tsx test-cluster/relay.ts SPEC...
 *     tcp:HOST:PORT=unix:PATH        accept TCP on HOST:PORT, pipe each connection to the unix socket PATH
 *     unix:PATH=tcp:HOST:PORT        accept on the unix socket PATH, pipe each connection to HOST:PORT
 *     connect:PATH=CIDR[,CIDR...]    an HTTP CONNECT proxy on the unix socket PATH (the kube-apiserver's `cluster`
 *                                    egress: kubelet exec/port-forward/logs); dials only targets inside the CIDRs
 *   env RELAY_READY=FILE: written once every listener is up.
 */
import { writeFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';

type Endpoint = { kind: 'tcp'; host: string; port: number } | { kind: 'unix'; path: string };

function endpoint(s: string): Endpoint {
  if (s.startsWith('unix:')) return { kind: 'unix', path: s.slice(5) };
  const m = /^tcp:(.+):(\d+)$/.exec(s);
  if (!m) throw new Error(`relay: '${s}' is neither tcp:HOST:PORT nor unix:PATH`);
  return { kind: 'tcp', host: m[1]!, port: Number(m[2]) };
}

function dial(to: Endpoint): net.Socket {
  return to.kind === 'unix' ? net.connect(to.path) : net.connect(to.port, to.host);
}

/** Pipes both ways; either side's error or close ends the other. */
function pipe(a: net.Socket, b: net.Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

function listen(server: net.Server, at: Endpoint): Promise<void> {
  if (at.kind === 'unix') rmSync(at.path, { force: true });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (at.kind === 'unix') server.listen(at.path, resolve);
    else server.listen(at.port, at.host, resolve);
  });
}

function ipv4(s: string): number | undefined {
  const p = s.split('.');
  if (p.length !== 4 || p.some((x) => !/^\d{1,3}$/.test(x) || Number(x) > 255)) return undefined;
  return p.reduce((acc, x) => acc * 256 + Number(x), 0);
}

function inCidrs(host: string, cidrs: readonly string[]): boolean {
  const ip = ipv4(host);
  if (ip === undefined) return false;
  return cidrs.some((c) => {
    const [base, bits] = c.split('/');
    const b = ipv4(base ?? '');
    const n = Number(bits);
    if (b === undefined || !(n >= 0 && n <= 32)) return false;
    const size = 2 ** (32 - n);
    return Math.floor(ip / size) === Math.floor(b / size);
  });
}

async function main(): Promise<void> {
  const specs = process.argv.slice(2);
  if (specs.length === 0) throw new Error('relay: no SPEC given (see the header of test-cluster/relay.ts)');
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    if (eq < 0) throw new Error(`relay: '${spec}' has no '='`);
    const left = spec.slice(0, eq);
    const right = spec.slice(eq + 1);
    if (left.startsWith('connect:')) {
      const cidrs = right.split(',').filter((c) => c.length > 0);
      const server = http.createServer((_req, res) => res.writeHead(405).end());
      server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
        const m = /^(.+):(\d+)$/.exec(req.url ?? '');
        if (!m || !inCidrs(m[1]!, cidrs)) {
          client.end(`HTTP/1.1 403 Forbidden\r\n\r\ntarget ${req.url ?? ''} is outside ${cidrs.join(',')}\n`);
          return;
        }
        const upstream = net.connect(Number(m[2]), m[1]!, () => {
          client.write('HTTP/1.1 200 Connection established\r\n\r\n');
          if (head.length > 0) upstream.write(head);
          pipe(client, upstream);
        });
        upstream.once('error', (e) => client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\n${e.message}\n`));
      });
      await listen(server as unknown as net.Server, { kind: 'unix', path: left.slice(8) });
      continue;
    }
    const from = endpoint(left);
    const to = endpoint(right);
    await listen(
      net.createServer((c) => pipe(c, dial(to))),
      from,
    );
  }
  const ready = process.env['RELAY_READY'];
  if (ready) writeFileSync(ready, `${process.pid}\n`);
  const stop = (): void => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
