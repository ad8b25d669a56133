/**
 * The application as a pod on the real node (the client's `in-cluster` mode, SandboxInClusterConnectionConfig of
 * `k8s_agent_sandbox/models.py@1.0.8`): test/client/app.py mounted from a ConfigMap into the python-client image
 * (test-cluster/scripts/python-runtime-image.sh client), under a ServiceAccount with the Role the client's calls need
 * (`k8s_agent_sandbox/k8s_helper.py@1.0.8`: claims created, watched, deleted; Sandboxes read). The ServiceAccount token
 * volume the disabled admission plugin would add is added here, as in-cluster-router.ts does for the router.
 * And AgentPlane's verifier as the pod network sees it: the CLI run inside the node's network namespace (`nsenter`),
 * where pod IPs are routable and the API server is the node relay on 127.0.0.1, with `--transport direct`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../../test-cluster/kube.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { waitFor, type Cluster } from '../helpers.js';
import { onRealNode, realNode } from '../real-node-helpers.js';
import { rootCaConfigMap } from './in-cluster-router.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CLIENT_IMAGE = 'registry.local/agentplane-test/python-client:1.0.8';
/** The label of the application's pod; the in-cluster template's ingress admits it. */
export const APP_LABELS = { app: 'agentplane-client-app' } as const;
const APP = 'client-app';

/** ServiceAccount, Role, RoleBinding, the app's ConfigMap, the root CA, and the app's Pod in `ns`. */
export function appObjects(c: Cluster, ns: string, pool: string): KubeObject[] {
  const meta = { name: APP, namespace: ns };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta,
      rules: [
        {
          apiGroups: ['extensions.agents.x-k8s.io'],
          resources: ['sandboxclaims'],
          verbs: ['create', 'get', 'list', 'watch', 'delete'],
        },
        { apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: APP },
      subjects: [{ kind: 'ServiceAccount', name: APP, namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta,
      data: { 'app.py': readFileSync(path.join(REPO, 'test/client/app.py'), 'utf8') },
    },
    rootCaConfigMap(c, ns),
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...meta, labels: { ...APP_LABELS } },
      spec: {
        ...onRealNode(realNode(c)),
        serviceAccountName: APP,
        restartPolicy: 'Never',
        securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
        containers: [
          {
            name: 'app',
            image: CLIENT_IMAGE,
            args: ['/src/app.py', 'in-cluster', ns, pool],
            env: [{ name: 'HOME', value: '/tmp' }],
            volumeMounts: [
              { name: 'src', mountPath: '/src', readOnly: true },
              { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: 'src', configMap: { name: APP } },
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
        ],
      },
    },
  ] as KubeObject[];
}

/** Waits for the app pod to finish; its steps (the last log line) and its pod IP. */
export async function appResult(
  c: Cluster,
  ns: string,
): Promise<{ steps: Record<string, { ok: boolean; value?: unknown; error?: string }>; podIP: string }> {
  const pod = await waitFor(`pod ${ns}/${APP} finished`, 300_000, async () => {
    const p = await c.core.readNamespacedPod({ name: APP, namespace: ns });
    return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
  });
  const log = await c.core.readNamespacedPodLog({ name: APP, namespace: ns, container: 'app' });
  if (pod.status?.phase !== 'Succeeded') throw new Error(`app pod ${pod.status?.phase}: ${log.slice(-2000)}`);
  return { steps: JSON.parse(log.trim().split('\n').pop()!), podIP: pod.status.podIP ?? '' };
}

/** `agentplane verify --transport direct` in the node's network namespace (tsx, no build needed): its JSON report. */
export function verifyFromNode(c: Cluster, dir: string, env: NodeJS.ProcessEnv): Promise<VerifyReport> {
  const args = [
    `--net=/run/netns/${realNode(c).netns}`,
    path.join(REPO, 'node_modules/.bin/tsx'),
    path.join(REPO, 'src/cli/main.ts'),
    'verify',
    '--env',
    dir,
    '--kubeconfig',
    c.info.kubeconfig,
    '--transport',
    'direct',
    '--controller',
    'external',
    '--samples',
    '3',
    '--probe-timeout',
    '3s',
    '--ready-timeout',
    '2m',
    '-o',
    'json',
  ];
  return new Promise((resolve, reject) => {
    execFile('nsenter', args, { cwd: REPO, env, timeout: 300_000, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      // exit 0 = all verified, other codes are findings with a report on stdout; no report = the run itself failed
      try {
        resolve(JSON.parse(stdout) as VerifyReport);
      } catch {
        reject(new Error(`verify in the node netns printed no report (${err?.message}): ${stderr.slice(-2000)}`));
      }
    });
  });
}
