/**
 * Contract of the runtime stand-in (runtime-standin.ts) for tests and the verifier: the pod annotation that selects its
 * behaviour and the records it writes to `test-cluster/.run/runtimes.json`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RUN_DIR } from './kube.js';

/** Pod annotation: 'sandboxd' (default: a real sandboxd answers on the pod IP), 'none' (nothing listens), 'hang' (accepts, never answers). */
export const RUNTIME_ANNOTATION = 'test-cluster.agentplane.io/runtime';
export type RuntimeMode = 'sandboxd' | 'none' | 'hang';

/** One entry of `<run>/runtimes.json`. */
export interface RuntimeRecord {
  readonly namespace: string; readonly pod: string; readonly uid: string; readonly podIP: string; readonly mode: RuntimeMode;
  /** Runtime ports on the pod IP (sandboxd REST and gRPC). */
  readonly restPort: number; readonly grpcPort: number;
  /** Ports sandboxd itself listens on (127.0.0.1); null unless mode is 'sandboxd'. */
  readonly localRestPort: number | null; readonly localGrpcPort: number | null;
  /** sandboxd pid; null unless mode is 'sandboxd'. */
  readonly pid: number | null;
}

/** The runtimes the stand-in currently serves ([] when none or when the stand-in has not written its state yet). */
export function readRuntimes(runDir: string = RUN_DIR): RuntimeRecord[] {
  const file = path.join(runDir, 'runtimes.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as RuntimeRecord[]) : [];
}
