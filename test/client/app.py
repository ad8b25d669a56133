"""An application using the official client k8s-agent-sandbox as its README shows: claim a sandbox from a warm pool,
run a command, write, read, list and check a file, and delete the sandbox. Prints one JSON object: each step's
outcome (`ok`, `value` or `error` with the exception's class). Used by the client contract test.

usage: app.py MODE NAMESPACE WARMPOOL [ROUTER_URL]   (KUBECONFIG names the cluster; in a pod, mode in-cluster, the
pod's ServiceAccount). MODE: router, tunnel, in-cluster (python runtime), sandboxd-in-cluster-pod-ip (sandboxd on
Sandbox.status.podIPs, REST 8080 + gRPC 9090; needs the client's `grpc` extra)
"""
import json
import sys

from k8s_agent_sandbox import SandboxClient
from k8s_agent_sandbox.models import (
    SandboxDirectConnectionConfig,
    SandboxInClusterConnectionConfig,
    SandboxLocalTunnelConnectionConfig,
    SandboxdInClusterConnectionConfig,
)


def main() -> int:
    mode, namespace, warmpool = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "router":
        config = SandboxDirectConnectionConfig(api_url=sys.argv[4])
    elif mode == "tunnel":
        config = SandboxLocalTunnelConnectionConfig()
    elif mode == "in-cluster":
        config = SandboxInClusterConnectionConfig()
    elif mode == "sandboxd-in-cluster-pod-ip":
        config = SandboxdInClusterConnectionConfig(mode="in-cluster-pod-ip")
    else:
        raise SystemExit(f"mode {mode} is not driven by this app")
    steps: dict[str, dict] = {}
    client = SandboxClient(connection_config=config)

    def step(name, fn):
        try:
            steps[name] = {"ok": True, "value": fn()}
        except Exception as e:  # the outcome is the point: record it and go on
            steps[name] = {"ok": False, "error": type(e).__name__, "message": str(e)[:300]}
        return steps[name]

    created = step("create", lambda: client.create_sandbox(warmpool=warmpool, namespace=namespace, sandbox_ready_timeout=90))
    if created["ok"]:
        sandbox = created["value"]
        created["value"] = {"claim": sandbox.claim_name, "sandbox": sandbox.sandbox_id}
        step("execute", lambda: sandbox.commands.run("echo hello", timeout=20).model_dump())
        if mode in ("in-cluster", "sandboxd-in-cluster-pod-ip"):  # the base URL the client dialled: the pod IP from Sandbox.status.podIPs, or its DNS name
            step("url", lambda: sandbox.connector.strategy.connect())
        step("write", lambda: sandbox.files.write("contract.txt", b"written by k8s-agent-sandbox", timeout=20))
        step("read", lambda: sandbox.files.read("contract.txt", timeout=20).decode())
        step("list", lambda: sorted(e.name for e in sandbox.files.list(".", timeout=20)))
        step("exists", lambda: sandbox.files.exists("contract.txt", timeout=20))
        step("delete", lambda: client.delete_sandbox(sandbox.claim_name, namespace=namespace))
    print(json.dumps(steps, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
