/**
 * The `direct` transport: dial the pod IP (`status.podIPs` of the Sandbox). Only works where the pod network is routable
 * from the caller and the runtime listens on the pod IP; sandboxd up to v0.5.6 binds 127.0.0.1 inside its pod
 * (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`), so there sandboxd needs `port-forward`; sandboxd v1.0.x binds
 * `--listen-host` (default `0.0.0.0`, `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`) and is dialable here, subject to
 * NetworkPolicy; on the test cluster pod IPs are loopback addresses standing in for pods.
 */
import type { Result } from '../types.js';
import { hostPort, type HttpEndpoint, type RuntimeTarget, type Transport } from './types.js';

export class DirectTransport implements Transport {
  readonly kind = 'direct' as const;

  async http(target: RuntimeTarget, port: number): Promise<Result<HttpEndpoint>> {
    const ip = this.ip(target);
    if (ip.kind !== 'ok') return ip;
    const baseUrl = `http://${hostPort(ip.value, port)}`;
    return {
      kind: 'ok',
      value: { baseUrl, headers: {}, describe: `direct ${baseUrl} (${target.namespace}/${target.sandboxName})` },
    };
  }

  async grpc(target: RuntimeTarget, port: number): Promise<Result<string>> {
    const ip = this.ip(target);
    return ip.kind === 'ok' ? { kind: 'ok', value: hostPort(ip.value, port) } : ip;
  }

  async close(): Promise<void> {}

  private ip(target: RuntimeTarget): Result<string> {
    if (!target.podIP)
      return {
        kind: 'rejected',
        reason: 'NoPodIP',
        message: `Sandbox ${target.namespace}/${target.sandboxName} has no pod IP (not Ready): the direct transport needs one`,
      };
    return { kind: 'ok', value: target.podIP };
  }
}
