/**
 * Starts the REAL upstream python runtime (`examples/python-runtime-sandbox/main.py` of a given tag, the shared data
 * checked against its SHA256SUMS, see test-cluster/python-runtime.ts) with uvicorn on a free 127.0.0.1 port, its /app
 * a fresh temp directory, for tests of the runtime adapter. `stop()` kills every process the runtime started (found by
 * a nonce in their environment, inherited by each command and its descendants, reparented or not) and removes the
 * directory; `commandProcesses()` lists them while it runs. Needs root (a private mount namespace binds the directory at /app).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  checkSums,
  clientVenv,
  pythonRuntimeDir,
  pythonRuntimeSpawn,
  type PythonRuntimeTag,
} from '../../../test-cluster/python-runtime.js';

export interface PythonRuntimeProcess {
  readonly tag: PythonRuntimeTag;
  readonly port: number;
  /** The directory the runtime sees as /app: the working directory of every command. */
  readonly appDir: string;
  /** Pids of live processes the runtime started (its commands and all their descendants, reparented or not). */
  commandProcesses(): number[];
  stop(): Promise<void>;
}

const NONCE_VAR = 'AGENTPLANE_PYTHON_RUNTIME_NONCE';

/** Pids of live processes whose environment carries `nonce`. */
function processesWith(nonce: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(nonce)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** `env` goes into the runtime's environment, e.g. `{ SANDBOX_EXEC_TIMEOUT_SECONDS: '1' }`. */
export async function startPythonRuntime(
  tag: PythonRuntimeTag,
  env: Readonly<Record<string, string>> = {},
): Promise<PythonRuntimeProcess> {
  const runtimeDir = pythonRuntimeDir(tag);
  checkSums(runtimeDir);
  const venv = await clientVenv();
  const base = mkdtempSync(path.join(os.tmpdir(), 'agentplane-pyrt-'));
  const appDir = path.join(base, 'app');
  const logPath = path.join(base, 'runtime.log');
  const nonce = `pyrt-${randomUUID()}`;
  const port = await freePort();
  const kill = async (): Promise<void> => {
    for (let i = 0; i < 50; i++) {
      const pids = processesWith(nonce);
      if (pids.length === 0) return;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async (): Promise<void> => {
    await kill();
    rmSync(base, { recursive: true, force: true });
  };
  let how;
  try {
    mkdirSync(appDir);
    how = pythonRuntimeSpawn({ runtimeDir, venv, appDir, port, env: { ...env, [NONCE_VAR]: nonce } });
  } catch (err) {
    await stop();
    throw err;
  }
  const logFd = openSync(logPath, 'a');
  const child = spawn(how.command, how.args, { detached: true, stdio: ['ignore', logFd, logFd], env: how.env });
  closeSync(logFd);
  child.unref();
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) })).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      const log = readFileSync(logPath, 'utf8').trim().split('\n').slice(-5).join(' | ');
      await stop();
      throw new Error(
        `python runtime ${tag} did not answer GET / on 127.0.0.1:${port} within 30 s (exit ${child.exitCode}): ${log}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // The server is the spawned process itself (unshare and sh exec into python); everything else with the nonce is a command's.
  const commandProcesses = (): number[] => processesWith(nonce).filter((pid) => pid !== child.pid);
  return { tag, port, appDir, commandProcesses, stop };
}
