/**
 * Runtime stand-in for kwok pods (kwok simulates pod status only; no container ever runs).
 *
 * For every Running pod with a pod IP whose spec carries a sandboxd container (container named `sandboxd`, or an
 * image whose last path segment starts with `sandboxd`), it starts a real sandboxd (the binary up.sh names: v0.5.6's,
 * or the release's own on v1.0.3; unprivileged uid 65534 when run as root, its own root dir). v0.5.6's sandboxd binds
 * 127.0.0.1 only (hard-wired, `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`), so it listens on two free 127.0.0.1
 * ports and the stand-in forwards `<podIP>:<restPort>` and `<podIP>:<grpcPort>` to them. With
 * AGENTPLANE_SANDBOXD_LISTEN_HOST=1 (v1.0.3, whose sandboxd has `--listen-host`,
 * `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`) sandboxd binds `<podIP>:<restPort>` and `<podIP>:<grpcPort>` itself,
 * as it does on a pod network, and nothing is forwarded. Either way router -> pod IP -> sandboxd is the real path. The
 * runtime ports are the container's `--rest-port` / `--grpc-port` args, else sandboxd's defaults 8080 / 9090.
 *
 * For a pod whose container is the upstream python runtime (image `…/python-runtime-sandbox…`, container
 * `python-runtime`, or the annotation below set to `python-runtime`), it runs that runtime's own main.py of the cluster's
 * release (data in `runtimes/python-runtime-sandbox/<tag>/` beside the release mirror: v1.0.3's on a v1.0.3 cluster,
 * v0.5.6's on every other — no other tag is kept there; checked against its SHA256SUMS at every start, never copied) with uvicorn from the client venv (test/client/setup-venv.sh) on a free 127.0.0.1 port and forwards
 * `<podIP>:<containerPort, default 8888>` to it. main.py works in the fixed directory /app, so (as root) each one runs in a
 * private mount namespace with the pod's own directory bound at /app.
 *
 * Pod annotation `test-cluster.agentplane.io/runtime` (see test-cluster/README.md):
 *   `sandboxd` (default) — as above;  `python-runtime` — the python runtime as above;  `none` — nothing listens on the
 *   pod IP (runtime silent);  `hang` — the pod IP ports accept TCP connections and never answer.
 *
 * sandboxd gets SANDBOX_POD_NAME / SANDBOX_POD_NAMESPACE / SANDBOX_POD_IP in its environment (visible on GET /v1/metadata).
 * State: `<run>/runtimes.json` (array of RuntimeRecord), pid files `<run>/pids/sandboxd-<pod uid>.pid`, logs
 * `<run>/logs/sandboxd-<ns>.<pod>.log`. Started by up.sh (env AGENTPLANE_TEST_CLUSTER_RUN, AGENTPLANE_SANDBOXD_BIN,
 * AGENTPLANE_SANDBOXD_LISTEN_HOST, AGENTPLANE_TEST_CLUSTER_RELEASE).
 */
import * as k8s from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { kubeConfigFrom } from './kube.js';
import {
  checkSums,
  clientVenv,
  pythonRuntimeDir,
  pythonRuntimeSpawn,
  type PythonRuntimeTag,
} from './python-runtime.js';
import { RUNTIME_ANNOTATION, type RuntimeMode as Mode, type RuntimeRecord } from './runtime.js';

interface Runtime {
  record: RuntimeRecord;
  servers: net.Server[];
  sockets: Set<net.Socket>;
  child?: ChildProcess;
  rootDir?: string;
}

const run = mustEnv('AGENTPLANE_TEST_CLUSTER_RUN');
const sandboxdBin = mustEnv('AGENTPLANE_SANDBOXD_BIN');
/** `1`: the sandboxd binary has `--listen-host` (v1.0.x) and binds the pod IP itself instead of being forwarded to. */
const listenOnPodIP = process.env['AGENTPLANE_SANDBOXD_LISTEN_HOST'] === '1';
/** The cluster's release (up.sh passes it): picks the python runtime's main.py. */
const clusterRelease = process.env['AGENTPLANE_TEST_CLUSTER_RELEASE'];
const kc = kubeConfigFrom(path.join(run, 'kubeconfig'));
const core = kc.makeApiClient(k8s.CoreV1Api);
const runtimes = new Map<string, Runtime>();
/** Pods whose runtime failed to start (uid -> time), retried after RETRY_AFTER_MS. */
const failedAt = new Map<string, number>();
const RETRY_AFTER_MS = 5000;
const asRoot = process.getuid?.() === 0;
const UNPRIVILEGED = 65534;
let stopping = false;
/** The python runtime's port (`examples/python-runtime-sandbox/Dockerfile@v0.5.6`: uvicorn --port 8888). */
const PYTHON_RUNTIME_PORT = 8888;

process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());

// The pods come from a list-and-watch cache, as a kubelet's do: each change reconciles at once, and an idle cluster
// costs the API server nothing (polling the full pod list 4 times a second did, on cores shared with what is tested).
const pods = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces({}));
let reconciling: Promise<void> | undefined;
let again = false;
/** Reconciles now, or once more after the reconcile in progress: never two at a time. */
function kick(): void {
  if (stopping) return;
  if (reconciling) {
    again = true;
    return;
  }
  reconciling = reconcile(pods.list())
    .catch((err: unknown) => {
      process.stderr.write(`reconcile failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
    })
    .finally(() => {
      reconciling = undefined;
      if (again) {
        again = false;
        kick();
      }
    });
}
for (const event of ['add', 'update', 'delete'] as const) pods.on(event, kick);
// The informer stops on a failed list or watch; it lists and watches again after a pause, until that works.
const restart = (err: unknown): void => {
  process.stderr.write(`pod watch failed, restarting in 1s: ${err instanceof Error ? err.message : String(err)}\n`);
  setTimeout(() => void pods.start().catch(restart), 1000);
};
pods.on('error', restart);
// The first start waits for the API server to answer, as the polling loop did before it.
for (;;) {
  try {
    await core.listPodForAllNamespaces({ limit: 1 });
    break;
  } catch {
    await sleep(250);
  }
}
await pods.start().catch(restart);
kick();
await reconciling;
writeFileSync(path.join(run, 'runtime-standin.ready'), `${process.pid}\n`);
// Failed starts are retried after RETRY_AFTER_MS even when no pod changes; this reads only the cache (and keeps the
// process alive while the watch is down).
setInterval(kick, RETRY_AFTER_MS);

async function reconcile(list: readonly k8s.V1Pod[]): Promise<void> {
  const wanted = new Map<string, k8s.V1Pod>();
  for (const pod of list) {
    const uid = pod.metadata?.uid;
    // Only kwok pods (loopback pod IPs): a pod on the real node runs its own sandboxd in its own network namespace.
    if (
      uid &&
      pod.status?.phase === 'Running' &&
      pod.status.podIP?.startsWith('127.') &&
      !pod.metadata?.deletionTimestamp &&
      (sandboxdContainer(pod) || pythonRuntimeContainer(pod))
    )
      wanted.set(uid, pod);
  }
  let changed = false;
  for (const [uid, rt] of runtimes) {
    if (!wanted.has(uid) || wanted.get(uid)?.status?.podIP !== rt.record.podIP) {
      await teardown(rt);
      runtimes.delete(uid);
      changed = true;
    }
  }
  for (const [uid, pod] of wanted) {
    if (runtimes.has(uid) || (failedAt.get(uid) ?? 0) > Date.now() - RETRY_AFTER_MS) continue;
    try {
      runtimes.set(uid, await startRuntime(pod));
      failedAt.delete(uid);
      changed = true;
    } catch (err) {
      failedAt.set(uid, Date.now());
      process.stderr.write(
        `runtime for ${pod.metadata?.namespace}/${pod.metadata?.name} (${pod.status?.podIP}) not started, retry in ${RETRY_AFTER_MS / 1000}s: ${err instanceof Error ? err.message : String(err)}\n`,
      );
    }
  }
  for (const uid of failedAt.keys()) if (!wanted.has(uid)) failedAt.delete(uid);
  if (changed) writeState();
}

function sandboxdContainer(pod: k8s.V1Pod): k8s.V1Container | undefined {
  return pod.spec?.containers.find(
    (c) => c.name === 'sandboxd' || /(^|\/)sandboxd[^/]*$/.test((c.image ?? '').split(/[:@]/)[0] ?? ''),
  );
}

/** The python runtime container: by the annotation (else the first container), by name `python-runtime`, or by image `…/python-runtime-sandbox…`. */
function pythonRuntimeContainer(pod: k8s.V1Pod): k8s.V1Container | undefined {
  const cs = pod.spec?.containers ?? [];
  if (pod.metadata?.annotations?.[RUNTIME_ANNOTATION] === 'python-runtime')
    return cs.find((c) => c.name === 'python-runtime') ?? cs[0];
  return cs.find(
    (c) =>
      c.name === 'python-runtime' || /(^|\/)python-runtime-sandbox[^/]*$/.test((c.image ?? '').split(/[:@]/)[0] ?? ''),
  );
}

function portArg(c: k8s.V1Container, flag: string, dflt: number): number {
  const args = [...(c.command ?? []), ...(c.args ?? [])];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith(`${flag}=`)) return Number(a.slice(flag.length + 1));
    if (a === flag && args[i + 1]) return Number(args[i + 1]);
  }
  return dflt;
}

async function startRuntime(pod: k8s.V1Pod): Promise<Runtime> {
  const ann = pod.metadata?.annotations?.[RUNTIME_ANNOTATION];
  const sd = sandboxdContainer(pod);
  const py =
    ann === 'python-runtime' || (ann !== 'sandboxd' && sd === undefined) ? pythonRuntimeContainer(pod) : undefined;
  const c = (py ?? sd)!;
  const ns = pod.metadata!.namespace!,
    name = pod.metadata!.name!,
    uid = pod.metadata!.uid!,
    podIP = pod.status!.podIP!;
  const mode: Mode = ann === 'none' || ann === 'hang' ? ann : py !== undefined ? 'python-runtime' : 'sandboxd';
  const pyPort = py?.ports?.[0]?.containerPort ?? PYTHON_RUNTIME_PORT;
  const restPort = py !== undefined ? pyPort : portArg(c, '--rest-port', 8080),
    grpcPort = py !== undefined ? pyPort : portArg(c, '--grpc-port', 9090);
  const rt: Runtime = {
    record: {
      namespace: ns,
      pod: name,
      uid,
      podIP,
      mode,
      restPort,
      grpcPort,
      localRestPort: null,
      localGrpcPort: null,
      pid: null,
    },
    servers: [],
    sockets: new Set(),
  };
  if (mode === 'none') return rt;
  if (mode === 'hang') {
    try {
      for (const port of [restPort, grpcPort])
        rt.servers.push(
          await listen(podIP, port, (s) => {
            rt.sockets.add(s);
            s.on('close', () => rt.sockets.delete(s));
            s.on('error', () => undefined);
          }),
        );
    } catch (err) {
      await teardown(rt);
      throw err;
    }
    return rt;
  }
  if (mode === 'python-runtime') return startPythonRuntime(rt);
  // v1.0.x: sandboxd listens on the pod IP's runtime ports itself; v0.5.6: on free loopback ports, forwarded to below.
  const [localRest, localGrpc] = listenOnPodIP ? [restPort, grpcPort] : await freePorts(2);
  const listenHost = listenOnPodIP ? podIP : '127.0.0.1';
  const rootDir = path.join(run, 'sandboxd', `${ns}.${name}.${uid.slice(0, 8)}`);
  mkdirSync(path.join(rootDir, 'workspace'), { recursive: true });
  if (asRoot) {
    chownSync(rootDir, UNPRIVILEGED, UNPRIVILEGED);
    chownSync(path.join(rootDir, 'workspace'), UNPRIVILEGED, UNPRIVILEGED);
  }
  const logFd = openSync(path.join(run, 'logs', `sandboxd-${ns}.${name}.log`), 'a');
  const argv = [
    `--rest-port=${localRest}`,
    `--grpc-port=${localGrpc}`,
    `--root-dir=${path.join(rootDir, 'workspace')}`,
    '--shutdown-timeout=2s',
    ...(listenOnPodIP ? [`--listen-host=${podIP}`] : []),
  ];
  const [cmd, args] = asRoot
    ? ['setpriv', [`--reuid=${UNPRIVILEGED}`, `--regid=${UNPRIVILEGED}`, '--clear-groups', sandboxdBin, ...argv]]
    : [sandboxdBin, argv];
  const child = spawn(cmd as string, args as string[], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    cwd: rootDir,
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: path.join(rootDir, 'workspace'),
      SANDBOX_POD_NAME: name,
      SANDBOX_POD_NAMESPACE: ns,
      SANDBOX_POD_IP: podIP,
    },
  });
  closeSync(logFd);
  child.unref();
  writeFileSync(path.join(run, 'pids', `sandboxd-${uid}.pid`), `${child.pid}\n`);
  rt.child = child;
  rt.rootDir = rootDir;
  rt.record = {
    ...rt.record,
    localRestPort: localRest!,
    localGrpcPort: localGrpc!,
    pid: child.pid ?? null,
    listenHost,
  };
  try {
    await healthy(localRest!, '/v1/health', 10_000, listenHost);
    // On the pod IP, another process (e.g. a second cluster's stand-in given the same pod net) could answer the health
    // check while this sandboxd failed to bind: it must still run and report this pod's own metadata.
    if (listenOnPodIP) await ownSandboxd(child, podIP, restPort, { name, ns });
    else {
      rt.servers.push(await forward(podIP, restPort, localRest!, rt.sockets));
      rt.servers.push(await forward(podIP, grpcPort, localGrpc!, rt.sockets));
    }
  } catch (err) {
    await teardown(rt); // e.g. the pod IP's port is taken: never leave a sandboxd behind
    throw err;
  }
  process.stderr.write(`sandboxd for ${ns}/${name} (${podIP}:${restPort},${grpcPort}) pid ${child.pid}\n`);
  return rt;
}

/**
 * Tag of the python runtime a cluster of `release` runs: the release's own where `runtimes/python-runtime-sandbox/`
 * keeps it (v0.5.6, v1.0.3), else v0.5.6 (v0.4.6 and v0.5.0 clusters; the client contract tests run on v0.5.6 and v1.0.3).
 */
function pythonRuntimeTag(release: string | undefined): PythonRuntimeTag {
  return release === 'v1.0.3' ? 'v1.0.3' : 'v0.5.6';
}

async function startPythonRuntime(rt: Runtime): Promise<Runtime> {
  const { namespace: ns, pod: name, uid, podIP, restPort: port } = rt.record;
  // main.py works in /app only; a private mount namespace gives each pod its own /app, which needs root.
  if (!asRoot)
    throw new Error(
      "the python-runtime stand-in needs root (a private mount namespace binds the pod's own directory at /app)",
    );
  const dir = pythonRuntimeDir(pythonRuntimeTag(clusterRelease));
  checkSums(dir);
  const venv = await clientVenv();
  const [local] = await freePorts(1);
  const rootDir = path.join(run, 'python-runtime', `${ns}.${name}.${uid.slice(0, 8)}`);
  mkdirSync(path.join(rootDir, 'app'), { recursive: true });
  const how = pythonRuntimeSpawn({ runtimeDir: dir, venv, appDir: path.join(rootDir, 'app'), port: local! });
  const logFd = openSync(path.join(run, 'logs', `python-runtime-${ns}.${name}.log`), 'a');
  const child = spawn(how.command, how.args, {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    cwd: rootDir,
    env: how.env,
  });
  closeSync(logFd);
  child.unref();
  writeFileSync(path.join(run, 'pids', `python-runtime-${uid}.pid`), `${child.pid}\n`);
  rt.child = child;
  rt.rootDir = rootDir;
  rt.record = {
    ...rt.record,
    localRestPort: local!,
    localGrpcPort: local!,
    pid: child.pid ?? null,
    runtimeDir: dir,
  };
  try {
    await healthy(local!, '/', 30_000);
    rt.servers.push(await forward(podIP, port, local!, rt.sockets));
  } catch (err) {
    await teardown(rt);
    throw err;
  }
  process.stderr.write(`python runtime for ${ns}/${name} (${podIP}:${port}) pid ${child.pid}\n`);
  return rt;
}

async function teardown(rt: Runtime): Promise<void> {
  for (const s of rt.sockets) s.destroy();
  await Promise.all(rt.servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  if (rt.child?.pid) {
    // A sandboxd bound to the pod IP itself (v1.0.x) is killed outright and waited for: kwok hands a freed pod IP to the
    // next pod at once, and a sandboxd still draining (503 "sandboxd is shutting down" for --shutdown-timeout) would
    // answer for that pod. On a node the old pod's network namespace is gone before its IP is reused.
    const ownsPodIP = rt.record.mode === 'sandboxd' && rt.record.listenHost === rt.record.podIP;
    try {
      if (ownsPodIP) process.kill(-rt.child.pid, 'SIGKILL');
      else process.kill(rt.child.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
    if (ownsPodIP) await exited(rt.child, 5_000);
    rmSync(
      path.join(
        run,
        'pids',
        `${rt.record.mode === 'python-runtime' ? 'python-runtime' : 'sandboxd'}-${rt.record.uid}.pid`,
      ),
      { force: true },
    );
  }
  if (rt.rootDir) rmSync(rt.rootDir, { recursive: true, force: true });
  process.stderr.write(`runtime for ${rt.record.namespace}/${rt.record.pod} stopped\n`);
}

/** Resolves when `child` has exited, or after `ms` (then the stand-in logs that it did not). */
async function exited(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
  if (!gone) process.stderr.write(`runtime pid ${child.pid} still running ${ms} ms after SIGKILL\n`);
}

function listen(host: string, port: number, onConn: (s: net.Socket) => void): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer(onConn);
    srv.once('error', reject);
    srv.listen(port, host, () => {
      srv.off('error', reject);
      resolve(srv);
    });
  });
}

function forward(host: string, port: number, target: number, sockets: Set<net.Socket>): Promise<net.Server> {
  return listen(host, port, (client) => {
    const upstream = net.connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
}

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => listen('127.0.0.1', 0, () => undefined)));
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}

/** Throws unless `child` still runs and the sandboxd on `host:port` reports pod `name` in namespace `ns` (`GET /v1/metadata`). */
async function ownSandboxd(
  child: ChildProcess,
  host: string,
  port: number,
  pod: { name: string; ns: string },
): Promise<void> {
  const res = await fetch(`http://${host}:${port}/v1/metadata`, { signal: AbortSignal.timeout(2000) });
  const env = ((await res.json()) as { env?: Record<string, string> }).env ?? {};
  if (child.exitCode !== null || child.signalCode !== null)
    throw new Error(
      `sandboxd exited (${child.exitCode ?? child.signalCode}); ${host}:${port} is served by another process`,
    );
  if (env['SANDBOX_POD_NAME'] !== pod.name || env['SANDBOX_POD_NAMESPACE'] !== pod.ns)
    throw new Error(
      `${host}:${port} answers for pod ${env['SANDBOX_POD_NAMESPACE']}/${env['SANDBOX_POD_NAME']}, not ${pod.ns}/${pod.name}: another process holds the pod IP`,
    );
}

async function healthy(port: number, probePath: string, timeoutMs: number, host = '127.0.0.1'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://${host}:${port}${probePath}`, { signal: AbortSignal.timeout(1000) })).ok) return;
    } catch {
      /* not yet */
    }
    await sleep(50);
  }
  throw new Error(`runtime on ${host}:${port} did not answer ${probePath} within ${timeoutMs} ms`);
}

function writeState(): void {
  writeFileSync(
    path.join(run, 'runtimes.json'),
    `${JSON.stringify(
      [...runtimes.values()].map((r) => r.record),
      null,
      2,
    )}\n`,
  );
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const rt of runtimes.values()) await teardown(rt);
  runtimes.clear();
  writeState();
  process.exit(0);
}

function mustEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (the runtime stand-in is started by test-cluster/scripts/up.sh)`);
  return v;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
