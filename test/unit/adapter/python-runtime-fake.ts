/**
 * Starts fixtures/python-runtime-fake.mjs in its own process: a stand-in for the pre-v0.5.6 python runtime, kept only
 * for the fault the real kept runtimes cannot produce (a command blocking every other request, see that file). Every
 * other python-runtime test runs the real main.py (python-runtime-process.ts).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface FakeRuntime {
  readonly port: number;
  stop(): void;
}

export function startFakePythonRuntime(mode: 'blocking'): Promise<FakeRuntime> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/python-runtime-fake.mjs');
  const child = spawn(process.execPath, [script, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
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
