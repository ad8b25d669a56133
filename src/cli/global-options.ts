/**
 * The global options every command inherits (`--mirror`, `--cache-dir`, `--kubeconfig`, `--context`), read through
 * commander's `optsWithGlobals()`. They are the program's, so they are accepted before or after the command name, as
 * kubectl's are: `agentplane --kubeconfig X verify` and `agentplane verify --kubeconfig X`.
 */
import type { Command } from 'commander';

/** Global options as parsed: all optional; the releases layer applies its own defaults (AGENTPLANE_MIRROR, AGENTPLANE_CACHE_DIR). */
export interface GlobalOptions {
  readonly mirror?: string;
  readonly cacheDir?: string;
}

/** The cluster options: `--kubeconfig` (default `$KUBECONFIG`, then ~/.kube/config) and `--context` (default current-context). */
export interface KubeOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
}

type AllGlobals = GlobalOptions & KubeOptions;

/** The global options seen from inside a (sub)command's action. */
export function globalOptions(cmd: Command): GlobalOptions {
  const all = cmd.optsWithGlobals<AllGlobals>();
  return {
    ...(all.mirror !== undefined ? { mirror: all.mirror } : {}),
    ...(all.cacheDir !== undefined ? { cacheDir: all.cacheDir } : {}),
  };
}

/** `--kubeconfig` and `--context` seen from inside a command's action, wherever they were given; unset ones left out. */
export function kubeOptions(cmd: Command): KubeOptions {
  const all = cmd.optsWithGlobals<AllGlobals>();
  return {
    ...(all.kubeconfig ? { kubeconfig: all.kubeconfig } : {}),
    ...(all.context ? { context: all.context } : {}),
  };
}
