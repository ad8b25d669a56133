/**
 * What the NetworkPolicies predict for one TCP connection (pure): `deny` when the destination's ingress or the source's
 * egress admits it by no rule, `allow` when both sides admit it, `unknown` when a rule cannot be judged here (a named
 * port, an IPv6 block, a namespaceSelector on labels other than `kubernetes.io/metadata.name`, the one namespace label
 * known without reading Namespaces). The enforcement test holds its observations against these predictions.
 */
import type { IngressPeerView, NetworkPolicyView } from '../../adapter/kubernetes/views.js';
import { peerAdmits, portAdmits, selectsTri, type Tri } from './router-admission.js';

/** One end of a connection: a pod (namespace and labels) or, without labels, an address that is no pod. */
export interface Endpoint {
  readonly ip: string;
  readonly namespace?: string | undefined;
  readonly labels?: Readonly<Record<string, string>>;
}

export interface Expectation {
  readonly verdict: 'deny' | 'allow' | 'unknown';
  /** The policies whose rules decide it: the denying ones for `deny`, else those that select either end. */
  readonly policies: readonly string[];
}

/** Whether peer `peer` of a policy in `policyNs` matches endpoint `e` (an address that is no pod matches ipBlocks only). */
function peerMatches(peer: IngressPeerView, policyNs: string, e: Endpoint): Tri {
  if (!peer.ipBlock && (!e.labels || e.namespace === undefined)) return false;
  return peerAdmits(peer, policyNs, { name: e.ip, namespace: e.namespace ?? '', labels: e.labels ?? {}, podIP: e.ip });
}

const all = (xs: readonly Tri[]): Tri => (xs.includes(false) ? false : xs.includes(undefined) ? undefined : true);
const any = (xs: readonly Tri[]): Tri => (xs.includes(true) ? true : xs.includes(undefined) ? undefined : false);

/** Whether one side (the pod `self`, its policies of `kind`) admits `peer` on `port`; `none` = no policy restricts it. */
function side(
  kind: 'ingress' | 'egress',
  self: Endpoint,
  peer: Endpoint,
  port: number,
  policies: readonly NetworkPolicyView[],
): { admits: Tri; by: string[] } {
  if (!self.labels || self.namespace === undefined) return { admits: true, by: [] };
  const selecting = policies.filter(
    (p) =>
      p.meta.namespace === self.namespace &&
      selectsTri(p.podSelector, self.labels!, true) === true &&
      (kind === 'ingress' ? p.restrictsIngress : p.restrictsEgress),
  );
  if (selecting.length === 0) return { admits: true, by: [] };
  const verdicts = selecting.flatMap((p) =>
    (kind === 'ingress'
      ? p.ingress.map((r) => ({ peers: r.from, ports: r.ports }))
      : p.egress.map((r) => ({ peers: r.to, ports: r.ports }))
    ).map((r) =>
      all([
        !r.peers || r.peers.length === 0 ? true : any(r.peers.map((x) => peerMatches(x, p.meta.namespace ?? '', peer))),
        portAdmits(r.ports, port),
      ]),
    ),
  );
  return { admits: any(verdicts), by: selecting.map((p) => `${p.meta.namespace}/${p.meta.name}`) };
}

/** The policies' prediction for a TCP connection from `src` to `dst` on `port`. */
export function expectConnection(
  src: Endpoint,
  dst: Endpoint,
  port: number,
  policies: readonly NetworkPolicyView[],
): Expectation {
  const ingress = side('ingress', dst, src, port, policies);
  const egress = side('egress', src, dst, port, policies);
  const denying = [...(ingress.admits === false ? ingress.by : []), ...(egress.admits === false ? egress.by : [])];
  if (denying.length > 0) return { verdict: 'deny', policies: [...new Set(denying)] };
  const by = [...new Set([...ingress.by, ...egress.by])];
  return { verdict: ingress.admits === true && egress.admits === true ? 'allow' : 'unknown', policies: by };
}
