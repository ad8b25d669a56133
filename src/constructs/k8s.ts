/**
 * The Kubernetes API bindings of cdk8s-plus-28 (its `k8s` namespace, the generated `lib/imports/k8s.js`) without the
 * rest of the package: its entry also loads every cdk8s-plus construct, which AgentPlane does not use (~0.1 s of CPU
 * at start-up). Loaded with require: an ES import would make Node scan the 2.7 MB CommonJS file for its export names.
 * The same module object as `require('cdk8s-plus-28').k8s`.
 */
import { createRequire } from 'node:module';
import type * as bindings from 'cdk8s-plus-28/lib/imports/k8s.js';

export const k8s = createRequire(import.meta.url)('cdk8s-plus-28/lib/imports/k8s.js') as typeof bindings;

/** The binding types used by the constructs, under the same names as on cdk8s-plus-28's `k8s`. */
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace k8s {
  export type Affinity = bindings.Affinity;
  export type Container = bindings.Container;
  export type IntOrString = bindings.IntOrString;
  export type NetworkPolicyEgressRule = bindings.NetworkPolicyEgressRule;
  export type NetworkPolicyIngressRule = bindings.NetworkPolicyIngressRule;
  export type NetworkPolicyPeer = bindings.NetworkPolicyPeer;
  export type NetworkPolicyPort = bindings.NetworkPolicyPort;
  export type PodSpec = bindings.PodSpec;
  export type PolicyRule = bindings.PolicyRule;
  export type Quantity = bindings.Quantity;
  export type Toleration = bindings.Toleration;
  export type VolumeMount = bindings.VolumeMount;
}
