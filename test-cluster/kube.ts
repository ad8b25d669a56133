/**
 * Small client-node helpers shared by the test-cluster scripts (install, runtime stand-in) and test/cluster.
 * Server-side apply, waiting on a condition, and reading the cluster facts up.sh writes to `.run/cluster.json`.
 */
import * as k8s from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Run dir of the cluster: `$AGENTPLANE_TEST_CLUSTER_RUN`, default test-cluster/.run (git-ignored). */
export const RUN_DIR = process.env.AGENTPLANE_TEST_CLUSTER_RUN ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '.run');

/** What up.sh records about a running cluster (`test-cluster/.run/cluster.json`). Ports are TCP ports on 127.0.0.1. */
export interface ClusterInfo {
  /** Agent Sandbox release the cluster runs: 'v0.5.6' or 'v0.4.6'. */
  readonly release: 'v0.5.6' | 'v0.4.6';
  /** Admin kubeconfig (token of a system:masters user). */
  readonly kubeconfig: string;
  /** Kubeconfig holding the TokenRequest token of agent-sandbox-system/agent-sandbox-controller, used by the controller. */
  readonly controllerKubeconfig: string;
  readonly runDir: string;
  readonly caFile: string;
  /** `https://127.0.0.1:<port>` */
  readonly apiServer: string;
  readonly ports: {
    readonly etcd: number; readonly apiserver: number; readonly scheduler: number; readonly controllerManager: number;
    readonly controllerMetrics: number; readonly controllerProbe: number; readonly webhook: number;
    /** sandbox-router ports; null on v0.4.6 (no Go router in that release). */
    readonly routerHttp: number | null; readonly routerMetrics: number | null; readonly routerProbe: number | null;
  };
  /** Second octet of pod IPs: node i has podCIDR 127.<podNet>.<i>.0/24. */
  readonly podNet: number;
  /** true when the runtime stand-in (sandboxd per sandbox pod) runs. */
  readonly runtimeStandin: boolean;
  readonly startedAt: string;
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
export type KubeObject = k8s.KubernetesObject & { apiVersion: string; kind: string; metadata: k8s.V1ObjectMeta & { name: string } };

/** Field manager of every server-side apply the test cluster makes. */
export const FIELD_MANAGER = 'agentplane-test-cluster';

/**
 * Server-side applies each object in order (`application/apply-patch+yaml`, force = true, field manager FIELD_MANAGER).
 * @throws the ApiException of the first failing object, with `apiVersion/kind/namespace/name` prefixed to its message.
 */
export async function serverSideApply(kc: k8s.KubeConfig, objects: readonly KubeObject[]): Promise<void> {
  const api = k8s.KubernetesObjectApi.makeApiClient(kc);
  for (const obj of objects) {
    try {
      await api.patch(obj, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
    } catch (err) {
      const id = `${obj.apiVersion}/${obj.kind}/${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
      const body = err instanceof k8s.ApiException ? ` (HTTP ${err.code}: ${String(err.body).slice(0, 400)})` : '';
      throw new Error(`server-side apply of ${id} failed${body}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  }
}

/**
 * Polls `probe` every `intervalMs` (default 100) until it returns a value other than undefined; returns that value.
 * @throws Error `timed out after <ms> ms waiting for <what>` (with the last probe error, if any).
 */
export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, intervalMs = 100): Promise<T> {
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
