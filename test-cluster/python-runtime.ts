/**
 * The upstream python runtime (`examples/python-runtime-sandbox/main.py`) run as it is, for the runtime stand-in
 * (runtime-standin.ts) and for tests of the adapter (test/unit/adapter/python-runtime-process.ts). Its files are data
 * in `runtimes/python-runtime-sandbox/<tag>/` beside `$AGENTPLANE_MIRROR`,
 * checked against their SHA256SUMS at every start and never copied; uvicorn and the runtime's dependencies come from
 * the client venv (test/client/setup-venv.sh). main.py works in the fixed directory /app (v0.5.6 hard-wires it; v1.0.3
 * defaults to it), so each runtime runs in a private mount namespace with its own directory bound at /app, which
 * needs root.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Tags of the python runtime kept in `runtimes/python-runtime-sandbox/`. */
export type PythonRuntimeTag = 'v0.5.6' | 'v1.0.3';
export const PYTHON_RUNTIME_TAGS: readonly PythonRuntimeTag[] = ['v0.5.6', 'v1.0.3'];

const here = path.dirname(fileURLToPath(import.meta.url));

/** The runtime's data directory of `tag` (`$AGENTPLANE_PYTHON_RUNTIME_DIR` overrides it). */
export function pythonRuntimeDir(tag: PythonRuntimeTag): string {
  if (process.env['AGENTPLANE_PYTHON_RUNTIME_DIR']) return process.env['AGENTPLANE_PYTHON_RUNTIME_DIR'];
  const mirror = process.env['AGENTPLANE_MIRROR'];
  if (!mirror) throw new Error('AGENTPLANE_MIRROR is not set: the runtime data lives beside the release mirror');
  return path.join(path.dirname(mirror), 'runtimes', 'python-runtime-sandbox', tag);
}

/** Checks every file SHA256SUMS names; a mismatch or a missing file throws. */
export function checkSums(dir: string): void {
  for (const line of readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8').split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (!m) continue;
    const got = createHash('sha256')
      .update(readFileSync(path.join(dir, m[2]!)))
      .digest('hex');
    if (got !== m[1]) throw new Error(`${path.join(dir, m[2]!)}: sha256 ${got} does not match SHA256SUMS (${m[1]})`);
  }
}

let venvDir: Promise<string> | undefined;

/** The client venv (test/client/setup-venv.sh prints it; cached, so instant when warm). */
export function clientVenv(): Promise<string> {
  if (process.env['AGENTPLANE_CLIENT_VENV']) return Promise.resolve(process.env['AGENTPLANE_CLIENT_VENV']);
  venvDir ??= new Promise<string>((resolve, reject) => {
    execFile(
      'bash',
      [path.resolve(here, '../test/client/setup-venv.sh')],
      { maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        if (err) {
          venvDir = undefined;
          reject(new Error(`test/client/setup-venv.sh failed: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
        } else resolve(stdout.trim().split('\n').pop()!);
      },
    );
  });
  return venvDir;
}

/** How to start one runtime: `spawn(command, args, { env })`, detached, with the caller's stdio. */
export interface PythonRuntimeSpawn {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
}

/**
 * The command that runs `<runtimeDir>/main.py` with uvicorn from `venv` on `127.0.0.1:<port>`, with `appDir` bound at
 * /app in a private mount namespace. `env` is added to the runtime's environment (e.g. SANDBOX_EXEC_TIMEOUT_SECONDS),
 * and so to every command it runs. Throws unless run as root.
 */
export function pythonRuntimeSpawn(opts: {
  runtimeDir: string;
  venv: string;
  appDir: string;
  port: number;
  env?: Readonly<Record<string, string>>;
}): PythonRuntimeSpawn {
  if (process.getuid?.() !== 0)
    throw new Error('the python runtime needs root here (a private mount namespace binds its own directory at /app)');
  mkdirSync('/app', { recursive: true }); // mount point only; each runtime sees its own directory there
  const script =
    'mount --bind "$1" /app && cd "$2" && exec "$3/bin/python" -m uvicorn main:app --host 127.0.0.1 --port "$4"';
  return {
    command: 'unshare',
    args: [
      '-m',
      '--propagation',
      'private',
      'sh',
      '-c',
      script,
      'sh',
      opts.appDir,
      opts.runtimeDir,
      opts.venv,
      String(opts.port),
    ],
    // no bytecode: the runtime's directory is shared data and must stay as SHA256SUMS describes it
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: opts.appDir,
      PYTHONDONTWRITEBYTECODE: '1',
      ...opts.env,
    },
  };
}
