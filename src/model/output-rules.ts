/**
 * The rules every object an environment writes keeps, whatever escape hatch changed it (checked by the constructs on
 * the rendered objects; an exception is acknowledged by rule and construct path, and recorded in the descriptor and
 * the lock). Each code is the one the construct-prop check gives for the same fault.
 */

/**
 * `UnpinnedImage`: an image of any pod is not pinned (latest*, no tag, ko://, or no digest where digests are required);
 * the rest hold for sandbox pods (SandboxTemplate, Sandbox): `MissingResourceLimits` (a container without cpu/memory
 * limits), `HostNamespace`, `HostPathVolume`, `PrivilegedContainer`, `AddedCapabilities`, `NotAQuantity` (a request,
 * limit, overhead or emptyDir size that is no Kubernetes quantity), `KnownDefectiveImage` (an image of a known-defective
 * release the template does not accept), `ReadinessProbeUnreachable` (an httpGet/tcpSocket
 * readiness probe on a runtime bound to loopback). Reachability of each sandbox runtime from the router:
 * `RouterPeerMismatch` (a policy that selects the pods admits no router pod), `RuntimePortNotAllowed` (no runtime port
 * admitted by the pods' policy or allowed by the router's egress), `RuntimeListensOnLoopback` (a runtime routed to that
 * binds loopback), `PolicyMissesSandboxPods` (an own NetworkPolicy that selects none of its template's pods),
 * `PolicyPortMissing` (a NetworkPolicy port entry without a port, which admits every port of its protocol). Capacity
 * where a RuntimeClass declares its nodes: `PodExceedsNode`, `NodesExhausted`.
 */
export type OutputRule =
  | 'UnpinnedImage'
  | 'MissingResourceLimits'
  | 'HostNamespace'
  | 'HostPathVolume'
  | 'PrivilegedContainer'
  | 'AddedCapabilities'
  | 'NotAQuantity'
  | 'KnownDefectiveImage'
  | 'ReadinessProbeUnreachable'
  | 'RouterPeerMismatch'
  | 'RuntimePortNotAllowed'
  | 'RuntimeListensOnLoopback'
  | 'PolicyMissesSandboxPods'
  | 'PolicyPortMissing'
  | 'PodExceedsNode'
  | 'NodesExhausted';

/** Every {@link OutputRule}. */
export const OUTPUT_RULES = [
  'UnpinnedImage',
  'MissingResourceLimits',
  'HostNamespace',
  'HostPathVolume',
  'PrivilegedContainer',
  'AddedCapabilities',
  'NotAQuantity',
  'KnownDefectiveImage',
  'ReadinessProbeUnreachable',
  'RouterPeerMismatch',
  'RuntimePortNotAllowed',
  'RuntimeListensOnLoopback',
  'PolicyMissesSandboxPods',
  'PolicyPortMissing',
  'PodExceedsNode',
  'NodesExhausted',
] as const satisfies readonly OutputRule[];
