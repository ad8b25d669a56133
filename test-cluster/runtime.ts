/**
 * Contract of the runtime stand-in (runtime-standin.ts) for tests and the verifier: the pod annotation that selects its
 * behaviour and the records it writes to `test-cluster/.run/runtimes.json`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RUN_DIR } from './kube.js';

/**
 * Pod annotation: 'sandboxd' (default: a real sandboxd answers on the pod IP), 'python-runtime' (the upstream python
 * runtime answers on the pod IP, port 8888; default for a python-runtime-sandbox image), 'none' (nothing listens),
 * 'hang' (accepts, never answers).
 */
export const RUNTIME_ANNOTATION = 'test-cluster.agentplane.io/runtime';
export type RuntimeMode = 'sandboxd' | 'python-runtime' | 'none' | 'hang';

/** One entry of `<run>/runtimes.json`. */
export interface RuntimeRecord {
  readonly namespace: string;
  readonly pod: string;
  readonly uid: string;
  readonly podIP: string;
  readonly mode: RuntimeMode;
  /** Runtime ports on the pod IP (sandboxd REST and gRPC; for 'python-runtime' both are its HTTP port, 8888). */
  readonly restPort: number;
  readonly grpcPort: number;
  /**
   * Ports the runtime itself listens on, on `listenHost` (for 'python-runtime' both are uvicorn's); null for 'none' and
   * 'hang'. Equal to restPort/grpcPort when sandboxd binds the pod IP itself (v1.0.3's `--listen-host`).
   */
  readonly localRestPort: number | null;
  readonly localGrpcPort: number | null;
  /** Address sandboxd listens on: '127.0.0.1' (forwarded from the pod IP) or the pod IP itself (v1.0.3); absent for other modes. */
  readonly listenHost?: string;
  /** For 'python-runtime': the directory whose main.py runs (`…/python-runtime-sandbox/<tag>`). */
  readonly runtimeDir?: string;
  /** Runtime pid; null for 'none' and 'hang'. */
  readonly pid: number | null;
}

/** The runtimes the stand-in currently serves ([] when none or when the stand-in has not written its state yet). */
export function readRuntimes(runDir: string = RUN_DIR): RuntimeRecord[] {
  const file = path.join(runDir, 'runtimes.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as RuntimeRecord[]) : [];
}
