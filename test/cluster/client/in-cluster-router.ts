/**
 * The synthesized router Deployment on the real node, and the tunnel to it the client's tunnel mode uses
 * (`kubectl port-forward svc/sandbox-router-svc`, src/releases/client-sdk.ts). Two stand-ins for control-plane parts
 * the test cluster does not run, said here: the ServiceAccount admission plugin is off (up.sh) and the controller
 * manager runs no root-CA publisher, so the token volume those would give the router's pod (token, the cluster CA as
 * ConfigMap `kube-root-ca.crt`, the namespace) is added to its pod spec and the ConfigMap created, as they would.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../../test-cluster/kube.js';
import { waitFor, type Cluster } from '../helpers.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The kubectl the test cluster builds (test-cluster/scripts/build.sh kubectl): its directory, for PATH. */
export function kubectlDir(env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync('bash', ['-c', '. test-cluster/scripts/lib.sh && tc_key_dir kubectl'], {
    cwd: REPO,
    env,
    encoding: 'utf8',
  }).trim();
}

/** `kube-root-ca.crt` in `namespace`, as the root-CA publisher of kube-controller-manager writes it. */
export function rootCaConfigMap(c: Cluster, namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt', namespace },
    data: { 'ca.crt': readFileSync(c.info.caFile, 'utf8') },
  } as KubeObject;
}

/** The Deployment with the ServiceAccount token volume the admission plugin would add to its pod. */
export function withServiceAccountVolume(deployment: KubeObject): KubeObject {
  const d = structuredClone(deployment) as KubeObject & {
    spec: { template: { spec: { volumes?: unknown[]; containers: Array<{ volumeMounts?: unknown[] }> } } };
  };
  const pod = d.spec.template.spec;
  pod.volumes = [
    ...(pod.volumes ?? []),
    {
      name: 'kube-api-access',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
  ];
  for (const ctr of pod.containers)
    ctr.volumeMounts = [...(ctr.volumeMounts ?? []), { name: 'kube-api-access', mountPath: SA_DIR, readOnly: true }];
  return d;
}

/** A `kubectl port-forward svc/<service> :<port>` the test owns: its local URL and a stop. */
export async function portForwardService(
  c: Cluster,
  kubectl: string,
  namespace: string,
  service: string,
  port: number,
): Promise<{ url: string; stop: () => void }> {
  const child: ChildProcess = spawn(
    path.join(kubectl, 'kubectl'),
    ['--kubeconfig', c.info.kubeconfig, '-n', namespace, 'port-forward', `svc/${service}`, `:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString('utf8')));
  const local = await waitFor(`kubectl port-forward svc/${service} in ${namespace}`, 30_000, async () => {
    if (child.exitCode !== null) throw new Error(`kubectl port-forward exited ${child.exitCode}: ${out}`);
    return /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
  });
  return { url: `http://127.0.0.1:${local}`, stop: () => child.kill('SIGTERM') };
}

/** Waits until a router pod (label app=sandbox-router) in `namespace` is Ready; on timeout says what its containers did. */
export async function waitRouterReady(c: Cluster, namespace: string, timeoutMs = 120_000): Promise<void> {
  const list = () => c.core.listNamespacedPod({ namespace, labelSelector: 'app=sandbox-router' });
  try {
    await waitFor('the router pod Ready', timeoutMs, async () =>
      (await list()).items.some((p) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))
        ? true
        : undefined,
    );
  } catch (e) {
    const pods = (await list()).items.map((p) => ({
      name: p.metadata?.name,
      phase: p.status?.phase,
      containers: p.status?.containerStatuses?.map((s) => ({ state: s.state, restarts: s.restartCount })),
      conditions: p.status?.conditions?.map((x) => `${x.type}=${x.status}${x.message ? `: ${x.message}` : ''}`),
    }));
    const events = (await c.core.listNamespacedEvent({ namespace })).items
      .filter((ev) => ev.type === 'Warning')
      .map((ev) => `${ev.involvedObject.name}: ${ev.reason} ${ev.message}`)
      .slice(-8);
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}; pods ${JSON.stringify(pods)}; warnings ${JSON.stringify(events)}`,
      {
        cause: e,
      },
    );
  }
}
