/**
 * SandboxNetworkPolicy: the environment's own NetworkPolicy for one template's sandbox pods. Ingress to the runtime
 * endpoint admits only the router's pods (peer taken from the SandboxRouter construct, one value) and the declared
 * callers; egress is an allowlist with DNS explicit. Declaring it makes the template `networkPolicyManagement: Unmanaged`
 * so the controller's own policy (which allows 0.0.0.0/0 minus private ranges, `sandboxtemplate_controller.go@v0.5.6`)
 * does not add to it (case netpol-effective-coverage).
 */
import type { ApiObject } from './cdk8s.js';
import { k8s } from './k8s.js';
import { Construct } from 'constructs';
import { sameCopies } from './package-copies.js';
import { z } from 'zod';
import { UnreachableError } from './bounds-errors.js';
import { LABEL_ENVIRONMENT, LABEL_TEMPLATE } from './metadata.js';
import { plain } from './pod-security.js';
import { parseProps } from './props.js';
import { SandboxRouter } from './router.js';
import { requireContext, SandboxTemplate } from './template.js';
import { DNS_LABEL } from '../model/names.js';

/** Pods in one namespace, selected by labels. */
export interface PodPeer {
  readonly namespace: string;
  /**
   * Labels the pods carry.
   * @default - all pods of the namespace
   */
  readonly podLabels?: Readonly<Record<string, string>>;
}

/** One allowed egress destination: pods (`namespace` [+ `podLabels`]) or an address block (`cidr` [- `except`]). */
export interface EgressAllow {
  /**
   * What it is for (kept in the descriptor).
   * @default - none
   */
  readonly description?: string;
  /** @default - none (give `namespace` or `cidr`) */
  readonly namespace?: string;
  /** @default - all pods of `namespace` */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** @default - none (give `namespace` or `cidr`) */
  readonly cidr?: string;
  /** @default - none */
  readonly except?: readonly string[];
  /** Ports; at least one. */
  readonly ports: readonly {
    readonly port: number;
    /** @default 'TCP' */
    readonly protocol?: 'TCP' | 'UDP' | 'SCTP';
  }[];
}

/**
 * Where the pods' DNS queries may go, each on UDP and TCP 53. The defaults cover both cluster DNS topologies: queries
 * answered by the CoreDNS pods (kube-proxy rewrites the Service IP to a pod), and a NodeLocal DNSCache, which runs with
 * `hostNetwork` and answers on `169.254.20.10` (IPVS mode) or on the DNS Service IP itself (iptables mode): no
 * podSelector can match a host-network pod, so those two addresses are admitted as `/32` blocks
 * (kubernetes/kubernetes#70555, gardener/gardener#2745).
 */
export interface DnsTargets {
  /**
   * The cluster DNS pods, or `false` for none.
   * @default { namespace: 'kube-system', podLabels: { 'k8s-app': 'kube-dns' } }
   */
  readonly pods?: PodPeer | false;
  /**
   * The NodeLocal DNSCache address, or `false` for none.
   * @default '169.254.20.10'
   */
  readonly nodeLocalCache?: string | false;
  /**
   * The cluster DNS Service IP (the kubelet's `clusterDNS`), or `false` for none.
   * @default '10.96.0.10'
   */
  readonly serviceIP?: string | false;
}

/** The DNS targets a policy admits, resolved (absent = none of that kind). */
export interface ResolvedDnsTargets {
  readonly pods?: PodPeer;
  readonly nodeLocalCache?: string;
  readonly serviceIP?: string;
}

/** The default CoreDNS pods (label `k8s-app: kube-dns`, kept by CoreDNS deployments for kube-dns compatibility). */
const DEFAULT_DNS_PODS: PodPeer = { namespace: 'kube-system', podLabels: { 'k8s-app': 'kube-dns' } };
/** The NodeLocal DNSCache's link-local address (`cluster/addons/dns/nodelocaldns` in kubernetes/kubernetes). */
const DEFAULT_NODE_LOCAL_DNS = '169.254.20.10';
/** The kubeadm default cluster DNS Service IP (10th address of the default `10.96.0.0/12` Service range). */
const DEFAULT_DNS_SERVICE_IP = '10.96.0.10';

/** The targets in words, for the synthesis summary and the verifier's messages. */
export function describeDnsTargets(t: ResolvedDnsTargets | false): string {
  if (t === false) return 'none (dns: false)';
  const parts = [
    ...(t.pods
      ? [
          `pods ${t.pods.namespace}/${
            Object.entries(t.pods.podLabels ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || '*'
          }`,
        ]
      : []),
    ...(t.nodeLocalCache ? [`${t.nodeLocalCache}/32 (node-local cache)`] : []),
    ...(t.serviceIP ? [`${t.serviceIP}/32 (DNS Service IP)`] : []),
  ];
  return parts.length === 0 ? 'none' : `${parts.join(', ')} on UDP+TCP 53`;
}

/** Props of {@link SandboxNetworkPolicy}. */
export interface SandboxNetworkPolicyProps {
  /** The template whose pods the policy selects (by `agentplane.dev/template`). Required. */
  readonly template: SandboxTemplate;
  /**
   * Object name.
   * @default - `<template>-sandbox-policy`
   */
  readonly name?: string;
  /**
   * The router whose pods may reach the runtime endpoint.
   * @default - none
   */
  readonly router?: SandboxRouter;
  /**
   * Other pods that may reach the runtime endpoint.
   * @default - none
   */
  readonly callers?: readonly PodPeer[];
  /**
   * Cluster DNS the pods may query on 53/UDP+TCP ({@link DnsTargets}), or `false` for none.
   * @default - the CoreDNS pods, `169.254.20.10/32` and `10.96.0.10/32`
   */
  readonly dns?: DnsTargets | false;
  /**
   * Egress allowlist besides DNS.
   * @default - nothing else
   */
  readonly egress?: readonly EgressAllow[];
}

const LabelMap = z.record(z.string(), z.string());
const PeerSchema = z
  .object({ namespace: z.string().regex(DNS_LABEL, 'must be a namespace name'), podLabels: LabelMap.optional() })
  .strict();
const CIDR = /^[0-9a-fA-F:.]+\/[0-9]{1,3}$/;
const EgressSchema = z
  .object({
    description: z.string().optional(),
    namespace: z.string().regex(DNS_LABEL, 'must be a namespace name').optional(),
    podLabels: LabelMap.optional(),
    cidr: z.string().regex(CIDR, 'must be an address block like 10.0.0.0/8').optional(),
    except: z.array(z.string().regex(CIDR, 'must be an address block')).optional(),
    ports: z
      .array(
        z
          .object({ port: z.number().int().min(1).max(65535), protocol: z.enum(['TCP', 'UDP', 'SCTP']).default('TCP') })
          .strict(),
      )
      .min(1, 'give at least one port: an egress allowlist entry without ports opens every port'),
  })
  .strict()
  .superRefine((e, ctx) => {
    const pods = e.namespace !== undefined || e.podLabels !== undefined;
    if (pods === (e.cidr !== undefined))
      ctx.addIssue({
        code: 'custom',
        params: { reason: 'AmbiguousDestination' },
        message: 'give either namespace/podLabels or cidr, exactly one kind of destination',
      });
    if (e.except !== undefined && e.cidr === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['except'],
        params: { reason: 'ExceptWithoutCidr' },
        message: 'only with cidr',
      });
  });

const PropsSchema = z
  .object({
    template: z.instanceof(SandboxTemplate, { message: 'must be a SandboxTemplate construct' }),
    name: z.string().regex(DNS_LABEL, 'must be a DNS label').max(63).optional(),
    router: z.instanceof(SandboxRouter, { message: 'must be a SandboxRouter construct' }).optional(),
    callers: z.array(PeerSchema).default([]),
    dns: z
      .union([
        z.literal(false),
        z
          .object({
            pods: z.union([z.literal(false), PeerSchema]).optional(),
            nodeLocalCache: z.union([z.literal(false), z.ipv4({ message: 'must be an IPv4 address' })]).optional(),
            serviceIP: z.union([z.literal(false), z.ipv4({ message: 'must be an IPv4 address' })]).optional(),
          })
          .strict(),
      ])
      .default({}),
    egress: z.array(EgressSchema).default([]),
  })
  .strict();

function podPeer(peer: PodPeer): k8s.NetworkPolicyPeer {
  return {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': peer.namespace } },
    ...(peer.podLabels !== undefined ? { podSelector: { matchLabels: { ...peer.podLabels } } } : {}),
  };
}

/** A NetworkPolicy in the template's namespace selecting its pods, Ingress + Egress. */
export class SandboxNetworkPolicy extends Construct {
  readonly name: string;
  readonly namespace: string;
  readonly template: SandboxTemplate;
  /** The router admitted to the runtime endpoint, if any. */
  readonly router?: SandboxRouter;
  /** Who may reach the runtime endpoint (router first, then callers). */
  readonly ingressFrom: readonly PodPeer[];
  readonly ingressPorts: readonly number[];
  /** The DNS targets admitted (printed at synthesis), or `false` when the policy admits no DNS. */
  readonly dns: ResolvedDnsTargets | false;
  readonly egress: readonly EgressAllow[];
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: SandboxNetworkPolicyProps) {
    super(sameCopies(scope, id), id);
    const ctx = requireContext(this, 'SandboxNetworkPolicy');
    const p = parseProps(this, 'SandboxNetworkPolicy', PropsSchema, props);
    this.template = p.template;
    this.name = p.name ?? `${p.template.name}-sandbox-policy`;
    this.namespace = p.template.namespace;
    if (p.router !== undefined) {
      assertRouterReaches(this.node.path, p.router, p.template);
      this.router = p.router;
    }
    const from: PodPeer[] = [];
    if (p.router !== undefined) from.push({ namespace: p.router.namespace, podLabels: p.router.podLabels });
    for (const c of p.callers)
      from.push(
        c.podLabels !== undefined ? { namespace: c.namespace, podLabels: c.podLabels } : { namespace: c.namespace },
      );
    this.ingressFrom = from;
    this.ingressPorts = [...p.template.runtime.ports];
    this.dns = p.dns === false ? false : resolveDns(p.dns);
    this.egress = plain(p.egress) as EgressAllow[];

    const ports = (list: readonly { port: number; protocol?: string }[]): k8s.NetworkPolicyPort[] =>
      list.map((port) => ({ port: k8s.IntOrString.fromNumber(port.port), protocol: port.protocol ?? 'TCP' }));
    const ingress: k8s.NetworkPolicyIngressRule[] =
      from.length === 0 ? [] : [{ from: from.map(podPeer), ports: ports(this.ingressPorts.map((port) => ({ port }))) }];
    const egress: k8s.NetworkPolicyEgressRule[] = [];
    const dnsPeers: k8s.NetworkPolicyPeer[] =
      this.dns === false
        ? []
        : [
            ...(this.dns.pods ? [podPeer(this.dns.pods)] : []),
            ...[this.dns.nodeLocalCache, this.dns.serviceIP]
              .filter((a): a is string => a !== undefined)
              .map((a) => ({ ipBlock: { cidr: `${a}/32` } })),
          ];
    if (dnsPeers.length > 0)
      egress.push({
        to: dnsPeers,
        ports: ports([
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ]),
      });
    for (const e of p.egress) {
      const to: k8s.NetworkPolicyPeer =
        e.cidr !== undefined
          ? { ipBlock: { cidr: e.cidr, ...(e.except !== undefined ? { except: [...e.except] } : {}) } }
          : {
              ...(e.namespace !== undefined
                ? { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': e.namespace } } }
                : {}),
              ...(e.podLabels !== undefined ? { podSelector: { matchLabels: { ...e.podLabels } } } : {}),
            };
      egress.push({ to: [to], ports: ports(e.ports) });
    }
    this.apiObject = new k8s.KubeNetworkPolicy(this, 'Resource', {
      metadata: { name: this.name, namespace: this.namespace, labels: { [LABEL_ENVIRONMENT]: ctx.name } },
      spec: {
        podSelector: { matchLabels: { [LABEL_TEMPLATE]: p.template.name, [LABEL_ENVIRONMENT]: ctx.name } },
        policyTypes: ['Ingress', 'Egress'],
        ingress,
        egress,
      },
    });
    p.template.registerOwnPolicy(this.name);
  }
}

/** The DNS targets with defaults filled in (for an absent or `undefined` field); `false` drops a kind. */
function resolveDns(d: {
  pods?: z.output<typeof PeerSchema> | false | undefined;
  nodeLocalCache?: string | false | undefined;
  serviceIP?: string | false | undefined;
}): ResolvedDnsTargets {
  const pods = d.pods === undefined ? DEFAULT_DNS_PODS : d.pods;
  const nodeLocalCache = d.nodeLocalCache === undefined ? DEFAULT_NODE_LOCAL_DNS : d.nodeLocalCache;
  const serviceIP = d.serviceIP === undefined ? DEFAULT_DNS_SERVICE_IP : d.serviceIP;
  return {
    ...(pods !== false
      ? {
          pods:
            pods.podLabels !== undefined
              ? { namespace: pods.namespace, podLabels: { ...pods.podLabels } }
              : { namespace: pods.namespace },
        }
      : {}),
    ...(nodeLocalCache !== false ? { nodeLocalCache } : {}),
    ...(serviceIP !== false ? { serviceIP } : {}),
  };
}

/**
 * Refuses a router path that cannot work (case router-podip-ssrf construct side): a runtime bound to loopback — sandboxd
 * up to v0.5.6 (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`), or a v1.0.x sandboxd told `--listen-host=127.0.0.1`
 * — is reached by no pod-IP dial (sandboxd v1.0.x binds `0.0.0.0` by default, `packages/sandboxd/cmd/sandboxd/main.go@v1.0.3`);
 * otherwise at least one runtime port must be among the ports the router's egress allows (`sandboxPorts`, upstream 8888).
 * @throws UnreachableError naming the runtime's and the router's side.
 */
function assertRouterReaches(path: string, router: SandboxRouter, template: SandboxTemplate): void {
  const rt = template.runtime;
  const runtimeSide = `template ${template.namespace}/${template.name} runtime ${rt.kind} (container ${rt.container}, ports ${rt.ports.join(', ')}`;
  const routerSide = `router ${router.namespace}/${router.serviceName} dials pod IPs with egress to TCP ${router.sandboxPorts.join(', ')}`;
  const sides = {
    template: `${template.namespace}/${template.name}`,
    runtime: { kind: rt.kind, container: rt.container, ports: [...rt.ports] },
    router: { namespace: router.namespace, ports: [...router.sandboxPorts] },
  };
  const bind = template.runtimeBind;
  if (bind !== undefined && !bind.podNetwork) {
    throw new UnreachableError(
      path,
      'RuntimeListensOnLoopback',
      `${runtimeSide}, bound to ${bind.host} only under release ${template.release.facts.tag}, ${bind.cite}) cannot be reached by the ${routerSide}`,
      bind.from === 'release' && rt.kind === 'sandboxd'
        ? 'leave router out of this policy (reach sandboxd inside the pod), use a runtime that listens on the pod IP, or pin a v1.0.x release (sandboxd --listen-host)'
        : 'leave router out of this policy, or let the runtime listen on the pod network (e.g. --listen-host=0.0.0.0)',
      sides,
    );
  }
  if (!rt.ports.some((port) => router.sandboxPorts.includes(port))) {
    throw new UnreachableError(
      path,
      'RuntimePortNotAllowed',
      `${runtimeSide}) listens on no port the ${routerSide} allow`,
      `add the runtime port to the router's sandboxPorts (e.g. sandboxPorts: [${rt.ports[0]}]), or fix the template's runtime.ports`,
      sides,
    );
  }
}
