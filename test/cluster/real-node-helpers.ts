/** Helpers for cluster tests that need the real node (kubelet + containerd, test-cluster/scripts/node.sh). */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { readClusterInfo, type RealNodeInfo } from '../../test-cluster/kube.js';
import { connect, waitFor, type Cluster } from './helpers.js';

/** The sandboxd image the node has imported (test-cluster/scripts/images.sh): sandboxd v0.5.6 + bash + busybox. */
export const NODE_TOOLS_IMAGE = 'registry.local/agentplane-test/sandboxd:v0.5.6';

/**
 * `describe` for tests that need the real node: they run when the cluster jest's global set-up uses has one, and are
 * reported as skipped, saying so, when it runs kwok nodes only (`AGENTPLANE_TEST_CLUSTER_REAL_NODE=0` / `--kwok-only`).
 */
export function describeRealNode(name: string, fn: () => void): void {
  if (readClusterInfo().realNode) describe(name, fn);
  else describe.skip(`${name} (skipped: the test cluster runs kwok nodes only)`, fn);
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What an own real-node cluster runs beyond the default control plane. */
export interface OwnClusterOptions {
  /**
   * `up.sh --workloads`: Deployments get their pods and pods their ServiceAccount tokens (deployment, replicaset,
   * serviceaccount and root-CA publisher controllers, ServiceAccount admission), as on a full cluster.
   */
  readonly workloads?: boolean;
}

/**
 * A real-node-only cluster of a test file's own (`up.sh --real-node-only`, run dir `test-cluster/.run-<name>-<pid>`),
 * for tests that change the node (stop kube-router, add RuntimeClasses) or need it untainted. `env` is what its
 * scripts and CLI runs get; `start()` brings it up and connects, `stop()` removes it.
 */
export function ownRealNodeCluster(
  name: string,
  options: OwnClusterOptions = {},
): {
  runDir: string;
  env: NodeJS.ProcessEnv;
  start: () => Cluster;
  stop: () => void;
} {
  const runDir = path.join(REPO, 'test-cluster', `.run-${name}-${process.pid}`);
  const env = {
    ...process.env,
    AGENTPLANE_TEST_CLUSTER_RUN: runDir,
    AGENTPLANE_MIRROR: process.env.AGENTPLANE_MIRROR ?? path.resolve(REPO, '../shared/agent-sandbox/releases'),
    ...(options.workloads ? { AGENTPLANE_TEST_CLUSTER_WORKLOADS: '1' } : {}),
  };
  return {
    runDir,
    env,
    start: () => {
      const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--real-node-only'], {
        cwd: REPO,
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      if (up.status !== 0) throw new Error(`up.sh --real-node-only failed (exit ${up.status}); logs in ${runDir}/logs`);
      return connect(runDir);
    },
    stop: () => {
      spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: REPO, env, stdio: 'ignore' });
    },
  };
}

/** The real node of the cluster. @throws when the cluster was started with --kwok-only. */
export function realNode(c: Cluster): RealNodeInfo {
  if (!c.info.realNode)
    throw new Error(
      'this test needs the real node; the cluster was started kwok-only (npm run cluster:down, then npm run cluster:up without --kwok-only)',
    );
  return c.info.realNode;
}

/** nodeSelector + toleration that put a pod on the real node (and only there). */
export function onRealNode(node: RealNodeInfo): {
  nodeSelector: Record<string, string>;
  tolerations: k8s.V1Toleration[];
} {
  const nodeSelector = { 'kubernetes.io/hostname': node.name };
  if (node.taint === null) return { nodeSelector, tolerations: [] };
  const [kv, effect] = node.taint.split(':');
  const [key, value] = kv!.split('=');
  return { nodeSelector, tolerations: [{ key: key!, operator: 'Equal', value: value!, effect: effect! }] };
}

export interface ExecResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs argv in a container through the API server's exec (API server -> kubelet -> containerd). 30 s limit. */
export async function kubeExec(
  c: Cluster,
  namespace: string,
  pod: string,
  container: string,
  argv: string[],
): Promise<ExecResult> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer, _e, cb) {
        append(chunk.toString('utf8'));
        cb();
      },
    });
  return new Promise<ExecResult>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`exec ${argv.join(' ')} in ${namespace}/${pod} timed out`)),
      30_000,
    );
    new k8s.Exec(c.kc)
      .exec(
        namespace,
        pod,
        container,
        argv,
        sink((s) => (stdout += s)),
        sink((s) => (stderr += s)),
        null,
        false,
        (status: k8s.V1Status) => {
          clearTimeout(timer);
          const code =
            status.status === 'Success'
              ? 0
              : Number(status.details?.causes?.find((x) => x.reason === 'ExitCode')?.message ?? -1);
          // the status callback can come before the last output frame; let the socket drain
          setTimeout(() => resolve({ exitCode: code, stdout, stderr }), 100);
        },
      )
      .catch((e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      });
  });
}

/** Waits until pod `name` is Running with every container ready, or fails with its phase and container states. */
export async function waitRunning(c: Cluster, namespace: string, name: string, timeoutMs = 90_000): Promise<k8s.V1Pod> {
  let last: k8s.V1Pod | undefined;
  try {
    await waitFor(
      `pod ${namespace}/${name} Running`,
      timeoutMs,
      async () => {
        last = await c.core.readNamespacedPod({ namespace, name });
        return last.status?.phase === 'Running' && (last.status.containerStatuses ?? []).every((s) => s.ready)
          ? true
          : undefined;
      },
      500,
    );
  } catch (e) {
    const states = JSON.stringify(
      last?.status?.containerStatuses?.map((s) => s.state) ?? last?.status?.conditions ?? null,
    );
    throw new Error(`${e instanceof Error ? e.message : String(e)}; phase ${last?.status?.phase}, ${states}`, {
      cause: e,
    });
  }
  return last!;
}
