/** Helpers for tests against the running test cluster: clients, a per-test namespace, condition waits, router requests. */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeConfigFrom, readClusterInfo, RUN_DIR, waitFor, type ClusterInfo } from '../../test-cluster/kube.js';
import { MIRROR } from '../mirror.js';

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

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Variables that shape the cluster up.sh starts. A test file's second cluster must not inherit them from the process
 * that started jest: scripts/gen-compat-matrix.ts sets a pod net and a release for the global cluster, and a second
 * cluster with the same pod net hands out the same pod IPs, so a runtime probe there can be answered by the other
 * cluster's sandboxd.
 */
export const CLUSTER_SHAPE_VARS = [
  'AGENTPLANE_TEST_CLUSTER_POD_NET',
  'AGENTPLANE_TEST_CLUSTER_RELEASE',
  'AGENTPLANE_TEST_CLUSTER_REAL_NODE',
  'AGENTPLANE_TEST_CLUSTER_WORKLOADS',
  'AGENTPLANE_TEST_CLUSTER_NODES',
  'AGENTPLANE_TEST_CLUSTER_NODE_LABELS',
  'AGENTPLANE_TEST_CLUSTER_NODE_TAINTS',
  'AGENTPLANE_TEST_CLUSTER_KEEP',
  'AGENTPLANE_TEST_CLUSTER_NODE_FAULT',
  'AGENTPLANE_TEST_CLUSTER_NODE_CHECK',
] as const;

/** Pod nets (`127.<net>.0.0/16`) up.sh accepts; a derived one falls in 120..219, clear of the fixed ones tests pick. */
const DERIVED_POD_NETS = { first: 120, count: 100 } as const;

/** The global cluster's pod net: the inherited variable, else its cluster.json; undefined when neither is there. */
export function globalPodNet(): number | undefined {
  const inherited = Number(process.env.AGENTPLANE_TEST_CLUSTER_POD_NET);
  if (Number.isInteger(inherited) && inherited > 0) return inherited;
  try {
    return existsSync(path.join(RUN_DIR, 'cluster.json')) ? readClusterInfo(RUN_DIR).podNet : undefined;
  } catch {
    return undefined;
  }
}

export interface SecondClusterOptions {
  /** Release up.sh installs (`--release`); passed as the variable too, never inherited. */
  readonly release?: string;
  /** Pod net 1..254; default: derived from the run dir (120..219). Never the global cluster's. */
  readonly podNet?: number;
  /** Start the real node beside the kwok nodes. @default false */
  readonly realNode?: boolean;
  /** More variables for up.sh and the processes the test starts. */
  readonly extra?: Record<string, string>;
}

/**
 * The environment of a second cluster in `runDir`: the parent's environment without the variables that shape a
 * cluster (CLUSTER_SHAPE_VARS), with its own run dir, real-node setting, release and an explicit pod net. The pod net is
 * `options.podNet`, or one derived from the run dir; when it equals the global cluster's, the next one is taken, so the
 * two clusters never share pod IPs.
 */
export function secondClusterEnv(runDir: string, options: SecondClusterOptions = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CLUSTER_SHAPE_VARS) delete env[name];
  let podNet =
    options.podNet ??
    DERIVED_POD_NETS.first + (createHash('sha256').update(runDir).digest().readUInt32BE(0) % DERIVED_POD_NETS.count);
  if (!Number.isInteger(podNet) || podNet < 1 || podNet > 254) throw new Error(`pod net must be 1..254, got ${podNet}`);
  if (podNet === globalPodNet()) podNet = podNet === 254 ? 1 : podNet + 1;
  return {
    ...env,
    AGENTPLANE_TEST_CLUSTER_RUN: runDir,
    AGENTPLANE_TEST_CLUSTER_POD_NET: String(podNet),
    AGENTPLANE_TEST_CLUSTER_REAL_NODE: options.realNode ? '1' : '0',
    ...(options.release ? { AGENTPLANE_TEST_CLUSTER_RELEASE: options.release } : {}),
    ...options.extra,
  };
}

/**
 * A second cluster of a test file's own: run dir `test-cluster/.run-<name>-<pid>` (per jest worker), environment from
 * secondClusterEnv. `start(args)` runs up.sh with `args` (plus `--release` when the options name one) and connects;
 * `stop()` runs down.sh when the run dir exists.
 */
export function secondCluster(
  name: string,
  options: SecondClusterOptions = {},
): { runDir: string; env: NodeJS.ProcessEnv; start: (args?: string[]) => Cluster; stop: () => void } {
  const runDir = path.join(REPO, 'test-cluster', `.run-${name}-${process.pid}`);
  const env = secondClusterEnv(runDir, options);
  return {
    runDir,
    env,
    start: (args = []) => {
      const up = spawnSync(
        'bash',
        ['test-cluster/scripts/up.sh', ...(options.release ? ['--release', options.release] : []), ...args],
        { cwd: REPO, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      if (up.status !== 0)
        throw new Error(
          `starting the ${name} cluster failed (up.sh ${args.join(' ')} exit ${up.status}); logs in ${runDir}/logs`,
        );
      if (up.stdout.trim() !== path.join(runDir, 'kubeconfig'))
        throw new Error(`up.sh printed ${up.stdout.trim()}, not ${path.join(runDir, 'kubeconfig')}`);
      return connect(runDir);
    },
    stop: () => {
      if (existsSync(runDir))
        spawnSync('bash', ['test-cluster/scripts/down.sh'], {
          cwd: REPO,
          env,
          stdio: ['ignore', 'inherit', 'inherit'],
        });
    },
  };
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
const PROCESS_PROTO = path.join(MIRROR, 'v0.5.6', 'sandboxd-spec', 'process', 'v1', 'process.proto');

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
