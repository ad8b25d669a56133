import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  ChecksumMismatchError,
  MissingFileError,
  SourceUnreachableError,
  UnknownReleaseError,
  loadRelease,
  releaseFacts,
  sha256Hex,
} from '../../../src/releases/index.js';
import { copyMirror, loopbackFetch, SHARED_MIRROR, startRawServer, tempDir } from './helpers.js';
import { rejectedBy } from '../thrown.js';

const CONTROLLER = 'k8s/controller.yaml';

describe('loadRelease from a mirror', () => {
  let cache: ReturnType<typeof tempDir>;
  beforeEach(() => {
    cache = tempDir('cache');
  });
  afterEach(() => cache.cleanup());

  test('loads every pinned file of v0.5.6, verified, parsed, and caches them', async () => {
    const release = await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
    const facts = releaseFacts('v0.5.6');
    expect([...release.files.keys()].sort()).toEqual(facts.files.map((f) => f.path).sort());
    for (const f of facts.files) {
      expect(sha256Hex(release.files.get(f.path)!)).toBe(f.sha256);
      expect(readFileSync(join(cache.dir, 'v0.5.6', f.path)).length).toBe(f.size);
    }
    const controller = release.objects.get(CONTROLLER)!;
    expect(controller.map((o) => o.kind)).toContain('Deployment');
    expect(release.objects.get('k8s/crds/agents.x-k8s.io_sandboxes.yaml')!.map((o) => o.metadata?.name)).toEqual([
      'sandboxes.agents.x-k8s.io',
    ]);
    // non-manifest files are kept as bytes only
    expect(release.files.has('packages/sandboxd/spec/process/v1/process.proto')).toBe(true);
    expect(release.objects.has('helm/values.yaml')).toBe(false);
  });

  test('a flipped byte in the mirror is a ChecksumMismatchError naming file, expected and actual', async () => {
    const mirror = tempDir('mirror');
    try {
      copyMirror(mirror.dir, 'v0.4.6');
      const path = join(mirror.dir, 'v0.4.6', CONTROLLER);
      const bytes = readFileSync(path);
      bytes[10] = bytes[10]! ^ 0x01;
      writeFileSync(path, bytes);
      const expected = releaseFacts('v0.4.6').files.find((f) => f.path === CONTROLLER)!.sha256;
      const err = await loadRelease('v0.4.6', { mirror: mirror.dir, cacheDir: cache.dir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ChecksumMismatchError);
      const e = err as ChecksumMismatchError;
      expect(e.reason).toBe('ChecksumMismatch');
      expect(e.file).toBe(CONTROLLER);
      expect(e.expected).toBe(expected);
      expect(e.actual).toBe(sha256Hex(bytes));
      expect(e.actual).not.toBe(expected);
      expect(e.message).toContain(CONTROLLER);
      expect(e.message).toContain(expected);
      expect(e.message).toContain(e.actual);
      expect(e.source).toBe(`mirror ${mirror.dir}`);
      expect(e.origin).toBe('mirror');
      expect(e.hint).toBeDefined();
      // nothing unverified reaches the cache
      expect(existsSync(join(cache.dir, 'v0.4.6', CONTROLLER))).toBe(false);
    } finally {
      mirror.cleanup();
    }
  });

  test('a missing file is a MissingFileError naming the file and the mirror', async () => {
    const mirror = tempDir('mirror');
    try {
      copyMirror(mirror.dir, 'v0.4.6');
      rmSync(join(mirror.dir, 'v0.4.6', 'k8s/extensions.yaml'));
      const err = await loadRelease('v0.4.6', { mirror: mirror.dir, cacheDir: cache.dir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MissingFileError);
      expect((err as MissingFileError).reason).toBe('MissingFile');
      expect((err as MissingFileError).file).toBe('k8s/extensions.yaml');
      expect((err as MissingFileError).source).toContain(mirror.dir);
    } finally {
      mirror.cleanup();
    }
  });

  test('a mirror directory that does not exist is SourceUnreachableError', async () => {
    const err = await loadRelease('v0.4.6', { mirror: join(cache.dir, 'no-such-mirror'), cacheDir: cache.dir }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SourceUnreachableError);
    expect((err as SourceUnreachableError).reason).toBe('MirrorDirectoryMissing');
    expect((err as SourceUnreachableError).source).toContain('no-such-mirror');
    expect((err as SourceUnreachableError).failure).toBe('missing-directory');
  });

  test('an unknown tag is UnknownReleaseError listing the supported tags', async () => {
    const err = await loadRelease('v9.9.9', { mirror: SHARED_MIRROR, cacheDir: cache.dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownReleaseError);
    expect((err as UnknownReleaseError).reason).toBe('UnknownRelease');
    expect((err as UnknownReleaseError).tag).toBe('v9.9.9');
    expect((err as UnknownReleaseError).supported).toEqual(['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3']);
  });

  test('verified cache entries are used when the mirror is gone; a corrupted entry is refetched, never trusted', async () => {
    const mirror = tempDir('mirror');
    try {
      copyMirror(mirror.dir, 'v0.4.6');
      await loadRelease('v0.4.6', { mirror: mirror.dir, cacheDir: cache.dir });
      // 1) the mirror loses a file: the cached copy serves it
      rmSync(join(mirror.dir, 'v0.4.6', CONTROLLER));
      const fromCache = await loadRelease('v0.4.6', { mirror: mirror.dir, cacheDir: cache.dir });
      expect(sha256Hex(fromCache.files.get(CONTROLLER)!)).toBe(
        releaseFacts('v0.4.6').files.find((f) => f.path === CONTROLLER)!.sha256,
      );
      // 2) the cached copy is corrupted and the mirror cannot supply it: the corrupt copy is not used
      const cached = join(cache.dir, 'v0.4.6', CONTROLLER);
      writeFileSync(cached, 'tampered\n');
      const missing = await rejectedBy(
        loadRelease('v0.4.6', { mirror: mirror.dir, cacheDir: cache.dir }),
        MissingFileError,
        'MissingFile',
      );
      expect([missing.file, missing.origin]).toEqual([CONTROLLER, 'mirror']);
      expect(existsSync(cached)).toBe(false);
      // 3) with the mirror restored the file is refetched and cached again
      copyMirror(mirror.dir, 'v0.4.6');
      writeFileSync(cached, 'tampered again\n');
      const healed = await loadRelease('v0.4.6', { mirror: mirror.dir, cacheDir: cache.dir });
      expect(healed.files.get(CONTROLLER)!.toString()).not.toContain('tampered');
      expect(sha256Hex(readFileSync(cached))).toBe(
        releaseFacts('v0.4.6').files.find((f) => f.path === CONTROLLER)!.sha256,
      );
    } finally {
      mirror.cleanup();
    }
  });
});

describe('loadRelease from upstream raw files (served by a 127.0.0.1 stand-in)', () => {
  let cache: ReturnType<typeof tempDir>;
  beforeEach(() => {
    cache = tempDir('cache');
  });
  afterEach(() => cache.cleanup());

  test('fetches each pinned file at the pinned commit and verifies it', async () => {
    const server = await startRawServer();
    const asked: string[] = [];
    try {
      const release = await loadRelease('v0.5.0', {
        mirror: false,
        cacheDir: cache.dir,
        fetch: loopbackFetch(server.port, asked),
      });
      const facts = releaseFacts('v0.5.0');
      expect(release.files.size).toBe(facts.files.length);
      expect(asked.sort()).toEqual(
        facts.files
          .map(
            (f) =>
              `https://raw.githubusercontent.com/kubernetes-sigs/agent-sandbox/a1a58a019a5479ec6cd77f95234927da7a1f434d/${f.path}`,
          )
          .sort(),
      );
      // second load is served from the verified cache: no request
      const before = server.hits.length;
      await loadRelease('v0.5.0', { mirror: false, cacheDir: cache.dir, fetch: loopbackFetch(server.port) });
      expect(server.hits.length).toBe(before);
    } finally {
      await server.close();
    }
  });

  test('changed bytes from upstream are a ChecksumMismatchError naming the upstream source', async () => {
    const server = await startRawServer({ tamper: 'k8s/rbac.generated.yaml' });
    try {
      const err = await loadRelease('v0.4.6', {
        mirror: false,
        cacheDir: cache.dir,
        fetch: loopbackFetch(server.port),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ChecksumMismatchError);
      expect((err as ChecksumMismatchError).reason).toBe('ChecksumMismatch');
      expect((err as ChecksumMismatchError).file).toBe('k8s/rbac.generated.yaml');
      expect((err as ChecksumMismatchError).source).toBe('upstream github.com/kubernetes-sigs/agent-sandbox');
      expect((err as ChecksumMismatchError).origin).toBe('upstream');
      expect((err as ChecksumMismatchError).hint).toBeDefined();
    } finally {
      await server.close();
    }
  });

  test('HTTP 404 is MissingFileError with the URL', async () => {
    const server = await startRawServer({ status: 404 });
    try {
      const err = await loadRelease('v0.4.6', {
        mirror: false,
        cacheDir: cache.dir,
        fetch: loopbackFetch(server.port),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MissingFileError);
      expect((err as MissingFileError).reason).toBe('MissingFile');
      expect((err as MissingFileError).source).toMatch(
        /d0c124d4a1fded4ed4aecb92753696b4dd8de17b\/k8s\/.* answered 404/,
      );
      expect((err as MissingFileError).origin).toBe('upstream');
      expect((err as MissingFileError).hint).toBeDefined();
    } finally {
      await server.close();
    }
  });

  test('HTTP 503 is SourceUnreachableError', async () => {
    const server = await startRawServer({ status: 503 });
    try {
      const err = await loadRelease('v0.4.6', {
        mirror: false,
        cacheDir: cache.dir,
        fetch: loopbackFetch(server.port),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SourceUnreachableError);
      expect((err as SourceUnreachableError).reason).toBe('SourceUnreachable');
      expect((err as SourceUnreachableError).failure).toBe('http-status');
      expect((err as SourceUnreachableError).status).toBe(503);
    } finally {
      await server.close();
    }
  });

  test('a server that never answers is SourceUnreachableError after timeoutMs', async () => {
    const silent = createServer(() => undefined); // accepts, never responds
    await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = Date.now();
      const err = await loadRelease('v0.4.6', {
        mirror: false,
        cacheDir: cache.dir,
        fetch: loopbackFetch(port),
        timeoutMs: 300,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SourceUnreachableError);
      expect((err as SourceUnreachableError).reason).toBe('SourceUnreachable');
      expect((err as SourceUnreachableError).failure).toBe('timeout');
      expect((err as SourceUnreachableError).timeoutMs).toBe(300);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((ok) => silent.close(() => ok()));
    }
  });

  test('a refused connection is SourceUnreachableError with the cause', async () => {
    const server = await startRawServer();
    const port = server.port;
    await server.close(); // nothing listens on the port now
    const err = await loadRelease('v0.4.6', { mirror: false, cacheDir: cache.dir, fetch: loopbackFetch(port) }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SourceUnreachableError);
    expect((err as SourceUnreachableError).reason).toBe('SourceUnreachable');
    expect((err as SourceUnreachableError).failure).toBe('connection');
    expect((err as SourceUnreachableError).code).toBe('ECONNREFUSED');
    expect((err as SourceUnreachableError).hint).toBeDefined();
  });
});
