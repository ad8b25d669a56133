/**
 * Small client-node helpers shared by the test-cluster scripts (install, runtime stand-in) and test/cluster.
 * Server-side apply, waiting on a condition, and reading the cluster facts up.sh writes to `.run/cluster.json`.
 */
import * as k8s from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../src/adapter/kubernetes/client.js';
import { KubeObjects } from '../src/adapter/kubernetes/objects.js';

/** Run dir of the cluster: `$AGENTPLANE_TEST_CLUSTER_RUN`, default test-cluster/.run (git-ignored). */
export const RUN_DIR = path.resolve(
  process.env.AGENTPLANE_TEST_CLUSTER_RUN ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '.run'),
);

/** What up.sh records about a running cluster (`test-cluster/.run/cluster.json`). Ports are TCP ports on 127.0.0.1. */
export interface ClusterInfo {
  /** Agent Sandbox release the cluster runs: 'v0.5.6' (default), 'v1.0.3', 'v0.4.6' or 'v0.5.0'. */
  readonly release: 'v0.5.6' | 'v1.0.3' | 'v0.4.6' | 'v0.5.0';
  /** Admin kubeconfig (token of a system:masters user). */
  readonly kubeconfig: string;
  /** Kubeconfig holding the TokenRequest token of agent-sandbox-system/agent-sandbox-controller, used by the controller. */
  readonly controllerKubeconfig: string;
  readonly runDir: string;
  readonly caFile: string;
  /** `https://127.0.0.1:<port>` */
  readonly apiServer: string;
  readonly ports: {
    readonly etcd: number;
    readonly apiserver: number;
    readonly scheduler: number;
    readonly controllerManager: number;
    readonly controllerMetrics: number;
    readonly controllerProbe: number;
    /** The controller's conversion-webhook port (v0.5.x); picked but unused on v0.4.6 and v1.0.3 (no webhook server). */
    readonly webhook: number;
    /** sandbox-router ports; null on v0.4.6 and v0.5.0 (no Go router in those releases). */
    readonly routerHttp: number | null;
    readonly routerMetrics: number | null;
    readonly routerProbe: number | null;
  };
  /** Second octet of pod IPs: node i has podCIDR 127.<podNet>.<i>.0/24. */
  readonly podNet: number;
  /** true when the runtime stand-in (sandboxd per sandbox pod) runs. */
  readonly runtimeStandin: boolean;
  /** The real node (kubelet + containerd, scripts/node.sh); null when the cluster runs kwok nodes only (`--kwok-only`). */
  readonly realNode: RealNodeInfo | null;
  readonly startedAt: string;
}

/** The real node: its Node name, network namespace, InternalIP, pod CIDR, containerd socket and the taint it registers with. */
export interface RealNodeInfo {
  readonly name: string;
  readonly netns: string;
  readonly nodeIP: string;
  readonly podCIDR: string;
  readonly containerdSocket: string;
  /** `agentplane.io/real-node=true:NoSchedule` (only pods that tolerate it run there); null with `--real-node-only`. */
  readonly taint: string | null;
}

/** Reads `<runDir>/cluster.json`. @throws Error naming the file and the command to run when no cluster is up. */
export function readClusterInfo(runDir: string = RUN_DIR): ClusterInfo {
  const file = path.join(runDir, 'cluster.json');
  if (!existsSync(file)) throw new Error(`no test cluster is up (${file} is missing); run: npm run cluster:up`);
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterInfo;
}

/** Loads a kubeconfig file into a client-node KubeConfig. */
export function kubeConfigFrom(file: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(file);
  return kc;
}

/** A Kubernetes object with identity fields. */
export type KubeObject = k8s.KubernetesObject & {
  apiVersion: string;
  kind: string;
  metadata: k8s.V1ObjectMeta & { name: string };
};

/** Field manager of every server-side apply the test cluster makes. */
export const FIELD_MANAGER = 'agentplane-test-cluster';

/**
 * Server-side applies each object in order (`application/apply-patch+yaml`, force = true, field manager FIELD_MANAGER)
 * through the adapter's shape-preserving KubeObjects (client-node's typed bodies would drop CRD `default`/`enum` keys and
 * NetworkPolicy `from`).
 * @param kubeconfig path of the kubeconfig to apply with
 * @throws Error naming `apiVersion/kind/namespace/name` and the classified failure of the first object that fails
 */
export async function serverSideApply(kubeconfig: string, objects: readonly KubeObject[]): Promise<void> {
  const api = new KubeObjects(KubeClient.connect({ kubeconfig }));
  for (const obj of objects) {
    const r = await api.apply(obj as unknown as Parameters<KubeObjects['apply']>[0], {
      fieldManager: FIELD_MANAGER,
      force: true,
    });
    if (r.kind === 'ok') continue;
    const id = `${obj.apiVersion}/${obj.kind}/${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
    throw new Error(
      `server-side apply of ${id} failed: ${r.kind === 'failed' ? `${r.error.category}${r.error.code ? ` (HTTP ${r.error.code})` : ''}: ${r.error.message}` : r.message}`,
    );
  }
}

/**
 * Polls `probe` every `intervalMs` (default 100) until it returns a value other than undefined; returns that value.
 * @throws Error `timed out after <ms> ms waiting for <what>` (with the last probe error, if any).
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `; last error: ${lastError.message.split('\n')[0]}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
