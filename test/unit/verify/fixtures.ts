/** Shared inputs of the verifier's unit tests. */

/** A descriptor of the shape `agentplane synth` writes for examples/dev-gvisor (trimmed). */
export const DESCRIPTOR = {
  apiVersion: 'agentplane.dev/v1alpha1',
  kind: 'EnvironmentDescriptor',
  name: 'dev-gvisor',
  release: {
    tag: 'v0.5.6',
    commit: '211b7579cabed9460c1a692eb687084ff4c5879d',
    family: 'v0.5',
    apiVersions: { Sandbox: 'agents.x-k8s.io/v1beta1' },
  },
  install: {
    namespace: 'agent-sandbox-system',
    controllerDeployment: 'agent-sandbox-controller',
    controllerImage: 'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
    extensions: true,
    certificates: 'controller',
    serverSideApply: [],
  },
  runtimeClasses: [
    { name: 'gvisor', handler: 'runsc', preset: 'gvisor', overhead: null, scheduling: null, allNodes: true },
  ],
  templates: [
    {
      namespace: 'dev-sandboxes',
      name: 'shell',
      runtimeClassName: 'gvisor',
      networkPolicyManagement: 'Managed',
      podLabels: { 'agentplane.dev/template': 'shell' },
      runtime: { kind: 'sandboxd', container: 'sandboxd', ports: [8080, 9090] },
      images: [{ container: 'sandboxd', image: 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6' }],
    },
  ],
  warmPools: [
    { namespace: 'dev-sandboxes', name: 'shell-pool', template: 'shell', replicas: 2, updateStrategy: 'Recreate' },
  ],
  claims: [],
  router: {
    namespace: 'agent-sandbox-system',
    serviceName: 'sandbox-router-svc',
    port: 8080,
    podLabels: { app: 'sandbox-router' },
    image: 'r:1',
    authorizationMode: 'allow-all',
  },
  networkPolicies: [
    {
      namespace: 'dev-sandboxes',
      name: 'shell-egress',
      template: 'shell',
      podSelector: { a: 'b' },
      ingressFrom: [{ namespace: 'agent-sandbox-system', podLabels: { app: 'sandbox-router' } }],
      ingressPorts: [8080],
      dns: null,
      egress: [{ cidr: '0.0.0.0/0', ports: [{ port: 443, protocol: 'TCP' }] }],
    },
  ],
  images: {},
  capabilities: [
    { capability: 'sandbox-api', required: 'verified' },
    { capability: 'controller', required: 'configured' },
    { capability: 'network-isolation', required: 'configured' },
    { capability: 'runtime-exec', required: 'verified' },
  ],
};

/**
 * What `dmesg` prints inside a gVisor sandbox: the Sentry's own log, boot line `Starting gVisor...` at time 0 first
 * (the lines after it are written for these tests in that shape, not copied from runsc).
 */
export const RUNSC_DMESG = [
  '[    0.000000] Starting gVisor...',
  '[    0.381145] Warming up the sandbox kernel...',
  '[    0.702318] Wiring the virtual filesystem...',
  '[    1.055872] Handing the pod its first process...',
  '[    1.402961] Ready!',
  '',
].join('\n');
