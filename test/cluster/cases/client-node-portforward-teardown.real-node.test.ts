/**
 * Case client-node-portforward-teardown, on the real node (API server -> kubelet -> containerd -> the pod, the default
 * transport): (a) a pod whose runtime does not listen: every health call settles as `silent` within its deadline and
 * the reason is the kubelet's error-channel text when the API server relayed it, never data; (b) the probe pod deleted
 * while sample 20 of 50 is in flight (the controller makes a new pod under the same name): runtime-exec is not
 * verified, reason `RuntimePodReplaced`; (c) a sandboxd file over the 4 MiB response cap: `RuntimeAnswerTooLarge`,
 * decided at once, not a timeout. Throughout: no uncaught exception or unhandled rejection, and no active handle left
 * behind.
 */
import * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { Cluster as AdapterCluster } from '../../../src/adapter/kubernetes/cluster.js';
import { ClusterReads } from '../../../src/adapter/kubernetes/reads.js';
import { runVerify } from '../../../src/verify/index.js';
import { runtimeFailureReason } from '../../../src/verify/probes/workload/runtime-proof.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { AdapterRuntimeProber, type RuntimeProber, type RuntimeTarget } from '../../../src/verify/runtime-prober.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { describeRealNode, NODE_TOOLS_IMAGE, onRealNode, realNode, waitRunning } from '../real-node-helpers.js';
import { EXT, plan, templatePlan } from '../verify/verifier-env.js';

describeRealNode('client-node-portforward-teardown', () => {
  let c: Cluster;
  let ns: string;
  let client: KubeClient;
  const uncaught: unknown[] = [];
  const record = (e: unknown): void => {
    uncaught.push(e);
  };

  function sandboxdContainer(silent: boolean): k8s.V1Container {
    return {
      name: 'sandboxd',
      image: NODE_TOOLS_IMAGE,
      imagePullPolicy: 'Never',
      ...(silent
        ? { command: ['/bin/sleep', '3600'] }
        : { args: ['--grpc-port=9090', '--rest-port=8080', '--root-dir=/workspace'] }),
      volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
    };
  }

  function podSpec(silent: boolean): k8s.V1PodSpec {
    return {
      ...onRealNode(realNode(c)),
      terminationGracePeriodSeconds: 1,
      containers: [sandboxdContainer(silent)],
      volumes: [{ name: 'workspace', emptyDir: {} }],
    };
  }

  /** A pod named `<base>-<random>`, so a retried test makes its own. */
  async function barePod(base: string, silent: boolean): Promise<RuntimeTarget> {
    const name = `${base}-${Math.random().toString(36).slice(2, 7)}`;
    await c.core.createNamespacedPod({ namespace: ns, body: { metadata: { name }, spec: podSpec(silent) } });
    const pod = await waitRunning(c, ns, name);
    return {
      kind: 'sandboxd',
      transport: 'port-forward',
      namespace: ns,
      sandbox: name,
      pod: name,
      podUid: pod.metadata!.uid!,
      restPort: 8080,
      grpcPort: 9090,
    };
  }

  function prober(): AdapterRuntimeProber {
    const reads = new ClusterReads(new AdapterCluster(client));
    return new AdapterRuntimeProber({ client, pods: (namespace, name) => reads.pod(namespace, name) });
  }

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'pfteardown');
    client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
  }, 60_000);

  afterAll(async () => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  // The kubelet's refusal reaches the client only when the API server relays the error frame before it closes the
  // forward: under load about 1 call in 50 closed with no error frame at all (seen twice in CI runs, and the text
  // is read as it arrives, so none was lost on our side). Such a call must still settle silent, with the reset as
  // its reason, never data; the kubelet's text must be the reason of all the others.
  test('(a) nothing listens in the pod: 50 health calls settle silent, with the kubelet refusal as reason when it came', async () => {
    const target = await barePod('silent', true);
    const handlesBefore = process.getActiveResourcesInfo().length;
    const p = prober();
    const durations: number[] = [];
    const details: string[] = [];
    for (let i = 0; i < 50; i += 1) {
      const r = await p.health(target, 5_000);
      expect(r.kind).toBe('silent');
      if (r.kind === 'answered') continue;
      expect(runtimeFailureReason(r)).toBe('RuntimeSilent');
      durations.push(r.durationMs);
      details.push(r.detail);
    }
    await p.close();
    await new Promise((r) => setTimeout(r, 500));
    const handlesAfter = process.getActiveResourcesInfo().length;
    // prose: the reason is the kubelet's error-channel text (a sentence from the kubelet, no code of ours to match)
    const kubelet = details.filter((d) => /connection refused on port 8080 \(kubelet: .*connection refused/.test(d));
    const other = details.filter((d) => !kubelet.includes(d));
    process.stderr.write(
      `(a) 50 refused health calls: median ${durations.sort((x, y) => x - y)[25]} ms, max ${durations.at(-1)} ms; kubelet reason ${kubelet.length}/50; active resources ${handlesBefore} -> ${handlesAfter}\n`,
    );
    expect(Math.max(...durations)).toBeLessThan(5_000);
    expect(other.filter((d) => !/: ECONNRESET$/.test(d))).toEqual([]);
    expect(kubelet.length).toBeGreaterThanOrEqual(45);
    expect(handlesAfter).toBeLessThanOrEqual(handlesBefore);
    expect(uncaught).toEqual([]);
  }, 180_000);

  test('(c) a file over the 4 MiB response cap is too large, decided at once, 10 of 10', async () => {
    const target = await barePod('big', false);
    const p = prober();
    const w = await p.execute(target, ['sh', '-c', 'head -c 6291456 /dev/zero > /workspace/big.bin'], 20_000);
    expect(w).toMatchObject({ kind: 'answered', value: { exitCode: 0 } });
    const durations: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const r = await p.readFile(target, 'big.bin', 20_000);
      expect(r.kind).toBe('error');
      if (r.kind === 'answered') continue;
      expect(runtimeFailureReason(r)).toBe('RuntimeAnswerTooLarge');
      durations.push(r.durationMs);
    }
    await p.close();
    process.stderr.write(`(c) 10 over-cap reads: max ${Math.max(...durations)} ms (deadline 20000 ms)\n`);
    expect(Math.max(...durations)).toBeLessThan(10_000);
    expect(uncaught).toEqual([]);
  }, 180_000);

  test('(b) the probe pod deleted while sample 20 of 50 is in flight: runtime-exec is not verified', async () => {
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxTemplate',
        metadata: { name: 'pf', namespace: ns },
        spec: { podTemplate: { metadata: { labels: { app: 'sandbox' } }, spec: podSpec(false) } },
      },
    });
    const real = prober();
    const deleted: { pod?: string; uid?: string | undefined; at?: number } = {};
    let executes = 0;
    // The real prober; at the 20th Execute the test deletes the pod that call goes to, without waiting for either.
    const runtime: RuntimeProber = {
      health: (t, d, via) => real.health(t, d, via),
      execute: (t, argv, d, via) => {
        executes += 1;
        if (executes === 20) {
          deleted.pod = t.pod;
          deleted.uid = t.podUid;
          deleted.at = Date.now();
          void c.core.deleteNamespacedPod({ namespace: ns, name: t.pod }).catch(record);
        }
        return real.execute(t, argv, d, via);
      },
      fileRoundTrip: (t, path, content, d, via) => real.fileRoundTrip(t, path, content, d, via),
      readFile: (t, path, d) => real.readFile(t, path, d),
      close: () => real.close(),
    };
    const { report } = await runVerify({
      plan: plan(c, [templatePlan(ns, 'pf')], {
        transport: 'port-forward',
        samples: 50,
        probeTimeoutMs: 5_000,
        readyTimeoutMs: 90_000,
        requirements: requirementsFor(['runtime-exec', `template/${ns}/pf`]),
      }),
      client,
      runtime,
      controllerMode: 'external',
      progress: () => undefined,
    });
    // runVerify closes only a prober it made itself.
    await real.close();
    const exec = report.capabilities.find((r) => r.name === 'runtime-exec')!;
    const voided = exec.evidence.find((e) => e.step === 'verified' && e.reason === 'RuntimePodReplaced');
    process.stderr.write(
      `(b) deleted ${deleted.pod} uid ${deleted.uid} at execute 20; executes ${executes}; runtime-exec ${exec.state}; ${voided?.value}: ${voided?.message}\n`,
    );
    expect(deleted.uid).toBeDefined();
    expect(exec.state).not.toBe('verified');
    expect(voided).toMatchObject({ verdict: 'unknown' });
    expect(exec.evidence.some((e) => e.reason === 'NonceEchoed' && e.verdict === 'proven')).toBe(false);
    expect(uncaught).toEqual([]);
  }, 240_000);
});
