/**
 * The compatibility tuple (docs/architecture.md, "Vocabulary"): the versions of everything a verify result depends on, read from the
 * cluster and printed with every report. Each entry says what it is and where it was read, or why it is unknown.
 */
import { TUPLE_KEYS } from '../model/compatibility.js';

/** One entry: `value` (a version, or `unknown`/`not deployed`) and `source` (where it was read, or why not). */
export interface TupleEntry {
  readonly value: string;
  readonly source: string;
  /** The adapter's category (e.g. `forbidden`) when a cluster read failed and left the entry `unknown`. */
  readonly readFailed?: string;
}

export interface CompatibilityTuple {
  /** API server `/version` gitVersion. */
  readonly kubernetes: TupleEntry;
  /** Agent Sandbox release of the live CRDs (`app.kubernetes.io/version` label, else matched by served versions). */
  readonly crdRelease: TupleEntry;
  /** Controller image tag (Deployment), or the release reported by the environment for an out-of-cluster controller. */
  readonly controller: TupleEntry;
  /** Release of the extensions (extension CRDs present + `--extensions` on the controller). */
  readonly extensions: TupleEntry;
  readonly router: TupleEntry;
  /** Runtime server kind and version answering in the probe sandbox (e.g. `sandboxd`, `python-runtime`). */
  readonly runtimeServer: TupleEntry;
  /** AgentPlane's own version (the client SDK in this tuple). */
  readonly clientSdk: TupleEntry;
  /** Nodes' `status.nodeInfo.containerRuntimeVersion` (distinct values). */
  readonly containerRuntime: TupleEntry;
  /** CNI, recognised by its DaemonSet in kube-system; the API does not name it otherwise. */
  readonly cni: TupleEntry;
}

export { TUPLE_KEYS };

/** A tuple whose entries are all `unknown` with the given reason (used when the cluster could not be read at all). */
export function unknownTuple(reason: string, clientSdk: TupleEntry): CompatibilityTuple {
  const u: TupleEntry = { value: 'unknown', source: reason };
  return {
    kubernetes: u,
    crdRelease: u,
    controller: u,
    extensions: u,
    router: u,
    runtimeServer: u,
    clientSdk,
    containerRuntime: u,
    cni: u,
  };
}

/** `kubernetes=v1.36.3 crdRelease=v0.5.6 …` on one line. */
export function tupleLine(t: CompatibilityTuple): string {
  return TUPLE_KEYS.map((k) => `${k}=${t[k].value}`).join(' ');
}
