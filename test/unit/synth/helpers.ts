/** Shared set-up for synth tests: the example environments built from the shared mirror, hashes, the golden split. */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import devGvisor from '../../../examples/dev-gvisor/environment.js';
import prodKata from '../../../examples/prod-kata/environment.js';
import { ANNOTATION_RELEASE_COMMIT } from '../../../src/constructs/index.js';
import { buildEnvironments, synthesizeEnvironment, type EnvironmentSynthesis } from '../../../src/synth/index.js';
import { MIRROR } from '../constructs/fixture.js';

export const EXAMPLES = { 'dev-gvisor': devGvisor, 'prod-kata': prodKata } as const;
export type ExampleName = keyof typeof EXAMPLES;

const memo = new Map<ExampleName, Promise<EnvironmentSynthesis>>();

/** One synthesis of an example, shared by the tests of a file (the result is never mutated). */
export function exampleSynthesis(name: ExampleName): Promise<EnvironmentSynthesis> {
  let p = memo.get(name);
  if (p === undefined) {
    p = synthExample(name);
    memo.set(name, p);
  }
  return p;
}

/** Builds and synthesizes one example from scratch (fresh App, fresh cache dir, fresh release load). */
export async function synthExample(name: ExampleName): Promise<EnvironmentSynthesis> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'agentplane-synth-'));
  const [env] = await buildEnvironments(EXAMPLES[name], { mirror: MIRROR, cacheDir });
  return synthesizeEnvironment(env!);
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** File path -> sha256 of its content. */
export function fileHashes(s: EnvironmentSynthesis): Record<string, string> {
  return Object.fromEntries(s.files.map((f) => [f.path, sha256(f.content)]));
}

/**
 * The golden form of a synthesis: objects AgentPlane writes itself in full; objects taken from the pinned release
 * (they carry the release-commit annotation: install and router) by sha256 of their JSON only, never their content.
 */
export function goldenOf(s: EnvironmentSynthesis): {
  files: string[];
  own: unknown[];
  upstream: Record<string, string>;
} {
  const own: unknown[] = [];
  const upstream: Record<string, string> = {};
  for (const { object } of s.objects) {
    const id = `${object.apiVersion}/${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name}`;
    const annotations = (object.metadata?.['annotations'] ?? {}) as Record<string, string>;
    if (annotations[ANNOTATION_RELEASE_COMMIT] !== undefined) upstream[id] = sha256(JSON.stringify(object));
    else own.push(object);
  }
  return { files: s.files.map((f) => f.path), own, upstream };
}
