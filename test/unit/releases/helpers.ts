/** Shared set-up for releases tests: the shared mirror, temp dirs, and a loopback stand-in for the upstream raw-file host. */
import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOG } from '../../../src/releases/catalog.js';
import type { ReleaseTag } from '../../../src/releases/types.js';
import { MIRROR } from '../../mirror.js';

/** The read-only mirror the project tests against. */
export const SHARED_MIRROR = MIRROR;

/** A fresh temporary directory; removed by the returned cleanup. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `agentplane-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A writable copy of one tag of the shared mirror, laid out as `<dir>/<tag>/...`. */
export function copyMirror(dir: string, tag: ReleaseTag): string {
  cpSync(join(SHARED_MIRROR, tag), join(dir, tag), { recursive: true });
  makeWritable(join(dir, tag)); // shared/ may be laid out without write bits
  return dir;
}

function makeWritable(path: string): void {
  const st = statSync(path);
  chmodSync(path, st.mode | 0o200);
  if (st.isDirectory()) for (const entry of readdirSync(path)) makeWritable(join(path, entry));
}

/**
 * A node:http server on 127.0.0.1 that answers `/<owner>/<repo>/<commit>/<upstream path>` from the shared mirror, the way the
 * upstream raw-file host would. `hits` records request paths; `status` forces an HTTP status for every request; `tamper`
 * names an upstream path whose bytes are served with one byte changed.
 */
export async function startRawServer(
  opts: { status?: number; tamper?: string } = {},
): Promise<{ port: number; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push(url);
    if (opts.status) {
      res.writeHead(opts.status).end('forced status');
      return;
    }
    const [, owner, repo, commit, ...rest] = url.split('/');
    const path = rest.join('/');
    const facts = Object.values(CATALOG).find((f) => f.commit === commit);
    const file = facts?.files.find((f) => f.path === path);
    if (!facts || !file || `${owner}/${repo}` !== 'kubernetes-sigs/agent-sandbox') {
      res.writeHead(404).end('404: Not Found');
      return;
    }
    readFile(join(SHARED_MIRROR, facts.tag, file.mirrorPath)).then(
      (bytes) => {
        if (path === opts.tamper) bytes[0] = bytes[0]! ^ 0x20;
        res.writeHead(200, { 'content-type': 'text/plain' }).end(bytes);
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hits,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

const UPSTREAM_PREFIX = 'https://raw.githubusercontent.com/';

/**
 * A fetch that sends upstream raw-file URLs to 127.0.0.1:`port` instead (tests never dial the real host) and records the URLs asked for.
 * Any other URL fails the test.
 */
export function loopbackFetch(port: number, asked: string[] = []): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    asked.push(url);
    if (!url.startsWith(UPSTREAM_PREFIX)) throw new Error(`test fetch refused a non-upstream URL: ${url}`);
    return fetch(`http://127.0.0.1:${port}/${url.slice(UPSTREAM_PREFIX.length)}`, init);
  }) as typeof fetch;
}
