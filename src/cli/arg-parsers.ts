/**
 * commander `argParser`s for the flag values of every command: each checks one value on the command line and throws
 * commander's InvalidArgumentError (exit 2, `error: option '--x <v>' argument 'v' is invalid. <why>`) naming the
 * expected form, so no malformed value reaches the library.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { isIP } from 'node:net';
import { InvalidArgumentError } from 'commander';
import { UsageError } from './usage-error.js';

function isDirectory(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}

/** `5s`, `500ms`, `2m`, or plain milliseconds, greater than zero; returns milliseconds. @throws InvalidArgumentError naming the bad value. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new InvalidArgumentError(`"${text}" is not a duration: use e.g. 5s, 500ms or 2m`);
  const n = Number(m[1]);
  const ms = Math.round(m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n);
  if (ms <= 0) throw new InvalidArgumentError(`"${text}" is not a positive duration: use e.g. 5s, 500ms or 2m`);
  return ms;
}

/** A whole number from 1 to 64 (e.g. `--concurrency`). @throws InvalidArgumentError naming the bad value. */
export function boundedCount(text: string): number {
  const n = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || n < 1 || n > 64)
    throw new InvalidArgumentError(`"${text}" is not a whole number from 1 to 64`);
  return n;
}

/** A sample size: a whole number from 2 to 1000 (`--samples`). @throws InvalidArgumentError naming the bad value. */
export function sampleCount(text: string): number {
  const n = Number(text.trim());
  if (!Number.isInteger(n) || n < 2 || n > 1000)
    throw new InvalidArgumentError(
      `"${text}" is not a sample size: use a whole number from 2 to 1000 (one success is never enough)`,
    );
  return n;
}

/** A directory that exists (e.g. `--mirror`). @throws InvalidArgumentError when it is missing or a file. */
export function existingDirectory(dir: string): string {
  if (!existsSync(dir)) throw new InvalidArgumentError(`${dir} does not exist: give an existing directory`);
  if (!statSync(dir).isDirectory()) throw new InvalidArgumentError(`${dir} is not a directory`);
  return dir;
}

/** A directory that may not exist yet but is not a file (e.g. `--cache-dir`, created on first use). */
export function directoryOrNew(dir: string): string {
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new InvalidArgumentError(`${dir} is a file, not a directory`);
  return dir;
}

/** A file that exists (e.g. `--matrix`). @throws InvalidArgumentError when it is missing or a directory. */
export function existingFile(file: string): string {
  if (!existsSync(file)) throw new InvalidArgumentError(`${file} does not exist: give an existing file`);
  if (statSync(file).isDirectory()) throw new InvalidArgumentError(`${file} is a directory, not a file`);
  return file;
}

/** A file to write whose directory exists (e.g. `--junit`), so a long run does not fail at its last step. */
export function writableFile(file: string): string {
  const dir = path.dirname(path.resolve(file));
  if (!isDirectory(dir)) throw new InvalidArgumentError(`the directory ${dir} does not exist: create it first`);
  if (isDirectory(file)) throw new InvalidArgumentError(`${file} is a directory, not a file`);
  return file;
}

/** The synthesized environments (`<dir>/<env>/environment.json`) directly under `dir`, as `dir/<env>`, sorted. */
export function environmentsUnder(dir: string): string[] {
  if (!isDirectory(dir)) return [];
  return readdirSync(dir)
    .filter((d) => existsSync(path.join(dir, d, 'environment.json')))
    .sort()
    .map((d) => path.join(dir, d));
}

/**
 * `--env`: a synthesized environment directory holding `environment.json`, or the descriptor file itself (`*.json`).
 * @throws InvalidArgumentError when the path is missing, or the directory holds no environment.json (naming the
 *   environments below it, if any).
 */
export function environmentPath(p: string): string {
  if (!existsSync(p))
    throw new InvalidArgumentError(
      `${p} does not exist: give a directory written by agentplane synth (dist/<environment>)`,
    );
  if (!isDirectory(p)) return p;
  if (existsSync(path.join(p, 'environment.json'))) return p;
  const below = environmentsUnder(p);
  throw new InvalidArgumentError(
    below.length > 0
      ? `${p} holds no environment.json; the environments in it are ${below.join(', ')}: pass one of them`
      : `${p} holds no environment.json: give a directory written by agentplane synth (dist/<environment>)`,
  );
}

/**
 * The environment directory when `--env` is not given: `dist/<env>` when it is the only environment under `dist/`
 * (or `dist` itself when it holds environment.json).
 * @throws {UsageError} (exit 2) when `dist/` holds several environments (naming them and the `--env` to pass) or none.
 */
export function defaultEnvDir(): string {
  if (existsSync(path.join('dist', 'environment.json'))) return 'dist';
  const found = environmentsUnder('dist');
  if (found.length === 1) return found[0]!;
  if (found.length > 1)
    throw new UsageError(
      `dist/ holds ${found.length} environments (${found.join(', ')}): say which one to use`,
      `pass --env, e.g. --env ${found[0]!}`,
    );
  throw new UsageError(
    `no --env given and no synthesized environment under ${path.resolve('dist')}`,
    'run `agentplane synth` first, or pass --env with the directory synth wrote: dist/<environment>, or <out>/<environment> when synth ran with --out',
  );
}

/** A sandbox named `<namespace>/<name>`. */
export interface SandboxRef {
  readonly namespace: string;
  readonly name: string;
}

/** `--sandbox <ns/name...>`: accumulates the sandboxes given. @throws InvalidArgumentError for a value that is not `<namespace>/<name>`. */
export function sandboxRefs(value: string, previous: SandboxRef[] | undefined): SandboxRef[] {
  const [namespace, name, extra] = value.split('/');
  if (!namespace || !name || extra !== undefined)
    throw new InvalidArgumentError(`"${value}" is not <namespace>/<name>: pass e.g. --sandbox sbx/s1`);
  return [...(previous ?? []), { namespace, name }];
}

/** An absolute http(s) URL (e.g. `--router-url http://127.0.0.1:8080`). */
export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`"${value}" is not a URL: give e.g. http://127.0.0.1:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError(`"${value}" is not an http or https URL: give e.g. http://127.0.0.1:8080`);
  return value;
}

/** An IPv4 or IPv6 address (e.g. `--router-canary-host 10.0.3.7`). */
export function ipAddress(value: string): string {
  if (isIP(value) === 0) throw new InvalidArgumentError(`"${value}" is not an IP address: give e.g. 10.0.3.7`);
  return value;
}
