/** Helpers for cluster tests that need the real node (kubelet + containerd, test-cluster/scripts/node.sh). */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { readClusterInfo, type KubeObject, type RealNodeInfo } from '../../test-cluster/kube.js';
import { connect, secondClusterEnv, waitFor, type Cluster } from './helpers.js';
import { MIRROR } from '../mirror.js';

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
  // Its own pod net (derived from the run dir, never the global cluster's) and release (up.sh's default), not the parent's.
  const env = secondClusterEnv(runDir, {
    realNode: true,
    extra: {
      AGENTPLANE_MIRROR: MIRROR,
      ...(options.workloads ? { AGENTPLANE_TEST_CLUSTER_WORKLOADS: '1' } : {}),
    },
  });
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

/**
 * Cluster-scoped objects of a synthesized environment renamed `<name>-<suffix>` (and the bindings of its own roles
 * with them), so a test's RBAC leaves the shared cluster's own objects of the same name untouched. Returns `objects`.
 */
export function perTestClusterScoped(objects: KubeObject[], suffix: string): KubeObject[] {
  const own = new Set(objects.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata!.name));
  for (const o of objects) {
    if (o.metadata?.namespace !== undefined || o.kind === 'RuntimeClass') continue;
    o.metadata!.name += `-${suffix}`;
    const ref = (o as { roleRef?: { name: string } }).roleRef;
    if (ref && own.has(ref.name)) ref.name += `-${suffix}`; // built-in roles (system:auth-delegator) keep their name
  }
  return objects;
}

/**
 * The pod a ReplicaSet would make from `deployment`'s template (`<name>-0`), placed on the real node, Running. The test
 * cluster runs no deployment controller; this is its stand-in.
 */
export async function startDeploymentPod(c: Cluster, namespace: string, deployment: KubeObject): Promise<k8s.V1Pod> {
  const d = deployment as KubeObject & {
    spec: { template: { metadata: { labels: Record<string, string> }; spec: k8s.V1PodSpec } };
  };
  const name = `${String(d.metadata!.name)}-0`;
  const tmpl = d.spec.template;
  const placed = onRealNode(realNode(c));
  await c.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels: tmpl.metadata.labels },
      spec: {
        ...tmpl.spec,
        nodeSelector: { ...tmpl.spec.nodeSelector, ...placed.nodeSelector },
        tolerations: [...(tmpl.spec.tolerations ?? []), ...placed.tolerations],
      },
    },
  });
  return waitRunning(c, namespace, name, 120_000);
}

/** A bearer token of a fresh ServiceAccount `caller` in `namespace` (API server audiences, an hour). */
export async function callerToken(c: Cluster, namespace: string): Promise<string> {
  await c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'caller' } } });
  const t = await c.core.createNamespacedServiceAccountToken({
    namespace,
    name: 'caller',
    body: { spec: { audiences: [], expirationSeconds: 3600 } } as k8s.AuthenticationV1TokenRequest,
  });
  return t.status!.token;
}

/**
 * `ref` pinned by the digest of the manifest the real node imported it as (test-cluster/scripts/images.sh), with that
 * digest reference recorded on the node as a pull by digest would (there is no registry to pull from), so pods of the
 * pinned reference run and report the digest in their imageID.
 */
export function pinnedByDigest(c: Cluster, ref: string, env: NodeJS.ProcessEnv = process.env): string {
  const ctr = (...args: string[]): string => {
    const r = spawnSync(
      'bash',
      ['-c', '. test-cluster/scripts/lib.sh && "$(tc_key_dir containerd)/ctr" "$@"', 'ctr', ...args],
      { cwd: REPO, env, encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`ctr ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const sock = ['--address', realNode(c).containerdSocket, '-n', 'k8s.io'];
  const line = ctr(...sock, 'images', 'ls', `name==${ref}`)
    .split('\n')
    .find((l) => l.startsWith(`${ref} `));
  const digest = line?.match(/\bsha256:[0-9a-f]{64}\b/)?.[0];
  if (!digest) throw new Error(`image ${ref} is not on the real node (test-cluster/scripts/images.sh)`);
  const repository = ref.replace(/:[^:/]+$/, '');
  ctr(...sock, 'images', 'tag', '--force', ref, `${repository}@${digest}`);
  return `${ref}@${digest}`;
}

/** sandboxd's own flags as the template construct writes them (`sandboxdPodSpec`). */
export const SANDBOXD_ARGS = ['--grpc-port=9090', '--rest-port=8080', '--root-dir=/workspace'];

/**
 * A SandboxTemplate whose pods run container `sandboxd` from the node's tools image on the real node (grace 1 s, a
 * `workspace` emptyDir), with `container` laid over its defaults (sandboxd's flags, ports 8080/9090, the workspace
 * mount). Pods are labelled `labels`; `management` and `runtimeClassName` are written only when given.
 */
export function realNodeSandboxdTemplate(
  c: Cluster,
  namespace: string,
  name: string,
  container: Record<string, unknown> = {},
  opts: {
    labels?: Record<string, string>;
    volumes?: object[];
    management?: 'Managed' | 'Unmanaged';
    runtimeClassName?: string;
  } = {},
): Record<string, unknown> {
  return {
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxTemplate',
    metadata: { name, namespace },
    spec: {
      ...(opts.management ? { networkPolicyManagement: opts.management } : {}),
      podTemplate: {
        metadata: { labels: opts.labels ?? { app: 'sandbox' } },
        spec: {
          ...onRealNode(realNode(c)),
          ...(opts.runtimeClassName ? { runtimeClassName: opts.runtimeClassName } : {}),
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'sandboxd',
              image: NODE_TOOLS_IMAGE,
              imagePullPolicy: 'Never',
              args: SANDBOXD_ARGS,
              ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
              volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
              ...container,
            },
          ],
          volumes: [{ name: 'workspace', emptyDir: {} }, ...(opts.volumes ?? [])],
        },
      },
    },
  };
}

/**
 * The JSON document a verify container wrote on stdout, out of its log: the container log interleaves stderr, whose
 * progress lines come before the document and whose `error [Reason]: ` line may come after it. The document is
 * pretty-printed, so it runs from a line that is `{` to the next line that is `}`.
 */
export function stdoutDocument(log: string): unknown {
  const lines = log.split('\n');
  const start = lines.indexOf('{');
  const end = lines.indexOf('}', start);
  if (start < 0 || end < 0) throw new Error(`no JSON document in the container log:\n${log}`);
  return JSON.parse(lines.slice(start, end + 1).join('\n'));
}
