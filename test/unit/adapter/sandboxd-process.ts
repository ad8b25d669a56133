/**
 * Starts the REAL sandboxd binary (v0.5.6, or v1.0.3 when asked) on free 127.0.0.1 ports with a temp `--root-dir`, for tests of the runtime
 * adapter. Binary: `$AGENTPLANE_SANDBOXD_BIN`, else the test-cluster cache
 * (`$AGENTPLANE_TEST_CLUSTER_CACHE` or ~/.cache/agentplane/test-cluster, bin/agent-sandbox-v0.5.6/<key>/sandboxd), else
 * /tmp/sandboxd-bin/sandboxd. As root it runs under uid/gid 65534 (sandboxd runs arbitrary commands).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const NOBODY = 65534;

/** Releases whose sandboxd the test-cluster cache builds. */
export type SandboxdTag = 'v0.5.6' | 'v1.0.3';

/** A binary of the release `tag` built into the test-cluster cache (`sandboxd`, `sandbox-router`), or undefined. */
export function cachedReleaseBinary(tag: SandboxdTag, name: string): string | undefined {
  const cache = process.env.AGENTPLANE_TEST_CLUSTER_CACHE ?? path.join(os.homedir(), '.cache/agentplane/test-cluster');
  const dir = path.join(cache, `bin/agent-sandbox-${tag}`);
  if (!existsSync(dir)) return undefined;
  for (const key of readdirSync(dir)) {
    const bin = path.join(dir, key, name);
    if (existsSync(path.join(dir, key, '.ok')) && existsSync(bin)) return bin;
  }
  return undefined;
}

export function findSandboxd(tag: SandboxdTag = 'v0.5.6'): string {
  const env = process.env.AGENTPLANE_SANDBOXD_BIN;
  if (tag === 'v0.5.6' && env && existsSync(env)) return env;
  const cached = cachedReleaseBinary(tag, 'sandboxd');
  if (cached) return cached;
  if (tag === 'v0.5.6' && existsSync('/tmp/sandboxd-bin/sandboxd')) return '/tmp/sandboxd-bin/sandboxd';
  throw new Error('no sandboxd binary: run `bash test-cluster/scripts/build.sh` (or set AGENTPLANE_SANDBOXD_BIN)');
}

export interface SandboxdProcess {
  /** The sandboxd process id (for tests that drop the runtime mid-call). */
  readonly pid: number;
  readonly restPort: number;
  readonly grpcPort: number;
  readonly rootDir: string;
  stop(): Promise<void>;
}

/** `n` loopback ports free a moment ago. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}

/** Starts sandboxd `tag` on loopback, on free ports or on `ports` (e.g. where a client already failed to connect). */
export async function startSandboxd(
  tag: SandboxdTag = 'v0.5.6',
  ports?: { rest: number; grpc: number },
): Promise<SandboxdProcess> {
  const bin = findSandboxd(tag);
  const base = mkdtempSync(path.join(os.tmpdir(), 'agentplane-sandboxd-'));
  const rootDir = path.join(base, 'workspace');
  const [restPort, grpcPort] = ports ? [ports.rest, ports.grpc] : await freePorts(2);
  const argv = [`--rest-port=${restPort}`, `--grpc-port=${grpcPort}`, `--root-dir=${rootDir}`, '--shutdown-timeout=1s'];
  // From v1.0.1 sandboxd listens on `--listen-host` (default 0.0.0.0): keep it on loopback here.
  if (tag !== 'v0.5.6') argv.push('--listen-host=127.0.0.1');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    chownSync(base, NOBODY, NOBODY);
  }
  const [cmd, args] = asRoot
    ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', bin, ...argv]]
    : [bin, argv];
  const child: ChildProcess = spawn(cmd as string, args as string[], {
    stdio: 'ignore',
    cwd: base,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: base },
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${restPort}/v1/health`, { signal: AbortSignal.timeout(500) })).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(
        `sandboxd (${bin}) did not answer /v1/health on 127.0.0.1:${restPort} within 10 s (exit ${child.exitCode})`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    pid: child.pid!,
    restPort: restPort!,
    grpcPort: grpcPort!,
    rootDir,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 3000)))]);
        clearTimeout(timer);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}
