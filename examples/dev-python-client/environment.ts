/**
 * dev-python-client: an environment the official Python client (`k8s-agent-sandbox` 1.0.8) can use as is, on Agent
 * Sandbox v0.5.6 — the pinned install, a gVisor RuntimeClass, a template running the upstream python runtime (the API
 * the client's router modes speak), a warm pool to claim from, and the sandbox router the client's default tunnel mode
 * port-forwards to. Synthesis refuses the client if any of these stops fitting it. README: "An application's client".
 * It stays on v0.5.6 while the real-node cluster tests deploy it unchanged with images built under the references it
 * pins (test-cluster/scripts/images.sh, python-runtime-image.sh); client 1.0.8 fits v1.0.3 as well (docs/clients.md).
 */
import { k8s } from 'cdk8s-plus-28';
import { AgentEnvironment, defineEnvironments } from '../../src/index.js';

/** The python runtime as upstream promotes it (uvicorn on 0.0.0.0:8888, user 1000, files under /app: `examples/python-runtime-sandbox/{main.py,Dockerfile}@v0.5.6`). */
export const PYTHON_RUNTIME_IMAGE = 'registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.5.6';
/** The router is published only as a staging build (`dev/tools/tag-promote-images@v0.5.6`): build or mirror it and pin the tag here. */
export const ROUTER_IMAGE = 'registry.example.internal/agent-sandbox/sandbox-router-go:v0.5.6';

export default defineEnvironments(async (ctx) => {
  const release = await ctx.loadRelease('v0.5.6');
  const env = new AgentEnvironment(ctx.app, 'dev-python-client', {
    release,
    defaultNamespace: 'dev-sandboxes',
    // Both images are pinned by tag (no digest of the router's staging build is published), so image skew cannot be
    // ruled out and the router reaches configured at most (PinnedByTagOnly); pin `image@sha256:…` to require verified.
    requiredStates: { router: 'configured' },
  });
  const gvisor = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  const q = { cpu: k8s.Quantity.fromString('500m'), memory: k8s.Quantity.fromString('512Mi') };
  const python = env.addTemplate('python', {
    runtimeClass: gvisor,
    podSpec: {
      securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, runAsNonRoot: true },
      containers: [
        {
          name: 'python-runtime',
          image: PYTHON_RUNTIME_IMAGE,
          ports: [{ containerPort: 8888 }],
          readinessProbe: { httpGet: { path: '/', port: k8s.IntOrString.fromNumber(8888) }, periodSeconds: 5 },
          resources: { requests: q, limits: q },
        },
      ],
    },
    runtime: { kind: 'python-runtime', container: 'python-runtime', ports: [8888] },
  });
  // create_sandbox(warmpool='python') claims from this pool.
  const pool = env.addWarmPool('python-pool', { name: 'python', template: python, replicas: 2 });
  // The client's tunnel mode port-forwards to svc/sandbox-router-svc:8080 in agent-sandbox-system (through the kubelet,
  // not the pod network, so no caller needs admitting); the router dials port 8888. That mode sends no Authorization
  // header (k8s_agent_sandbox/connector.py@1.0.8), so a router requiring a token refuses every call: the gate is the
  // API server's authorization of pods/portforward on the router's pod, and no pod-network caller is admitted.
  // The client names the pod in X-Sandbox-Pod-IP (from Sandbox.status.podIPs, connector.py@1.0.8), so the router needs
  // no Pod-IP cache, and without one it never calls the API server: its NetworkPolicy, enforced by any policy-enforcing
  // CNI, admits the API server only as a pod of namespace default (sandbox-router/deploy/networkpolicy.yaml@v0.5.6), and
  // a cache that cannot sync keeps the router from ever starting. With the cache on, declare `apiServer` endpoints.
  env.addRouter('router', {
    image: ROUTER_IMAGE,
    namespace: 'agent-sandbox-system',
    authorization: { mode: 'allow-all', acknowledgeUnauthenticated: true },
    cache: false,
    sandboxPorts: [8888],
    callers: [],
    // The python runtime answers /execute when the command ends and stops it at 300 s (SANDBOX_EXEC_TIMEOUT_SECONDS):
    // the router's 30 s header wait would cut every longer command short.
    responseHeaderTimeoutSeconds: 310,
    proxyTimeoutSeconds: 310,
  });
  env.addClient({ sdk: 'k8s-agent-sandbox', version: '1.0.8', mode: 'tunnel', warmPool: pool });
});
