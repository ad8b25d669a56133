/** Helpers for tests against the running test cluster: clients, a per-test namespace, condition waits, router requests. */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as k8s from '@kubernetes/client-node';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeConfigFrom, readClusterInfo, waitFor, type ClusterInfo } from '../../test-cluster/kube.js';

export { waitFor };

export interface Cluster {
  readonly info: ClusterInfo;
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly custom: k8s.CustomObjectsApi;
}

/** Clients for the cluster recorded in `runDir` (default: the one jest's global set-up started). */
export function connect(runDir?: string): Cluster {
  const info = readClusterInfo(runDir);
  const kc = kubeConfigFrom(info.kubeconfig);
  return { info, kc, core: kc.makeApiClient(k8s.CoreV1Api), custom: kc.makeApiClient(k8s.CustomObjectsApi) };
}

/** Creates namespace `<prefix>-<random>` and returns its name. */
export async function freshNamespace(c: Cluster, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await c.core.createNamespace({ body: { metadata: { name, labels: { 'agentplane.io/test': prefix } } } });
  return name;
}

/** Status `Ready` condition of a custom object, or undefined. */
export function readyCondition(obj: unknown): { status: string; reason?: string } | undefined {
  const conds =
    (obj as { status?: { conditions?: { type: string; status: string; reason?: string }[] } }).status?.conditions ?? [];
  return conds.find((c) => c.type === 'Ready');
}

/** true when the API answers 404 for `get()`. Other errors propagate. */
export async function isGone(get: () => Promise<unknown>): Promise<boolean> {
  try {
    await get();
    return false;
  } catch (err) {
    if (err instanceof k8s.ApiException && err.code === 404) return true;
    throw err;
  }
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

/** GET `http://<host>:<port><path>` (host default 127.0.0.1) with headers; resolves with status and body, rejects on transport error or timeout. */
export function httpGet(
  port: number,
  path: string,
  headers: Record<string, string>,
  timeoutMs = 10_000,
  host = '127.0.0.1',
): Promise<HttpAnswer> {
  if (!host.startsWith('127.')) throw new Error(`refusing to dial ${host}: the test cluster stays in 127.0.0.0/8`);
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path, headers, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${host}:${port}${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/** A pod template carrying a sandboxd container on sandboxd's default ports (8080 REST, 9090 gRPC). */
export function sandboxdPodTemplate(annotations: Record<string, string> = {}): Record<string, unknown> {
  return {
    metadata: { annotations, labels: { app: 'smoke' } },
    spec: {
      containers: [
        {
          name: 'sandboxd',
          image: 'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main',
          ports: [
            { containerPort: 8080, name: 'rest' },
            { containerPort: 9090, name: 'grpc' },
          ],
        },
      ],
    },
  };
}

/** sandboxd's ProcessService proto, from the release mirror (`packages/sandboxd/spec/process/v1/process.proto@v0.5.6`). */
const PROCESS_PROTO = path.join(
  process.env.AGENTPLANE_MIRROR ??
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/agent-sandbox/releases'),
  'v0.5.6',
  'sandboxd-spec',
  'process',
  'v1',
  'process.proto',
);

export interface ExecuteResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Calls `process.v1.ProcessService/Execute` on `<host>:<port>` (plain-text gRPC) with argv `command`; 10 s deadline. */
export async function grpcExecute(host: string, port: number, command: string[]): Promise<ExecuteResult> {
  const def = await protoLoader.load(PROCESS_PROTO, { keepCase: false, longs: Number, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    process: { v1: { ProcessService: grpc.ServiceClientConstructor } };
  };
  const client = new pkg.process.v1.ProcessService(`${host}:${port}`, grpc.credentials.createInsecure());
  try {
    return await new Promise<ExecuteResult>((resolve, reject) => {
      client['execute']!(
        { config: { command } },
        { deadline: Date.now() + 10_000 },
        (err: grpc.ServiceError | null, res: { exitCode: number; stdout: Buffer; stderr: Buffer }) => {
          if (err) reject(err);
          else
            resolve({
              exitCode: res.exitCode,
              stdout: res.stdout.toString('utf8'),
              stderr: res.stderr.toString('utf8'),
            });
        },
      );
    });
  } finally {
    client.close();
  }
}
