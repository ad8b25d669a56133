/**
 * Shared set-up for constructs, synth and case tests: verified releases from the shared mirror (loaded once per test
 * file, cached in a temp dir), a fresh App + environment, and a small valid pod spec.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { AgentEnvironment, type AgentEnvironmentProps } from '../../../src/constructs/index.js';
import { loadRelease, type LoadedRelease, type ReleaseTag } from '../../../src/releases/index.js';
import { MIRROR } from '../../mirror.js';

export { MIRROR };

const cacheDir = mkdtempSync(join(tmpdir(), 'agentplane-constructs-'));
const loaded = new Map<ReleaseTag, Promise<LoadedRelease>>();

/** A verified release from the shared mirror. */
export function release(tag: ReleaseTag): Promise<LoadedRelease> {
  let p = loaded.get(tag);
  if (p === undefined) {
    p = loadRelease(tag, { mirror: MIRROR, cacheDir });
    loaded.set(tag, p);
  }
  return p;
}

/** A new App with one environment named `name`. */
export function newEnvironment(
  rel: LoadedRelease,
  name = 'test',
  props: Partial<AgentEnvironmentProps> = {},
): AgentEnvironment {
  return new AgentEnvironment(new App(), name, { release: rel, ...props });
}

/** An image pinned by tag. */
export const IMAGE = 'registry.example.internal/agent-sandbox/sandboxd:v0.5.6';

/** A valid single-container pod spec (limits set) running `image`. */
export function podSpec(image = IMAGE, extra: Partial<k8s.Container> = {}): k8s.PodSpec {
  const q = { cpu: k8s.Quantity.fromString('500m'), memory: k8s.Quantity.fromString('256Mi') };
  return {
    containers: [
      { name: 'main', image, ports: [{ containerPort: 8888 }], resources: { limits: q, requests: q }, ...extra },
    ],
  };
}

/** The JSON of every ApiObject in the environment (after sealing), by kind. */
export function objectsOf(env: AgentEnvironment): Array<Record<string, any>> {
  env.seal();
  return env.toJson() as Array<Record<string, any>>;
}
