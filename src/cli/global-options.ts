/**
 * The global options every command inherits (`--mirror`, `--cache-dir`), read through commander's `optsWithGlobals()`.
 */
import type { Command } from 'commander';

/** Global options as parsed: both optional; the releases layer applies its own defaults (AGENTPLANE_MIRROR, AGENTPLANE_CACHE_DIR). */
export interface GlobalOptions {
  readonly mirror?: string;
  readonly cacheDir?: string;
}

/** The global options seen from inside a (sub)command's action. */
export function globalOptions(cmd: Command): GlobalOptions {
  const all = cmd.optsWithGlobals<{ mirror?: string; cacheDir?: string }>();
  return {
    ...(all.mirror !== undefined ? { mirror: all.mirror } : {}),
    ...(all.cacheDir !== undefined ? { cacheDir: all.cacheDir } : {}),
  };
}
