/**
 * `agentplane verify --sandbox <ns>/<name>`: checks the runtime of one existing Sandbox without creating anything
 * (case runtime-exec-starves-probe). The runtime kind and ports come from the pod's containers, per the pinned runtime specs (`packages/sandboxd/**@v0.5.6`,
 * `examples/python-runtime-sandbox/main.py@v0.5.6`):
 * a container named `sandboxd` (or an image named `…/sandboxd…`) is sandboxd — REST `/v1/health` on `--rest-port`
 * (8080) and gRPC on `--grpc-port` (9090), `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`; a container port 8888 is
 * the python runtime (`examples/python-runtime-sandbox/main.py@v0.5.6`). Never a single assumed port or path.
 * Evidence goes to `runtime-exec`: configured = Ready at the Sandbox's current generation with a pod IP;
 * verified = two nonce commands answered over the client's transport.
 */
import type { PodView } from '../../adapter/kubernetes/views.js';
import { sampleSize } from '../plan.js';
import type { Probe } from '../runner.js';
import type { RuntimeTarget } from '../runtime-prober.js';
import { Facts, reads, type ProbeDeps } from './common.js';
import { proveExecution } from './workload/runtime-proof.js';

function argPort(args: readonly string[], flag: string): number | undefined {
  for (let i = 0; i < args.length; i += 1) {
    const a = args[i]!;
    if (a.startsWith(`${flag}=`)) return Number(a.slice(flag.length + 1));
    if (a === flag && args[i + 1] !== undefined) return Number(args[i + 1]);
  }
  return undefined;
}

/** Runtime kind and ports of a pod from its containers (pure), or why none was recognised. */
export function runtimeOfPod(
  pod: PodView,
):
  | { kind: 'sandboxd'; rest: number; grpc: number }
  | { kind: 'python-runtime'; rest: number }
  | { kind: 'none'; why: string } {
  const { containers } = pod;
  const sandboxd = containers.find((c) => c.name === 'sandboxd' || /\/sandboxd[^/]*$/.test(c.image ?? ''));
  if (sandboxd) {
    const args = sandboxd.args;
    return { kind: 'sandboxd', rest: argPort(args, '--rest-port') ?? 8080, grpc: argPort(args, '--grpc-port') ?? 9090 };
  }
  if (containers.some((c) => c.ports.includes(8888))) return { kind: 'python-runtime', rest: 8888 };
  return {
    kind: 'none',
    why: `no container is sandboxd (name or image) and none exposes the python runtime port 8888 (containers: ${containers.map((c) => c.name).join(', ') || 'none'})`,
  };
}

export function existingSandboxProbe(deps: ProbeDeps, namespace: string, name: string): Probe {
  return {
    id: `sandbox/${namespace}/${name}`,
    after: [],
    covers: ['runtime-exec'],
    timeoutStep: 'verified',
    deadlineMs: 8 * deps.plan.probeTimeoutMs + 10_000,
    async run(ctx) {
      const f = new Facts('runtime-exec');
      const subject = `Sandbox ${namespace}/${name}`;
      const read = reads(deps);
      const r = await read.sandbox(namespace, name);
      if (r.kind !== 'ok') return f.failedCall('discovered', subject, r).list;
      if (!r.value) return f.add('discovered', 'missing', subject, 'SandboxNotFound', `${subject} does not exist`).list;
      const sb = r.value;
      const podName = sb.podName;
      const podR = await read.pod(namespace, podName);
      if (podR.kind !== 'ok') return f.failedCall('discovered', `pod ${namespace}/${podName}`, podR).list;
      if (!podR.value)
        return f.add(
          'discovered',
          'missing',
          `pod ${namespace}/${podName}`,
          'PodNotFound',
          `the Sandbox's pod ${podName} does not exist`,
        ).list;
      const rt = runtimeOfPod(podR.value);
      if (rt.kind === 'none')
        return f.add('discovered', 'missing', `pod ${namespace}/${podName}`, 'RuntimeNotRecognised', rt.why).list;
      f.proven(
        'discovered',
        `pod ${namespace}/${podName}`,
        'RuntimeDeclared',
        `pod runs ${rt.kind} (${rt.kind === 'sandboxd' ? `REST ${rt.rest}, gRPC ${rt.grpc}` : `HTTP ${rt.rest}`})`,
      );
      f.proven(
        'compatible',
        `pod ${namespace}/${podName}`,
        'RuntimeSpoken',
        `${rt.kind} is a runtime the adapter speaks`,
      );
      const { phase } = sb;
      const { ip: podIP, ready: podReady } = podR.value;
      const podState = `pod ${podName} Ready=${podReady ? 'True' : 'False'}${podIP ? ` IP ${podIP}` : ''}`;
      if (phase.phase !== 'Ready')
        return f.add('configured', 'unknown', subject, 'SandboxNotReady', `not Ready: ${phase.message}; ${podState}`)
          .list;
      f.proven('configured', subject, 'SandboxReady', `${phase.message}; ${podState}`);
      const target: RuntimeTarget = {
        kind: rt.kind,
        transport: deps.plan.transport,
        namespace,
        sandbox: name,
        pod: podName,
        ...(podR.value.meta.uid ? { podUid: podR.value.meta.uid } : {}),
        ...(podIP ? { podIP } : {}),
        restPort: rt.rest,
        ...(rt.kind === 'sandboxd' ? { grpcPort: rt.grpc } : {}),
      };
      ctx.note(`asking ${rt.kind} in ${name} over ${deps.plan.transport}`);
      await proveExecution(
        deps.runtime,
        target,
        {
          probeTimeoutMs: deps.plan.probeTimeoutMs,
          runId: deps.workload.runId,
          samples: sampleSize(deps.plan),
          signal: ctx.signal,
        },
        f,
        podState,
      );
      return f.list;
    },
  };
}
