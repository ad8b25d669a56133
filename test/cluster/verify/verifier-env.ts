/**
 * Set-up shared by the verifier's cluster tests: a namespace with SandboxTemplates whose pods get a healthy, silent
 * or hanging runtime (test-cluster/README.md, annotation `test-cluster.agentplane.io/runtime`), the verifier's own
 * least-privilege identity (the VerifierAccess construct, applied and given a TokenRequest token), and plans.
 */
import * as k8s from '@kubernetes/client-node';
import { Testing } from 'cdk8s';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { VerifierAccess } from '../../../src/constructs/verifier-access.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import type { TemplatePlan, VerifyPlan } from '../../../src/verify/plan.js';
import { serverSideApply, type KubeObject } from '../../../test-cluster/kube.js';
import { RUNTIME_ANNOTATION, type RuntimeMode } from '../../../test-cluster/runtime.js';
import type { Cluster } from '../helpers.js';

export const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };

/** A SandboxTemplate running a sandboxd container whose pods get runtime `mode` from the stand-in. */
export function sandboxdTemplate(
  namespace: string,
  name: string,
  mode: RuntimeMode,
  runtimeClassName?: string,
): Record<string, unknown> {
  return {
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxTemplate',
    metadata: { name, namespace },
    spec: {
      podTemplate: {
        metadata: { annotations: { [RUNTIME_ANNOTATION]: mode }, labels: { app: 'sandbox' } },
        spec: {
          ...(runtimeClassName ? { runtimeClassName } : {}),
          containers: [
            {
              name: 'sandboxd',
              image: 'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main',
              ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
            },
          ],
        },
      },
    },
  };
}

/**
 * Applies the VerifierAccess objects for `namespaces` (`access`: its optional rights, and a name when one namespace
 * holds several identities), mints a 1-hour token for its ServiceAccount, writes a kubeconfig.
 */
export async function verifierKubeconfig(
  c: Cluster,
  saNamespace: string,
  namespaces: string[],
  access: { name?: string; portForward?: boolean; suspendResume?: boolean } = {},
): Promise<{ file: string; user: string }> {
  const chart = Testing.chart();
  const va = new VerifierAccess(chart, 'verifier', {
    namespace: saNamespace,
    sandboxNamespaces: namespaces,
    routerNamespace: 'agent-sandbox-system',
    portForward: false,
    ...access,
  });
  const objects = Testing.synth(chart) as KubeObject[];
  await serverSideApply(c.info.kubeconfig, objects);
  const token = await c.core.createNamespacedServiceAccountToken({
    namespace: saNamespace,
    name: va.serviceAccountName,
    body: { spec: { audiences: [], expirationSeconds: 3600 } } as k8s.AuthenticationV1TokenRequest,
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'agentplane-verifier-'));
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: verifier',
      'clusters:',
      '- name: harness',
      `  cluster: {server: "${c.info.apiServer}", certificate-authority: "${c.info.caFile}"}`,
      'users:',
      '- name: verifier',
      `  user: {token: "${token.status!.token}"}`,
      'contexts:',
      '- name: verifier',
      '  context: {cluster: harness, user: verifier}',
      '',
    ].join('\n'),
  );
  return { file, user: va.userName };
}

export function connectAs(file: string): KubeClient {
  return KubeClient.connect({ kubeconfig: file });
}

export function templatePlan(namespace: string, name: string, runtimeClassName?: string): TemplatePlan {
  return {
    namespace,
    name,
    runtime: 'sandboxd',
    ports: { rest: 8080, grpc: 9090 },
    networkPolicyManagement: 'Managed',
    ...(runtimeClassName ? { runtimeClassName } : {}),
  };
}

/** `p` without its router: the plan of an environment that declares none. */
export function withoutRouter({ router: _router, ...p }: VerifyPlan): VerifyPlan {
  return p;
}

/** A plan for templates in one namespace, verified over the direct transport (standing in for port-forward) with the router's URL. */
export function plan(c: Cluster, templates: TemplatePlan[], extra: Partial<VerifyPlan> = {}): VerifyPlan {
  const declared = [
    'sandbox-api',
    'extensions-api',
    'controller',
    'conversion',
    'router',
    'runtime-exec',
    'runtime-files',
    ...templates.map((t) => `template/${t.namespace}/${t.name}` as const),
  ] as const;
  return {
    environment: 'verify-cluster-test',
    release: 'v0.5.6',
    source: 'test',
    controller: {
      namespace: 'agent-sandbox-system',
      deployment: 'agent-sandbox-controller',
      serviceAccount: 'agent-sandbox-controller',
    },
    runtimeClasses: [],
    templates,
    warmPools: [],
    networkPolicies: [],
    router: {
      namespace: 'agent-sandbox-system',
      service: 'sandbox-router-svc',
      podLabels: { app: 'sandbox-router' },
      url: `http://127.0.0.1:${c.info.ports.routerHttp}`,
    },
    transport: 'direct',
    requirements: requirementsFor([...declared]),
    probeTimeoutMs: 2_000,
    readyTimeoutMs: 60_000,
    ...extra,
  };
}
