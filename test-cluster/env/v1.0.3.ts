/**
 * The environment the test cluster installs for Agent Sandbox v1.0.3, written with AgentPlane's constructs and
 * synthesized in-process (install.ts applies it). Same shape as env/v0.5.6.ts: RuntimeClass `standin` (scheduled onto
 * nodes labelled `agentplane.io/runtime=standin`, which every node up.sh makes carries), SandboxTemplate `sandboxd` (a
 * sandboxd pod, so the runtime stand-in serves it), SandboxWarmPool `sandboxd` (1 replica), all in namespace
 * SMOKE_NAMESPACE, and a SandboxRouter (allow-all, as the local router process runs).
 *
 * No `certificates`: v1.0.3 has no conversion webhook and its controller has no `--manage-webhook-certs` flag
 * (`cmd/agent-sandbox-controller/main.go@v1.0.3`); its CRDs serve and store v1beta1 only, without `spec.conversion`
 * (`k8s/crds/*.yaml@v1.0.3`).
 */
import { App } from 'cdk8s';
import {
  AgentEnvironment,
  loadRelease,
  sandboxdPodSpec,
  SANDBOXD_GRPC_PORT,
  SANDBOXD_REST_PORT,
  SANDBOXD_RUNTIME,
  synthesizeEnvironment,
} from '../../src/index.js';
import type { KubeObject } from '../kube.js';

/** Namespace of the smoke template and pool. */
export const SMOKE_NAMESPACE = 'agentplane-smoke';
/** Node label the RuntimeClass `standin` selects; up.sh puts it on every node it creates. */
export const STANDIN_NODE_LABEL = { key: 'agentplane.io/runtime', value: 'standin' } as const;
/** Local image names: kwok never pulls; the runtime stand-in recognizes the container by its name `sandboxd`. */
const SANDBOXD_IMAGE = 'registry.local/agentplane-test/sandboxd:v1.0.3';
const ROUTER_IMAGE = 'registry.local/agentplane-test/sandbox-router:v1.0.3';

/** The synthesized objects of the environment, in apply order. @throws the release loader's and synthesis' errors. */
export async function synthesizeInstall(): Promise<KubeObject[]> {
  const release = await loadRelease('v1.0.3');
  const env = new AgentEnvironment(new App(), 'test-cluster', { release, defaultNamespace: SMOKE_NAMESPACE });
  const rc = env.addRuntimeClass('standin', {
    preset: 'gvisor',
    name: 'standin',
    handler: 'standin',
    scheduling: { nodeSelector: { [STANDIN_NODE_LABEL.key]: STANDIN_NODE_LABEL.value } },
  });
  const template = env.addTemplate('sandboxd-template', {
    name: 'sandboxd',
    runtimeClass: rc,
    podSpec: sandboxdPodSpec({ image: SANDBOXD_IMAGE }),
    runtime: SANDBOXD_RUNTIME,
  });
  env.addWarmPool('sandboxd-pool', { name: 'sandboxd', template, replicas: 1 });
  // Its ServiceAccount + RBAC are applied; the router itself runs as a local process under that ServiceAccount's token.
  env.addRouter('router', {
    image: ROUTER_IMAGE,
    authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
    sandboxPorts: [SANDBOXD_REST_PORT, SANDBOXD_GRPC_PORT],
    callers: [],
  });
  return synthesizeEnvironment(env).objects.map((o) => o.object as unknown as KubeObject);
}
