/** The compatibility tuple's parts (docs/architecture.md, "Vocabulary") and what each supported release was built for. */
import type { ReleaseTag } from './releases.js';

/** The nine parts of the compatibility tuple, in the order reports print them. */
export const TUPLE_KEYS = [
  'kubernetes',
  'crdRelease',
  'controller',
  'extensions',
  'router',
  'runtimeServer',
  'clientSdk',
  'containerRuntime',
  'cni',
] as const;

export type TuplePart = (typeof TUPLE_KEYS)[number];

/** What each release was built for: k8s.io/api of its `go.mod@tag` and the router and runtime images its manifests name. */
export const BUILT_FOR: Readonly<Record<ReleaseTag, Readonly<Partial<Record<TuplePart, string>>>>> = {
  'v0.4.6': {
    kubernetes: '1.35 (k8s.io/api v0.35.4, go.mod@v0.4.6)',
    router: 'python router only (no Go router before v0.5.1)',
    runtimeServer: 'python-runtime-sandbox:v0.4.6 (no sandboxd before v0.5.1)',
  },
  'v0.5.0': {
    kubernetes: '1.35 (k8s.io/api v0.35.4, go.mod@v0.5.0)',
    router: 'python router only (no Go router before v0.5.1)',
    runtimeServer: 'python-runtime-sandbox:v0.5.0 (no sandboxd before v0.5.1)',
  },
  'v0.5.6': {
    kubernetes: '1.36 (k8s.io/api v0.36.3, go.mod@v0.5.6)',
    router: 'sandbox-router v0.5.6 (Go) or python router',
    runtimeServer: 'python-runtime-sandbox:v0.5.6 or sandboxd v0.5.6',
  },
  'v1.0.3': {
    kubernetes: '1.37 (k8s.io/api v0.37.0, go.mod@v1.0.3)',
    router: 'sandbox-router v1.0.3 (Go) or python router',
    runtimeServer: 'python-runtime-sandbox:v1.0.3 or sandboxd v1.0.3 (--listen-host, pod network)',
  },
};
