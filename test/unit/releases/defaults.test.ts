import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultCacheDir, defaultMirror, upstreamUrl } from '../../../src/releases/index.js';

const saved = { ...process.env };
afterEach(() => {
  for (const k of ['AGENTPLANE_CACHE_DIR', 'XDG_CACHE_HOME', 'AGENTPLANE_MIRROR']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('defaults', () => {
  test('cache dir: AGENTPLANE_CACHE_DIR, else $XDG_CACHE_HOME/agentplane, else ~/.cache/agentplane', () => {
    process.env.AGENTPLANE_CACHE_DIR = '/tmp/ap-cache';
    process.env.XDG_CACHE_HOME = '/tmp/xdg';
    expect(defaultCacheDir()).toBe('/tmp/ap-cache');
    delete process.env.AGENTPLANE_CACHE_DIR;
    expect(defaultCacheDir()).toBe('/tmp/xdg/agentplane');
    delete process.env.XDG_CACHE_HOME;
    expect(defaultCacheDir()).toBe(join(homedir(), '.cache', 'agentplane'));
  });

  test('mirror: AGENTPLANE_MIRROR, else none (upstream), whatever the working directory holds', () => {
    const saved = process.env.AGENTPLANE_MIRROR;
    try {
      process.env.AGENTPLANE_MIRROR = 'some/mirror';
      expect(defaultMirror()).toBe(resolve('some/mirror'));
      delete process.env.AGENTPLANE_MIRROR;
      expect(defaultMirror()).toBeUndefined(); // a release mirror exists next to this repository
    } finally {
      if (saved !== undefined) process.env.AGENTPLANE_MIRROR = saved;
    }
  });

  test('upstream raw URL is built from the repository, the pinned commit and the path', () => {
    expect(upstreamUrl('211b7579cabed9460c1a692eb687084ff4c5879d', 'k8s/controller.yaml')).toBe(
      'https://raw.githubusercontent.com/kubernetes-sigs/agent-sandbox/211b7579cabed9460c1a692eb687084ff4c5879d/k8s/controller.yaml',
    );
  });
});
