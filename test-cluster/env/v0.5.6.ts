/**
 * The environment the test cluster installs for Agent Sandbox v0.5.6, written with AgentPlane's constructs and
 * synthesized in-process (install.ts applies it). Besides the pinned install it declares what the smoke tests use:
 * RuntimeClass `standin` (scheduled onto nodes labelled `agentplane.io/runtime=standin`, which every node up.sh makes
 * carries), SandboxTemplate `sandboxd` (a sandboxd pod, so the runtime stand-in serves it) and SandboxWarmPool `sandboxd`
 * (1 replica), all in namespace SMOKE_NAMESPACE, and a SandboxRouter (allow-all, as the local router process runs).
 * The controller runs as a local process with `--manage-webhook-certs=false`, hence `certificates: external`
 * (`cmd/agent-sandbox-controller/tls.go@v0.5.6`).
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
/** A local image name: kwok never pulls; the runtime stand-in recognizes the container by its name `sandboxd`. */
const SANDBOXD_IMAGE = 'registry.local/agentplane-test/sandboxd:v0.5.6';
const ROUTER_IMAGE = 'registry.local/agentplane-test/sandbox-router:v0.5.6';

/** The synthesized objects of the environment, in apply order. @throws the release loader's and synthesis' errors. */
export async function synthesizeInstall(): Promise<KubeObject[]> {
  const release = await loadRelease('v0.5.6');
  const env = new AgentEnvironment(new App(), 'test-cluster', {
    release,
    defaultNamespace: SMOKE_NAMESPACE,
    install: { certificates: { external: { secretName: 'agent-sandbox-webhook-certs' } } },
  });
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
