/**
 * Writing synthesized environments: each environment's folder under the output directory is replaced as a whole, so a
 * phase that became empty leaves no stale file behind.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EnvironmentSynthesis } from './synthesize.js';

/** Writes every file of `synth` under `outDir/<environment>/`; returns the paths written. */
export function writeSynthesis(outDir: string, synth: EnvironmentSynthesis): string[] {
  rmSync(join(outDir, synth.name), { recursive: true, force: true });
  const written: string[] = [];
  for (const file of synth.files) {
    const path = join(outDir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.content);
    written.push(path);
  }
  return written;
}
