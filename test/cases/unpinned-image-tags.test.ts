/**
 * Case unpinned-image-tags: synthesis fails with a typed error and the construct path on `latest*` tags, `ko://`
 * placeholders and images with neither tag nor digest; with `requireDigests` also on images without a digest.
 * The release records no image digests (index.json has tags only), so tag pinning is the default and digests are opt-in.
 */
import { jest } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import {
  AgentSandboxInstall,
  sandboxdPodSpec,
  synthesizeEnvironment,
  UnpinnedImageError,
  unpinnedReason,
} from '../../src/index.js';
import { newEnvironment, release } from '../unit/constructs/fixture.js';
import { thrownBy } from '../unit/thrown.js';

// loading and synthesizing a pinned release takes seconds on a loaded 2-core machine
jest.setTimeout(120_000);

const LATEST_MAIN = 'us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main';
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('case unpinned-image-tags: unpinned image tags', () => {
  test('a template running sandboxd:latest-main is refused, naming path, container and value', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const err = thrown(() =>
      env.addTemplate('py', { runtimeClass: rc, podSpec: sandboxdPodSpec({ image: LATEST_MAIN }) }),
    );
    expect(err).toBeInstanceOf(UnpinnedImageError);
    expect((err as UnpinnedImageError).reason).toBe('UnpinnedImage');
    expect((err as UnpinnedImageError).path).toBe('sbx/py');
    expect([
      (err as UnpinnedImageError).image,
      (err as UnpinnedImageError).where,
      (err as UnpinnedImageError).unpinned,
    ]).toEqual([LATEST_MAIN, 'SandboxTemplate py containers[sandboxd]', 'FloatingTag']);
  });

  test("the router with upstream's :latest image is refused", async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx', { install: false });
    const err = thrown(() =>
      env.addRouter('router', {
        image: 'registry.k8s.io/agent-sandbox/sandbox-router-go:latest',
        authorization: { mode: 'tokenreview' },
        callers: [],
      }),
    );
    expect(err).toBeInstanceOf(UnpinnedImageError);
    expect((err as UnpinnedImageError).reason).toBe('UnpinnedImage');
    expect((err as UnpinnedImageError).path).toBe('sbx/router');
  });

  test('the install replaces ko:// with the release image; no ko:// or :latest reaches the output', async () => {
    const env = newEnvironment(await release('v0.5.6'), 'sbx');
    const text = synthesizeEnvironment(env)
      .files.map((f) => f.content)
      .join('');
    expect(text).not.toContain('ko://');
    expect(text).not.toMatch(/image: \S+:latest/);
    expect(text).toContain('image: registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6\n');
  });

  test('requireDigests refuses tag-only images and accepts digests', async () => {
    const rel = await release('v0.5.6');
    const env = newEnvironment(rel, 'strict', { requireDigests: true, install: { controllerDigest: DIGEST } });
    const rc = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
    const tagOnly = thrownBy(
      () =>
        env.addTemplate('tag-only', {
          runtimeClass: rc,
          podSpec: sandboxdPodSpec({ image: 'r.example/sandboxd:v0.5.6' }),
        }),
      UnpinnedImageError,
      'UnpinnedImage',
    );
    expect(tagOnly.unpinned).toBe('DigestRequired');
    const t = env.addTemplate('digest', {
      runtimeClass: rc,
      podSpec: sandboxdPodSpec({ image: `r.example/sandboxd:v0.5.6@${DIGEST}` }),
    });
    expect(t.images[0]!.image).toBe(`r.example/sandboxd:v0.5.6@${DIGEST}`);
    expect(
      () => new AgentSandboxInstall(new Chart(new App(), 'c'), 'i', { release: rel, requireDigests: true }),
    ).toThrow(UnpinnedImageError);
  });

  test.each([
    ['ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller', 'Placeholder'],
    ['busybox', 'NoTagOrDigest'],
    ['localhost:5000/busybox', 'NoTagOrDigest'],
    ['r.example/x:LATEST', 'FloatingTag'],
    [`r.example/x@sha256:abc`, 'MalformedDigest'],
  ])('%s is not pinned (%s)', (image, cause) => {
    expect(unpinnedReason(image, false)?.cause).toBe(cause);
  });

  test.each([
    'localhost:5000/busybox:1.36',
    `r.example/x@${DIGEST}`,
    'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
  ])('%s is pinned', (image) => {
    expect(unpinnedReason(image, false)).toBeUndefined();
  });
});
