/**
 * The release fetcher never follows a redirect: a real loopback HTTP server stands in for the upstream raw-file host and
 * answers 3xx pointing at a second loopback server. The fetch fails with reason code REDIRECT_REFUSED, and the redirect
 * target sees no connection at all, so nothing the request carries (a credential included) can reach it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadRelease, RedirectRefusedError, ReleaseError } from '../../../src/releases/index.js';
import { loopbackFetch, tempDir } from './helpers.js';

async function listen(server: Server): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

describe.each([301, 302, 303, 307, 308])('upstream answers %i', (status) => {
  let cache: ReturnType<typeof tempDir>;
  beforeEach(() => {
    cache = tempDir('cache');
  });
  afterEach(() => cache.cleanup());

  test('the fetch stops with REDIRECT_REFUSED and the redirect target gets no connection', async () => {
    let targetConnections = 0;
    const targetHeaders: IncomingHttpHeaders[] = [];
    const target = await listen(
      createServer((req, res) => {
        targetHeaders.push(req.headers);
        res.writeHead(200).end('not the pinned file');
      }).on('connection', () => {
        targetConnections++;
      }),
    );
    const redirects: string[] = [];
    const origin = await listen(
      createServer((req, res) => {
        redirects.push(req.url ?? '');
        res.writeHead(status, { location: `http://127.0.0.1:${target.port}${req.url ?? '/'}` }).end();
      }),
    );
    try {
      const err = await loadRelease('v0.4.6', {
        mirror: false,
        cacheDir: cache.dir,
        fetch: loopbackFetch(origin.port),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedirectRefusedError);
      expect(err).toBeInstanceOf(ReleaseError);
      const refused = err as RedirectRefusedError;
      expect(refused.reason).toBe('RedirectRefused');
      expect(refused.status).toBe(status);
      expect(refused.location).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:${target.port}/kubernetes-sigs/agent-sandbox/`),
      );
      expect(redirects.length).toBeGreaterThan(0);
      expect(targetConnections).toBe(0);
      expect(targetHeaders).toEqual([]);
    } finally {
      await origin.close();
      await target.close();
    }
  });
});
