/**
 * Client contract on Agent Sandbox v1.0.3 (agreement: verified ⇔ the official client's calls succeed; body in
 * agreement.ts): k8s-agent-sandbox 1.0.8 — the client of the v1.0 family (SandboxClaim and Sandbox at v1beta1 only,
 * `k8s_agent_sandbox/constants.py@1.0.8`) — in router mode, on a v1.0.3 cluster of this file's own (secondCluster: own
 * run dir, pod net and release, kwok nodes only), through the real v1.0.3 Go sandbox-router (header contract unchanged
 * from v0.5.6, `sandbox-router/proxy/headers.go@v1.0.3`) to the upstream python runtime of v1.0.3 (the stand-in runs
 * `examples/python-runtime-sandbox/main.py@v1.0.3` per pod). The environment is synthesized from `loadRelease('v1.0.3')`.
 * Positive (runtime answers) and negative (runtime silent, stand-in mode `none`). Also mode sandboxd-in-cluster-pod-ip:
 * the client straight to v1.0.3's sandboxd, which binds the pod IP (`--listen-host`,
 * `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`), over REST 8080 and gRPC 9090 (the client's `grpc` extra); that
 * environment declares the client (synthesis accepts it on v1.0.x, whose sandboxd listens on the pod network). Modes not
 * driven here are listed as skipped with the reason.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { K8S_AGENT_SANDBOX_1_0_8 } from '../../../src/releases/index.js';
import { secondCluster } from '../helpers.js';
import { agreementSuite } from './agreement.js';

const cluster = secondCluster('client-v1.0.3', { release: 'v1.0.3', podNet: 16 });

/** Modes of the client this file does not drive on kwok, and why (ClientModeFacts of src/releases/client-sdk.ts). */
const NOT_HERE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(K8S_AGENT_SANDBOX_1_0_8.modes)
    .filter((m) => m.mode !== 'router' && m.mode !== 'sandboxd-in-cluster-pod-ip')
    .map(
      (m) =>
        [
          m.mode,
          m.needsKubelet
            ? `${m.transport}: kubectl port-forward needs a real kubelet (kwok has none); the real node runs v0.5.6 images only`
            : m.needsService
              ? 'dials Sandbox.status.serviceFQDN (<name>.<ns>.svc.cluster.local, a template with service: true): no cluster DNS serves the test process'
              : m.mode === 'gateway'
                ? 'needs a Gateway API implementation with an address (none in the test cluster)'
                : 'dials pod IPs from inside the cluster network with the pod ServiceAccount; the test process is outside it',
        ] as const,
    ),
);

agreementSuite({
  release: 'v1.0.3',
  cluster,
  notHere: NOT_HERE,
  runIdPrefix: 'cd',
  sandboxdPodIP: { declared: true },
  checkHealthy: (c, served) => {
    // The stand-in ran v1.0.3's own main.py (checked against its SHA256SUMS) for the pool's pod …
    const py = served.filter((r) => r.mode === 'python-runtime');
    expect(py.length).toBeGreaterThan(0);
    for (const r of py) expect(r.runtimeDir).toMatch(/[/\\]python-runtime-sandbox[/\\]v1\.0\.3$/);
    // … behind the v1.0.3 router binary.
    const pid = readFileSync(path.join(cluster.runDir, 'pids', 'sandbox-router.pid'), 'utf8').trim();
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(argv.some((a) => a.includes(`${path.sep}agent-sandbox-v1.0.3${path.sep}`))).toBe(true);
    expect(c.info.release).toBe('v1.0.3');
  },
});
