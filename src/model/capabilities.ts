/**
 * Capability names: what the product may use on a cluster (docs/architecture.md, "Vocabulary"). Parameterised ones carry their object:
 * `runtime-class/<name>`, `template/<ns>/<name>`, `warm-pool/<ns>/<name>`.
 */
export type CapabilityName =
  | 'sandbox-api'
  | 'extensions-api'
  | 'controller'
  | 'conversion'
  | 'router'
  | 'runtime-exec'
  | 'runtime-files'
  | 'network-isolation'
  | 'suspend-resume'
  | 'snapshot'
  | `runtime-class/${string}`
  | `template/${string}/${string}`
  | `warm-pool/${string}/${string}`;
