/**
 * dev-gvisor: a development environment on Agent Sandbox v0.5.6 — the pinned install, a gVisor RuntimeClass, one
 * sandboxd template, no warm pool, no router. Synthesize with `npm run synth` (or `npx agentplane synth examples/dev-gvisor/environment.ts`).
 * The example for v0.5 users (sandboxd listens on 127.0.0.1 there, so `sandboxdPodSpec` gets no `release`), and the
 * one the real-node cluster tests deploy unchanged; prod-kata pins v1.0.3.
 */
import { AgentEnvironment, defineEnvironments, sandboxdPodSpec, SANDBOXD_RUNTIME } from '../../src/index.js';

/**
 * sandboxd image. Upstream publishes sandboxd only as a staging `latest-main` build
 * (`packages/sandboxd/USER_GUIDE.md@v0.5.6`), which AgentPlane refuses: build it from `packages/sandboxd@v0.5.6` (or
 * mirror a build) and pin the tag here, with `@sha256:...` once known.
 */
export const SANDBOXD_IMAGE = 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6';

/** The verifier image, built from this package by scripts/build-verifier-image.sh (no image is published). */
export const VERIFIER_IMAGE = 'registry.example.internal/agentplane/verifier:0.1.0';

export default defineEnvironments(async (ctx) => {
  const release = await ctx.loadRelease('v0.5.6');
  const env = new AgentEnvironment(ctx.app, 'dev-gvisor', { release, defaultNamespace: 'dev-sandboxes' });
  // The dev cluster installs runsc on every node, so no scheduling rules: an explicit opt-in.
  const gvisor = env.addRuntimeClass('gvisor', { preset: 'gvisor', allNodes: true });
  env.addTemplate('shell', {
    runtimeClass: gvisor,
    podSpec: sandboxdPodSpec({ image: SANDBOXD_IMAGE, resources: { cpu: '250m', memory: '256Mi' } }),
    runtime: SANDBOXD_RUNTIME,
  });
  // The in-cluster verifier runs last: an Argo CD PostSync hook / the last Flux wave (README "The verifier inside the cluster").
  env.addVerifierJob('verify', { image: VERIFIER_IMAGE });
});
