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
      forward.portForward(namespace, pod, [port], socket, null, socket).then(
        (ws) => {
          // client-node does not tie the two ends together: close each when the other closes.
          const w = typeof ws === 'function' ? ws() : ws;
          // The caller may have given up (its deadline) while the upgrade was pending: close the late WebSocket.
          if (socket.destroyed) {
            w?.close();
            return;
          }
          w?.on('close', () => socket.end());
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
