/**
 * The real node proves itself before up.sh reports success (case test-node-runsc-registration): success is never
 * inferred from binaries being present. Checks, in order; the first that fails ends the run with
 * `node check failed: <Check>: <what was seen>` on stderr and exit 1:
 *
 * - `YamaPtraceScope`: systrap attaches with ptrace; Yama scope 3 (or 2 without `directfs = false`) kills the sandbox
 *   at start (google/gvisor#10495).
 * - `CriConfigSchema`: the containerd config's `version` picks the CRI runtime plugin ID (3: `io.containerd.cri.v1.runtime`,
 *   2: `io.containerd.grpc.v1.cri`); runtime tables under the other ID are ignored by containerd without a word.
 * - `CriHandlerListed` / `CriHandlerOptions`: the CRI itself (RuntimeService.Status, verbose, over containerd's socket —
 *   not `ctr`, which bypasses the CRI options) lists `runc` and `runsc`, runsc with shim type `io.containerd.runsc.v1`
 *   and the expected `ConfigPath`, runc with `io.containerd.runc.v2`.
 * - `CanaryRunsc` / `CanaryRunc`: a pod per handler, created through the API server, prints its kernel identity from
 *   files; the runsc pod must show a kernel unlike the node's and a gVisor marker (src/verify/probes/isolation.ts, the
 *   verifier's own classification), the runc pod the node's kernel. A permanent FailedCreatePodSandBox ends the wait.
 * - `RunscBootLog`: the runsc debug log of that sandbox names the platform (`Platform: systrap`).
 * - `RunscSidecars`: runsc booted the Sentry from its on-disk sidecar (`Sidecar "gvisor_sentry" found`) and no log
 *   says it executed an embedded copy (deprecated, stops working after 2026-10). The C prewarmer is not in the Go
 *   module (build.sh), so its missing-sidecar warning stays.
 *
 * Usage: node --import tsx node-check.ts <containerd.toml> <containerd socket> <kubeconfig> <node> <runsc.toml> <runsc log dir> <image>
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as k8s from '@kubernetes/client-node';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { eventView } from '../src/adapter/kubernetes/views.js';
import { classifyIsolation } from '../src/verify/probes/isolation.js';
import { permanentPodFault } from '../src/verify/probes/pod-fault.js';

/** The checks, in the order they run; a failure names one. */
export type NodeCheck =
  | 'YamaPtraceScope'
  | 'CriConfigSchema'
  | 'CriHandlerListed'
  | 'CriHandlerOptions'
  | 'CanaryRunsc'
  | 'CanaryRunc'
  | 'RunscBootLog'
  | 'RunscSidecars';

class CheckFailed extends Error {
  constructor(
    readonly check: NodeCheck,
    seen: string,
  ) {
    super(`${check}: ${seen}`);
  }
}

const fail = (check: NodeCheck, seen: string): never => {
  throw new CheckFailed(check, seen);
};

/** The CRI runtime plugin ID for a containerd config schema version. */
export function criRuntimePluginId(schema: number): string {
  return schema >= 3 ? 'io.containerd.cri.v1.runtime' : 'io.containerd.grpc.v1.cri';
}

/** The `version = N` of a containerd config (1 when absent, as containerd reads it). */
export function configSchema(toml: string): number {
  const m = /^\s*version\s*=\s*(\d+)/m.exec(toml);
  return m ? Number(m[1]) : 1;
}

function yama(runscToml: string): void {
  const file = '/proc/sys/kernel/yama/ptrace_scope';
  if (!existsSync(file)) return;
  const scope = Number(readFileSync(file, 'utf8').trim());
  const directfsOff = /^\s*directfs\s*=\s*"?false"?/m.test(runscToml);
  if (scope >= 3 || (scope === 2 && !directfsOff))
    fail(
      'YamaPtraceScope',
      `kernel.yama.ptrace_scope = ${scope}: systrap cannot attach (directfs off: ${directfsOff})`,
    );
}

function schema(containerdToml: string): void {
  const want = criRuntimePluginId(configSchema(containerdToml));
  const tables = [...containerdToml.matchAll(/^\s*\[plugins\."([^"]+)"\.containerd\.runtimes\.(\w+)\]/gm)];
  const wrong = tables.filter((t) => t[1] !== want).map((t) => `${t[1]} (${t[2]})`);
  if (wrong.length > 0)
    fail(
      'CriConfigSchema',
      `config version ${configSchema(containerdToml)} reads ${want}, runtimes written under ${wrong.join(', ')}`,
    );
}

interface CriStatus {
  readonly handlers: string[];
  readonly runtimes: Record<string, { runtimeType?: string; options?: Record<string, unknown> }>;
}

async function criStatus(socket: string): Promise<CriStatus> {
  const def = protoLoader.loadSync(path.join(import.meta.dirname, 'cri-status.proto'), { keepCase: false });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    runtime: { v1: { RuntimeService: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client } };
  };
  const client = new pkg.runtime.v1.RuntimeService(`unix://${socket}`, grpc.credentials.createInsecure());
  try {
    const res = await new Promise<{ info?: Record<string, string>; runtimeHandlers?: { name: string }[] }>((ok, ko) =>
      (client as unknown as { status: (r: object, o: object, cb: (e: Error | null, v: never) => void) => void }).status(
        { verbose: true },
        { deadline: Date.now() + 10_000 },
        (e, v) => (e ? ko(e) : ok(v)),
      ),
    );
    const config = JSON.parse(res.info?.['config'] ?? '{}') as { containerd?: { runtimes?: CriStatus['runtimes'] } };
    return { handlers: (res.runtimeHandlers ?? []).map((h) => h.name), runtimes: config.containerd?.runtimes ?? {} };
  } finally {
    client.close();
  }
}

function handlers(s: CriStatus, runscToml: string): void {
  for (const h of ['runc', 'runsc'])
    if (!s.handlers.includes(h) && !(h in s.runtimes))
      fail('CriHandlerListed', `the CRI lists handlers [${s.handlers.join(', ')}], not ${h}`);
  const runsc = s.runtimes['runsc'] ?? {};
  const runc = s.runtimes['runc'] ?? {};
  const configPath = runsc.options?.['ConfigPath'];
  if (runsc.runtimeType !== 'io.containerd.runsc.v1' || configPath !== runscToml)
    fail(
      'CriHandlerOptions',
      `runsc is ${runsc.runtimeType ?? '?'} with ConfigPath ${String(configPath ?? '-')}, want io.containerd.runsc.v1 with ${runscToml}`,
    );
  if (runc.runtimeType !== 'io.containerd.runc.v2')
    fail('CriHandlerOptions', `runc is ${runc.runtimeType ?? '?'}, want io.containerd.runc.v2`);
}

const NS = 'agentplane-node-check';
const RC = 'agentplane-node-check-runsc';

/** Runs a pod printing its kernel identity from files; its log lines, or the check fails. */
async function canary(
  kc: k8s.KubeConfig,
  check: NodeCheck,
  node: string,
  image: string,
  name: string,
  runtimeClassName?: string,
): Promise<{ osrelease?: string; procVersion?: string }> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.deleteNamespacedPod({ namespace: NS, name, gracePeriodSeconds: 0 }).catch(() => undefined);
  for (let i = 0; i < 50; i += 1) {
    const gone = await core.readNamespacedPod({ namespace: NS, name }).then(
      () => false,
      () => true,
    );
    if (gone) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: { name },
      spec: {
        nodeName: node,
        restartPolicy: 'Never',
        ...(runtimeClassName ? { runtimeClassName } : {}),
        tolerations: [{ operator: 'Exists' }],
        terminationGracePeriodSeconds: 0,
        containers: [
          {
            name: 'main',
            image,
            imagePullPolicy: 'Never',
            // One line each (gVisor's osrelease has no trailing newline).
            command: [
              '/bin/sh',
              '-c',
              'printf "osrelease=%s\\n" "$(cat /proc/sys/kernel/osrelease)"; printf "version=%s\\n" "$(cat /proc/version)"',
            ],
          },
        ],
      },
    },
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const pod = await core.readNamespacedPod({ namespace: NS, name });
    const phase = pod.status?.phase;
    if (phase === 'Succeeded') break;
    if (phase === 'Failed')
      fail(check, `pod ${NS}/${name} failed: ${JSON.stringify(pod.status?.containerStatuses?.[0]?.state)}`);
    const ev = await core.listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name}` });
    const fault = permanentPodFault(
      ev.items.map((e) => eventView(e as never)),
      new Set([name]),
    );
    if (fault) fail(check, `pod ${NS}/${name} on ${fault.node}: FailedCreatePodSandBox: ${fault.message}`);
    if (Date.now() > deadline) fail(check, `pod ${NS}/${name} not done within 90 s (phase ${phase ?? '?'})`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const log = await core.readNamespacedPodLog({ namespace: NS, name, container: 'main' });
  const field = (key: string) => new RegExp(`^${key}=(.+)$`, 'm').exec(log)?.[1]?.trim();
  const osrelease = field('osrelease');
  const procVersion = field('version');
  return { ...(osrelease ? { osrelease } : {}), ...(procVersion ? { procVersion } : {}) };
}

/** The runsc debug logs written since `since`: the boot logs name the platform, and the Sentry came from its sidecar. */
function runscLogs(dir: string, since: number, platform: string): void {
  const logs = readdirSync(dir)
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= since)
    .map((f) => ({ f, text: readFileSync(f, 'utf8') }));
  const boots = logs.filter((l) => path.basename(l.f).includes('boot'));
  if (boots.length === 0) fail('RunscBootLog', `no runsc boot log in ${dir} since the canary started`);
  if (!boots.some((l) => l.text.includes(`Platform: ${platform}`)))
    fail('RunscBootLog', `no boot log since the canary names "Platform: ${platform}" (${boots.length} read)`);
  // The prewarmer's own warning shares the deprecation sentence but has no embedded copy; it is not in the Go module.
  const embedded = logs.find((l) =>
    /Executing embedded copy of sidecar|Sidecar "gvisor_sentry" not usable/.test(l.text),
  );
  if (embedded) fail('RunscSidecars', `${path.basename(embedded.f)}: runsc fell back to an embedded sidecar`);
  if (!logs.some((l) => l.text.includes('Sidecar "gvisor_sentry" found')))
    fail('RunscSidecars', `no runsc log since the canary says it booted from the gvisor_sentry sidecar`);
}

async function main(argv: readonly string[]): Promise<void> {
  const [containerdToml, socket, kubeconfig, node, runscToml, runscLogDir, image] = argv;
  if (!image)
    throw new Error(
      'usage: node-check.ts <containerd.toml> <socket> <kubeconfig> <node> <runsc.toml> <runsc log dir> <image>',
    );
  const runscText = readFileSync(runscToml!, 'utf8');
  yama(runscText);
  schema(readFileSync(containerdToml!, 'utf8'));
  handlers(await criStatus(socket!), runscToml!);

  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig!);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } }).catch(() => undefined);
  const nodeApi = kc.makeApiClient(k8s.NodeV1Api);
  await nodeApi.deleteRuntimeClass({ name: RC }).catch(() => undefined);
  await nodeApi.createRuntimeClass({ body: { metadata: { name: RC }, handler: 'runsc' } });
  const nodeKernel = (await core.readNode({ name: node! })).status?.nodeInfo?.kernelVersion;
  const started = Date.now();
  try {
    const [gv, rc] = await Promise.all([
      canary(kc, 'CanaryRunsc', node!, image, 'runsc', RC),
      canary(kc, 'CanaryRunc', node!, image, 'runc'),
    ]);
    const base = { runtimeClassName: RC, handler: 'runsc', ...(nodeKernel ? { nodeKernel } : {}) };
    const g = classifyIsolation('gvisor', { ...base, ...gv });
    const bad = g.filter((x) => x.verdict !== 'proven');
    if (bad.length > 0) fail('CanaryRunsc', bad.map((x) => `${x.reason} ${x.value ?? ''}`.trim()).join('; '));
    const r = classifyIsolation('gvisor', { ...base, handler: 'runc', ...rc });
    if (r[0]?.reason !== 'HostKernel')
      fail('CanaryRunc', `a runc pod should read the node's kernel ${nodeKernel ?? '?'}, read ${rc.osrelease ?? '?'}`);
    const platform = /^\s*platform\s*=\s*"([^"]+)"/m.exec(runscText)?.[1] ?? 'systrap';
    runscLogs(runscLogDir!, started, platform);
    process.stdout.write(
      `node check: CRI lists runc and runsc (ConfigPath ${runscToml}); runsc canary kernel ${gv.osrelease ?? '?'} vs node ${nodeKernel ?? '?'}, marker ${g[1]?.field ?? '?'}; runc canary on the host kernel; boot log names ${platform}; Sentry from its sidecar\n`,
    );
  } finally {
    await core.deleteNamespacedPod({ namespace: NS, name: 'runsc', gracePeriodSeconds: 0 }).catch(() => undefined);
    await core.deleteNamespacedPod({ namespace: NS, name: 'runc', gracePeriodSeconds: 0 }).catch(() => undefined);
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`node check failed: ${e instanceof CheckFailed ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
