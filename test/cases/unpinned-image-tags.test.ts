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
    expect((err as Error).message).toContain(
      `image "${LATEST_MAIN}" in SandboxTemplate py containers[sandboxd] is not pinned: tag "latest-main" floats`,
    );
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
    expect(() =>
      env.addTemplate('tag-only', {
        runtimeClass: rc,
        podSpec: sandboxdPodSpec({ image: 'r.example/sandboxd:v0.5.6' }),
      }),
    ).toThrow(/has no digest and this environment requires digests/);
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
    ['ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller', /ko:\/\/ build placeholder/],
    ['busybox', /neither a tag nor a digest/],
    ['localhost:5000/busybox', /neither a tag nor a digest/],
    ['r.example/x:LATEST', /floats/],
    [`r.example/x@sha256:abc`, /not sha256:<64 lowercase hex>/],
  ])('%s is not pinned', (image, reason) => {
    expect(unpinnedReason(image, false)).toMatch(reason);
  });

  test.each([
    'localhost:5000/busybox:1.36',
    `r.example/x@${DIGEST}`,
    'registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6',
  ])('%s is pinned', (image) => {
    expect(unpinnedReason(image, false)).toBeUndefined();
  });
});
