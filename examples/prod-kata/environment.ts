/**
 * prod-kata: a production environment on Agent Sandbox v1.0.3 — the pinned install, a Kata RuntimeClass limited to the
 * Kata node pool, two sandboxd templates (a bare shell and an agent workload beside sandboxd), a warm pool of agent
 * sandboxes, and network policies that admit no ingress and allow egress only to cluster DNS, the package proxy and
 * the artifact store.
 *
 * sandboxd v1.0.3 listens on the pod network (`--listen-host=0.0.0.0`, which `sandboxdPodSpec` writes for the release,
 * `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`), so the kubelet probes `GET /v1/health` on 8080; the policies admit
 * no ingress, so nothing reaches it but the verifier's port-forward. No router: it would forward sandboxd's REST API
 * only, not its gRPC. (On v0.5.6 sandboxd listens on 127.0.0.1 only, `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`:
 * leave `release` out of `sandboxdPodSpec` there; examples/dev-gvisor is the v0.5.6 example.)
 */
import { k8s } from 'cdk8s-plus-28';
import { AgentEnvironment, defineEnvironments, sandboxdPodSpec, SANDBOXD_RUNTIME } from '../../src/index.js';

/** sandboxd image, built from `packages/sandboxd@v1.0.3` and mirrored (upstream publishes staging builds only, `examples/containarium-execution-scoped-token/README.md@v1.0.3`). */
export const SANDBOXD_IMAGE = 'registry.example.internal/agent-sandbox/sandboxd:v1.0.3';
/** The agent workload image that runs beside sandboxd. */
export const AGENT_IMAGE = 'registry.example.internal/platform/coding-agent:2026.11.2';
/** Controller images come through the company registry mirror of registry.k8s.io. */
export const REGISTRY_MIRROR = 'registry.example.internal/k8s';

/** The verifier image, built from this package by scripts/build-verifier-image.sh (no image is published). */
export const VERIFIER_IMAGE = 'registry.example.internal/agentplane/verifier:0.1.0';

export default defineEnvironments(async (ctx) => {
  const release = await ctx.loadRelease('v1.0.3');
  const env = new AgentEnvironment(ctx.app, 'prod-kata', {
    release,
    defaultNamespace: 'sandboxes',
    install: { registryMirror: REGISTRY_MIRROR },
    requiredStates: { 'suspend-resume': 'compatible' },
  });
  // Only the Kata node pool has the kata-qemu handler (label as in examples/gke-swap/runtimes/kata/deploy_cluster.sh@v0.5.6).
  // Overhead: the pinned kata-qemu profile (250m / 160Mi). The pool's three nodes are declared so synthesis checks the
  // warm pool fits them (it prints what each pool needs).
  const kata = env.addRuntimeClass('kata', {
    preset: 'kata',
    nodes: { count: 3, allocatable: { cpu: '3920m', memory: '13Gi' } },
    scheduling: {
      nodeSelector: { 'agent-sandbox.dev/kata': 'true' },
      tolerations: [{ key: 'agent-sandbox.dev/kata', operator: 'Exists', effect: 'NoSchedule' }],
    },
  });
  const shell = env.addTemplate('shell', {
    runtimeClass: kata,
    podSpec: sandboxdPodSpec({ image: SANDBOXD_IMAGE, release: release.facts.tag }),
    runtime: SANDBOXD_RUNTIME,
  });
  const agent = env.addTemplate('agent', {
    runtimeClass: kata,
    podSpec: sandboxdPodSpec({
      image: SANDBOXD_IMAGE,
      release: release.facts.tag,
      workspaceSize: '4Gi',
      workload: {
        name: 'agent',
        image: AGENT_IMAGE,
        env: [
          { name: 'AGENT_MODE', value: 'worker' },
          { name: 'HTTPS_PROXY', value: 'http://package-proxy.egress-proxy.svc:3128' },
        ],
        resources: {
          requests: { cpu: k8s.Quantity.fromString('1'), memory: k8s.Quantity.fromString('2Gi') },
          limits: { cpu: k8s.Quantity.fromString('2'), memory: k8s.Quantity.fromString('4Gi') },
        },
      },
    }),
    runtime: SANDBOXD_RUNTIME,
  });
  env.addWarmPool('agent-pool', { template: agent, replicas: 3, updateStrategy: 'Recreate' });
  const egress = [
    {
      description: 'package proxy',
      namespace: 'egress-proxy',
      podLabels: { app: 'package-proxy' },
      ports: [{ port: 3128 }],
    },
    { description: 'artifact store', cidr: '10.40.0.0/16', ports: [{ port: 443 }] },
  ];
  env.addNetworkPolicy('shell-policy', { template: shell, egress });
  env.addNetworkPolicy('agent-policy', { template: agent, egress });
  // The in-cluster verifier runs last: an Argo CD PostSync hook / the last Flux wave (README "The verifier inside the cluster").
  env.addVerifierJob('verify', { image: VERIFIER_IMAGE });
});
