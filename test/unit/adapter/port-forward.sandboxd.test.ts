/**
 * The port-forward transport (client-node 1.4 `PortForward`) carrying sandboxd REST and gRPC to the REAL sandboxd binary.
 *
 * Stand-in, said plainly: the test cluster has no kubelet (kwok), so the API server cannot serve
 * `pods/<name>/portforward` there (and it would resolve the kwok node's hostname through the machine's resolver, off loopback).
 * This test puts a small WebSocket endpoint on 127.0.0.1 in the API server's place. It speaks the port-forward channel
 * protocol client-node uses (`v4.channel.k8s.io`: per port a data channel 0 and an error channel 1, each opened by a frame
 * carrying the port number as uint16 little-endian, then `[channel byte][payload]` frames) and pipes channel 0 to the
 * real sandboxd. Everything above the WebSocket — client-node's PortForward, our loopback listener, fetch and grpc-js — is real.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { SandboxdClient } from '../../../src/adapter/runtime/sandboxd.js';
import { PortForwardTransport } from '../../../src/adapter/transports/port-forward.js';
import { startSandboxd, type SandboxdProcess } from './sandboxd-process.js';

let sd: SandboxdProcess;
let server: http.Server;
let apiPort: number;
const seen: Array<{ path: string; auth: string; protocol: string }> = [];

beforeAll(async () => {
  sd = await startSandboxd();
  const podPorts: Record<string, number> = { '8080': sd.restPort, '9090': sd.grpcPort };
  server = http.createServer((_req, res) => {
    res.writeHead(404);
    res.end();
  });
  const wss = new WebSocketServer({
    server,
    handleProtocols: (protocols) => (protocols.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false),
  });
  wss.on('connection', (ws: WebSocket, req) => {
    seen.push({ path: req.url ?? '', auth: String(req.headers.authorization ?? ''), protocol: ws.protocol });
    const url = new URL(req.url ?? '', 'http://x');
    const port = url.searchParams.get('ports') ?? '';
    const target = podPorts[port];
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(Number(port));
    ws.send(Buffer.concat([Buffer.from([0]), portBytes]));
    ws.send(Buffer.concat([Buffer.from([1]), portBytes]));
    if (!target) {
      ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(`port ${port} not exposed`)]));
      ws.close();
      return;
    }
    const upstream = net.connect(target, '127.0.0.1');
    upstream.on('data', (d) => ws.send(Buffer.concat([Buffer.from([0]), d])));
    upstream.on('close', () => ws.close());
    upstream.on('error', () => ws.close());
    ws.on('message', (m: Buffer) => {
      if (m[0] === 0) upstream.write(m.subarray(1));
    });
    ws.on('close', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  apiPort = (server.address() as net.AddressInfo).port;
}, 20_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await sd?.stop();
});

function kubeconfig(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agentplane-pf-'));
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'stand-in', cluster: { server: `http://127.0.0.1:${apiPort}`, 'insecure-skip-tls-verify': true } },
      ],
      users: [{ name: 'u', user: { token: 'pf-token' } }],
      contexts: [{ name: 'ctx', context: { cluster: 'stand-in', user: 'u' } }],
      'current-context': 'ctx',
    }),
  );
  return file;
}

test('REST and gRPC to a loopback-only sandboxd through pods/portforward, one WebSocket per connection', async () => {
  const transport = new PortForwardTransport(KubeClient.connect({ kubeconfig: kubeconfig() }));
  const client = new SandboxdClient(transport, { namespace: 'sbx', sandboxName: 's1', podName: 's1-pod' });
  try {
    expect(await client.health(5000)).toMatchObject({ kind: 'ok', value: { status: 'ok' } });
    const nonce = randomUUID();
    expect(await client.execute(['echo', nonce], { deadlineMs: 5000 })).toMatchObject({
      kind: 'ok',
      value: { exitCode: 0, stdout: `${nonce}\n` },
    });
    const streamed = await client.start(['sh', '-c', 'echo a; echo b >&2; exit 2'], { deadlineMs: 5000 });
    expect(streamed.kind === 'ok' && (await streamed.value.done)).toMatchObject({
      kind: 'ok',
      value: { exitCode: 2, stdout: 'a\n', stderr: 'b\n' },
    });
    expect(seen.map((s) => s.path)).toEqual(
      expect.arrayContaining([
        '/api/v1/namespaces/sbx/pods/s1-pod/portforward?ports=8080',
        '/api/v1/namespaces/sbx/pods/s1-pod/portforward?ports=9090',
      ]),
    );
    expect(new Set(seen.map((s) => s.auth))).toEqual(new Set(['Bearer pf-token']));
    expect(seen[0]!.protocol).toBe('v4.channel.k8s.io');
  } finally {
    client.close();
    await transport.close();
  }
});

test('a port the pod does not expose fails fast instead of hanging', async () => {
  const transport = new PortForwardTransport(KubeClient.connect({ kubeconfig: kubeconfig() }));
  const client = new SandboxdClient(transport, { namespace: 'sbx', sandboxName: 's1' }, { ports: { rest: 7777 } });
  try {
    const started = Date.now();
    const r = await client.health(3000);
    expect(r.kind).toBe('failed');
    expect(Date.now() - started).toBeLessThan(3000);
  } finally {
    await transport.close();
  }
});
