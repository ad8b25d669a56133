/**
 * The `port-forward` transport: a loopback listener per (pod, port) whose every connection is piped through the API
 * server's pod port-forward (client-node `PortForward`, one WebSocket per connection). This is the production path to
 * sandboxd up to v0.5.6, whose listeners bind 127.0.0.1 inside the pod (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`);
 * it reaches a v1.0.x sandboxd on `0.0.0.0` too (`packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`). Needs
 * `get` and `create` on `pods/portforward` in the session's namespace (the WebSocket upgrade is a GET, and Kubernetes
 * 1.35+ checks `create` too), nothing broader; never `pods/exec`.
 */
import * as k8s from '@kubernetes/client-node';
import net from 'node:net';
import { Writable } from 'node:stream';
import type { KubeClient } from '../kubernetes/client.js';
import { classifyKubeError } from '../kubernetes/errors.js';
import type { AdapterError, Result } from '../types.js';
import { hostPort, type HttpEndpoint, type RuntimeTarget, type Transport } from './types.js';

export class PortForwardTransport implements Transport {
  readonly kind = 'port-forward' as const;
  private readonly listeners = new Map<string, Promise<net.Server>>();
  private readonly sockets = new Set<net.Socket>();
  /**
   * The API server's refusal of the last forwarded connection, per `ns/pod:port` (the HTTP/gRPC client through the
   * listener only sees a reset); the next {@link http}/{@link grpc} for that port returns it once instead of an endpoint.
   */
  private readonly refusals = new Map<string, AdapterError>();
  /**
   * What the kubelet wrote on a forwarded connection's error channel (e.g. `connection refused` when nothing listens on
   * the port), per `ns/pod`, with when it arrived: the HTTP/gRPC client only saw its connection end, so the caller asks
   * {@link streamFailure} for the reason.
   */
  private readonly streamErrors = new Map<string, { at: number; error: AdapterError }>();

  constructor(private readonly client: KubeClient) {}

  async http(target: RuntimeTarget, port: number): Promise<Result<HttpEndpoint>> {
    const local = await this.local(target, port);
    if (local.kind !== 'ok') return local;
    const baseUrl = `http://${local.value}`;
    return {
      kind: 'ok',
      value: {
        baseUrl,
        headers: {},
        describe: `port-forward ${baseUrl} -> ${target.namespace}/${this.pod(target)}:${port}`,
      },
    };
  }

  async grpc(target: RuntimeTarget, port: number): Promise<Result<string>> {
    return this.local(target, port);
  }

  /**
   * The kubelet's error-channel text of a connection to `target` that ended at or after `since` (epoch ms), as a
   * classified failure, or undefined when none arrived. Never part of the data stream.
   */
  streamFailure(target: RuntimeTarget, since: number): AdapterError | undefined {
    const e = this.streamErrors.get(`${target.namespace}/${this.pod(target)}`);
    return e && e.at >= since ? e.error : undefined;
  }

  /** Stops the listeners and cuts forwarded connections still open (e.g. HTTP keep-alive). */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const servers = await Promise.all([...this.listeners.values()].map((p) => p.catch(() => undefined)));
    this.listeners.clear();
    await Promise.all(servers.map((s) => (s ? new Promise<void>((resolve) => s.close(() => resolve())) : undefined)));
  }

  private pod(target: RuntimeTarget): string {
    return target.podName ?? target.sandboxName;
  }

  private async local(target: RuntimeTarget, port: number): Promise<Result<string>> {
    const pod = this.pod(target);
    const key = `${target.namespace}/${pod}:${port}`;
    const refused = this.refusals.get(key);
    if (refused) {
      this.refusals.delete(key);
      return { kind: 'failed', error: refused };
    }
    let server = this.listeners.get(key);
    if (!server) {
      server = this.listen(target.namespace, pod, port, key);
      this.listeners.set(key, server);
    }
    try {
      const address = (await server).address() as net.AddressInfo;
      return { kind: 'ok', value: hostPort('127.0.0.1', address.port) };
    } catch (err) {
      this.listeners.delete(key);
      return {
        kind: 'failed',
        error: { category: 'internal', message: `cannot open a loopback listener for ${key}: ${String(err)}` },
      };
    }
  }

  private listen(namespace: string, pod: string, port: number, key: string): Promise<net.Server> {
    const forward = new k8s.PortForward(this.client.kc);
    const server = net.createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      // client-node writes what the pod sends into this socket even after our side has ended it (the caller gave up,
      // or the pod went away mid-stream): that write errors, and an unhandled socket error would crash the process.
      socket.on('error', () => socket.destroy());
      // The error channel (odd stream) goes to its own sink, never into the data socket: its text is the kubelet's reason.
      // Recorded as it arrives: the WebSocket's close can come long after the client saw its connection end.
      const errText: Buffer[] = [];
      const recordError = (): void => {
        const text = Buffer.concat(errText).toString('utf8').slice(0, ERROR_TEXT_BYTES).trim();
        if (text)
          this.streamErrors.set(`${namespace}/${pod}`, { at: Date.now(), error: errorChannel(key, port, text) });
      };
      const errSink = new Writable({
        write(chunk: Buffer, _enc, done) {
          if (errText.reduce((n, b) => n + b.length, 0) < ERROR_TEXT_BYTES) errText.push(chunk);
          recordError();
          done();
        },
      });
      forward.portForward(namespace, pod, [port], socket, errSink, socket).then(
        (ws) => {
          // client-node does not tie the two ends together: close each when the other closes.
          const w = typeof ws === 'function' ? ws() : ws;
          // The caller may have given up (its deadline) while the upgrade was pending: close the late WebSocket.
          if (socket.destroyed) {
            w?.close();
            return;
          }
          // Close: end the local side after what was already written (an answer's last bytes) is flushed.
          w?.on('close', () => {
            recordError();
            socket.end();
          });
          // A WebSocket error after the upgrade (the pod went away mid-stream) ends the local side at once too.
          // (client-node's WebSocket type names only `message`/`close`; the object is ws's EventEmitter.)
          (w as unknown as NodeJS.EventEmitter | null)?.on('error', () => {
            recordError();
            socket.destroy();
          });
          socket.on('close', () => w?.close());
        },
        (err: unknown) => {
          this.refusals.set(
            key,
            classifyKubeError(upgradeError(err), {
              verb: 'get and create',
              resource: 'pods/portforward',
              context: this.client.context,
              user: this.client.user,
            }),
          );
          socket.destroy();
        },
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
  }
}

/** Bytes of error-channel text kept per connection (the kubelet's reasons are one line). */
const ERROR_TEXT_BYTES = 1024;

/**
 * The kubelet's error-channel text as a failure: `connection refused` (nothing listens on the port in the pod) and other
 * dial failures are `unreachable`, naming the port and quoting the kubelet.
 */
export function errorChannel(key: string, port: number, text: string): AdapterError {
  const refused = /connection refused/i.test(text);
  return {
    category: 'unreachable',
    ...(refused ? { errno: 'ECONNREFUSED' } : {}),
    message: `port-forward ${key}: ${refused ? `connection refused on port ${port}` : 'the kubelet reported an error'} (kubelet: ${text})`,
    hint: refused
      ? 'nothing listens on that port inside the pod yet (runtime still starting, or another port)'
      : 'check the pod and its runtime container',
  };
}

/**
 * What client-node rejects a failed WebSocket with (ws's error event), as classifyKubeError reads it: a refused upgrade
 * (ws says `Unexpected server response: 403`) as the API server's HTTP status, a network failure as its cause.
 */
function upgradeError(err: unknown): unknown {
  const event = err as { message?: unknown; error?: unknown } | null;
  const message = typeof event?.message === 'string' ? event.message : '';
  const status = /Unexpected server response: (\d{3})/.exec(message);
  if (status) return new k8s.ApiException(Number(status[1]), message, undefined, {});
  return event?.error ?? err;
}
