/** Client SDK facts per version and where each runtime listens per release. */
import {
  CLIENT_SDK_VERSIONS,
  clientSdkFacts,
  isLoopbackHost,
  K8S_AGENT_SANDBOX_0_5_6,
  K8S_AGENT_SANDBOX_1_0_8,
  runtimeBind,
} from '../../../src/releases/index.js';

describe('runtimeBind', () => {
  test('sandboxd: loopback without a flag up to v0.5.6, --listen-host (default 0.0.0.0) on v1.0.x', () => {
    for (const r of ['v0.5.6', 'v0.5.0', 'v0.5', 'v0.4.6'])
      expect(runtimeBind(r, 'sandboxd')).toEqual({
        host: '127.0.0.1',
        listenHostFlag: false,
        cite: 'packages/sandboxd/cmd/sandboxd/main.go@v0.5.6',
      });
    for (const r of ['v1.0.3', 'v1.0.1', 'v1.0'])
      expect(runtimeBind(r, 'sandboxd')).toEqual({
        host: '0.0.0.0',
        listenHostFlag: true,
        cite: 'packages/sandboxd/cmd/sandboxd/main.go@v1.0.3',
      });
    // a tag of no known family: the older, loopback-only sandboxd
    expect(runtimeBind('v9.9.9', 'sandboxd').host).toBe('127.0.0.1');
  });

  test('python-runtime: the pod network on every release, never a flag', () => {
    for (const r of ['v0.5.6', 'v1.0.3'])
      expect(runtimeBind(r, 'python-runtime')).toMatchObject({ host: '0.0.0.0', listenHostFlag: false });
  });

  test('isLoopbackHost', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'].map(isLoopbackHost)).toEqual(
      Array(6).fill(true),
    );
    expect(['0.0.0.0', '::', '10.0.0.5', '128.0.0.1'].map(isLoopbackHost)).toEqual(Array(4).fill(false));
  });
});

describe('client SDK facts', () => {
  test('0.5.6 and 1.0.8 are recorded, both claiming at v1beta1, each with its wheel sha256', () => {
    expect(CLIENT_SDK_VERSIONS['k8s-agent-sandbox']).toEqual(['0.5.6', '1.0.8']);
    expect(clientSdkFacts('k8s-agent-sandbox', '0.5.6')).toBe(K8S_AGENT_SANDBOX_0_5_6);
    expect(clientSdkFacts('k8s-agent-sandbox', '1.0.8')).toBe(K8S_AGENT_SANDBOX_1_0_8);
    expect(clientSdkFacts('k8s-agent-sandbox', '0.4.6')).toBeUndefined();
    for (const f of [K8S_AGENT_SANDBOX_0_5_6, K8S_AGENT_SANDBOX_1_0_8]) {
      expect([f.claimApiVersion, f.sandboxApiVersion]).toEqual([
        'extensions.agents.x-k8s.io/v1beta1',
        'agents.x-k8s.io/v1beta1',
      ]);
      expect(f.wheelSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(f.cite['claimApiVersion']).toBe(`k8s_agent_sandbox/constants.py@${f.version}`);
      for (const m of Object.values(f.modes)) expect(m!.cite).toContain(`@${f.version}`);
    }
  });

  test('0.5.6 has the python-runtime modes only, no extra_headers, and retries POST', () => {
    expect(Object.keys(K8S_AGENT_SANDBOX_0_5_6.modes).sort()).toEqual(['gateway', 'in-cluster', 'router', 'tunnel']);
    expect(K8S_AGENT_SANDBOX_0_5_6.extraHeaders).toBe(false);
    expect(K8S_AGENT_SANDBOX_1_0_8.extraHeaders).toBe(true);
    expect(K8S_AGENT_SANDBOX_0_5_6.retries.methods).toContain('POST');
    expect(K8S_AGENT_SANDBOX_1_0_8.retries.methods).not.toContain('POST');
    expect(K8S_AGENT_SANDBOX_0_5_6.modes.router!.calls[0]!.request).not.toContain('timeout_seconds');
  });
});
