/** Starts fixtures/python-runtime-fake.mjs (a stand-in for the python runtime, see that file) in its own process. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface FakeRuntime {
  readonly port: number;
  stop(): void;
}

export function startFakePythonRuntime(
  mode: 'fixed' | 'blocking',
  env: Readonly<Record<string, string>> = {},
): Promise<FakeRuntime> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/python-runtime-fake.mjs');
  const child = spawn(process.execPath, [script, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve({ port: Number(out.trim()), stop: () => child.kill('SIGKILL') });
    });
    child.once('exit', (code) => reject(new Error(`python runtime stand-in exited (${code}) before listening`)));
  });
}
