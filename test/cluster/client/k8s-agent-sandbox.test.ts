/**
 * Client contract on v0.5.6 (the global cluster): the official Python client k8s-agent-sandbox 1.0.8 in router mode
 * through the test cluster's real Go sandbox-router to the upstream python runtime of v0.5.6 (the stand-in runs its
 * main.py per pod), against an environment AgentPlane synthesized. AGREEMENT: AgentPlane's verdict (runtime-exec and
 * runtime-files `verified`, the router's path to the runtime proven) holds iff every client call succeeds; the body is
 * agreement.ts, shared with k8s-agent-sandbox-v1.0.3.test.ts. The router capability itself stays below verified here for
 * other, correct reasons: the test cluster's router is a local process (no pod for the live admission check),
 * allow-all, and it dials loopback pod IPs, so it forwards the verifier's negative probes (case router-podip-ssrf). The
 * negative is the same environment with the runtime silent (stand-in mode `none`): the client fails and the verdict
 * stays below. Modes that cannot run on kwok are listed as skipped with the reason; the tunnel and router modes on real
 * pods with the in-cluster router: k8s-agent-sandbox-real-node.test.ts.
 */
import { K8S_AGENT_SANDBOX_1_0_8 } from '../../../src/releases/index.js';
import { RUN_DIR } from '../../../test-cluster/kube.js';
import { connect } from '../helpers.js';
import { agreementSuite } from './agreement.js';

/** Modes of the client this file does not drive on kwok, and why (ClientModeFacts of src/releases/client-sdk.ts). */
const NOT_HERE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(K8S_AGENT_SANDBOX_1_0_8.modes)
    .filter((m) => m.mode !== 'router')
    .map(
      (m) =>
        [
          m.mode,
          m.mode === 'tunnel'
            ? 'kubectl port-forward needs a real kubelet (kwok has none): runs on the real node, k8s-agent-sandbox-real-node.test.ts'
            : m.needsKubelet
              ? `${m.transport}: kubectl port-forward needs a real kubelet (kwok has none)`
              : m.runtimeApi === 'sandboxd'
                ? 'refused at synthesis: the pinned sandboxd binds 127.0.0.1 (packages/sandboxd/cmd/sandboxd/main.go@v0.5.6)'
                : m.mode === 'gateway'
                  ? 'needs a Gateway API implementation with an address (none in the test cluster)'
                  : 'dials pod IPs from inside the cluster network; the test process is outside it',
        ] as const,
    ),
);

agreementSuite({
  release: 'v0.5.6',
  cluster: { runDir: RUN_DIR, start: () => connect() },
  notHere: NOT_HERE,
  runIdPrefix: 'cc',
});
