/**
 * What the verifier checks: the capabilities an environment declares and where their objects live. Built from the
 * environment descriptor (./environment.ts) or from flags; probes read only this, never the descriptor itself.
 */
import type { TransportKind } from '../adapter/types.js';
import type { ReleaseTag } from '../releases/index.js';
import type { Requirement } from './report.js';

/** The runtime server a template's pods run (`packages/sandboxd/**@v0.5.6`, `examples/python-runtime-sandbox/main.py@v0.5.6`): sandboxd (REST + gRPC, loopback in the pod up to v0.5.6, `--listen-host` from v1.0.1) or the legacy python runtime (HTTP 8888). */
export type RuntimeKind = 'sandboxd' | 'python-runtime';

export interface TemplatePlan {
  readonly namespace: string;
  readonly name: string;
  /** `custom`: a runtime the adapter does not speak; its runtime capabilities cannot be proven. */
  readonly runtime: RuntimeKind | 'custom';
  /** Image of the runtime container, for the compatibility tuple. */
  readonly runtimeImage?: string;
  /** The image the environment pinned per container name (init and app containers), compared with running pods' imageIDs; unset = not known (plan from flags). */
  readonly images?: Readonly<Record<string, string>>;
  /** Labels every pod of the template carries (the descriptor's `podLabels`): how the image-digest probe finds its pods; unset = not looked for. */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** Ports of the runtime server: sandboxd REST 8080 / gRPC 9090, python runtime 8888 (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`). */
  readonly ports: { readonly rest: number; readonly grpc?: number };
  readonly runtimeClassName?: string;
  /** `Managed` (controller-made `<template>-network-policy`) or `Unmanaged` (the environment's own policies). */
  readonly networkPolicyManagement: 'Managed' | 'Unmanaged';
}

export interface WarmPoolPlan {
  readonly namespace: string;
  readonly name: string;
  readonly template: string;
  readonly replicas: number;
}

export interface NetworkPolicyPlan {
  readonly namespace: string;
  readonly name: string;
  /** Egress the environment declares for sandbox pods, as CIDRs/ports text (e.g. `udp/53`, `0.0.0.0/0`); used to spot "egress wider than declared". */
  readonly allowedEgress: readonly string[];
  /** Ingress peers the policy admits (namespace + pod labels), e.g. the router. */
  readonly ingressFrom: ReadonlyArray<{
    readonly namespace: string;
    readonly podLabels: Readonly<Record<string, string>>;
  }>;
  /** Template whose pods the policy is for. */
  readonly template: string;
  /** DNS targets the policy admits on UDP+TCP 53 (construct `dns`); absent: the policy admits no DNS. */
  readonly dns?: {
    readonly pods?: { readonly namespace: string; readonly podLabels?: Readonly<Record<string, string>> };
    readonly nodeLocalCache?: string;
    readonly serviceIP?: string;
  };
}

export interface RouterPlan {
  readonly namespace: string;
  readonly service: string;
  /** Base URL the verifier uses to reach the router, e.g. `http://127.0.0.1:18080`; unset = not reachable from here. */
  readonly url?: string;
  /** Labels of the router pods (template policies admit `app: sandbox-router`, `extensions/controllers/sandboxtemplate_controller.go@v0.5.6`). */
  readonly podLabels: Readonly<Record<string, string>>;
  /** Image the environment pinned for the router container; unset = not known (no image-digest check of router pods). */
  readonly image?: string;
  /** Authorization mode the environment declares (descriptor `router.authorizationMode`); unset = not declared (plan from flags). */
  readonly authorizationMode?: 'tokenreview' | 'scoped-token' | 'allow-all';
  /** The environment chose a router that authenticates nobody on purpose (construct `acknowledgeUnauthenticated: true`). */
  readonly acknowledgeUnauthenticated?: boolean;
  /**
   * Address of this verifier that the router can dial (`--router-canary-host`; in the VerifierJob its pod IP): the negative
   * probes point the router at a listener opened there, proving that no upstream connection was made. A loopback address
   * says the verifier shares the router's network namespace (a router run as a local process), so `X-Sandbox-Pod-IP:
   * 127.0.0.1` is checked against it too. Unset: refusals are seen, but that nothing was dialled stays unproven.
   */
  readonly canaryHost?: string;
}

/** One declared client SDK: the path its calls take (descriptor `clients[]`). */
export interface ClientPlan {
  readonly sdk: string;
  readonly version: string;
  readonly mode: string;
  readonly runtimeApi: 'python-runtime' | 'sandboxd';
  readonly via: 'router' | 'pod';
  readonly ports: readonly number[];
  readonly headers: readonly string[];
  readonly warmPools: ReadonlyArray<{ readonly namespace: string; readonly name: string }>;
  readonly routerNamespace?: string;
}

export interface VerifyPlan {
  readonly environment: string;
  readonly release: ReleaseTag;
  /** Where the plan came from (directory or `flags`). */
  readonly source: string;
  /**
   * Where the controller runs; `image` is the one the environment pins (default: the release's image); `rbacNarrowed`
   * lists the controller resources the environment's install narrowed to namespaces (the `rbac` prop, case
   * controller-rbac-gaps).
   */
  readonly controller: {
    readonly namespace: string;
    readonly deployment: string;
    readonly serviceAccount: string;
    readonly image?: string;
    readonly rbacNarrowed?: ReadonlyArray<{
      readonly resources: readonly string[];
      readonly namespaces: readonly string[];
    }>;
  };
  readonly runtimeClasses: readonly string[];
  /** The isolation each declared RuntimeClass promises (descriptor `preset`), by class name. */
  readonly runtimeClassIsolation?: Readonly<Record<string, 'gvisor' | 'kata'>>;
  readonly templates: readonly TemplatePlan[];
  readonly warmPools: readonly WarmPoolPlan[];
  readonly networkPolicies: readonly NetworkPolicyPlan[];
  readonly router?: RouterPlan;
  /** Existing Sandboxes whose runtime to check (`--sandbox ns/name`); when set, only they are probed and nothing is created. */
  readonly sandboxes?: ReadonlyArray<{ readonly namespace: string; readonly name: string }>;
  /** The application's client SDKs the environment declares (descriptor `clients`). */
  readonly clients?: readonly ClientPlan[];
  /** How the verifier reaches runtime servers (the client's transport). */
  readonly transport: TransportKind;
  readonly requirements: readonly Requirement[];
  /** Deadline of each runtime call (ms). Default 5000. */
  readonly probeTimeoutMs: number;
  /** Consecutive successes a network-reached capability needs before it is verified (`--samples`). Default {@link DEFAULT_SAMPLES}. */
  readonly samples?: number;
  /** Deadline for a workload Sandbox/claim to become Ready (ms). Default 120000. */
  readonly readyTimeoutMs: number;
  /** How long (ms) a probe claim may sit at Ready=False/TemplateNotFound|WarmPoolNotFound before the verifier stops waiting (case claim-before-template-ordering). Default 60000 (`CLAIM_REFERENCE_GRACE_MS`). */
  readonly claimReferenceGraceMs?: number;
}

/**
 * Default sample size: a runtime failing one call in four passes 5 consecutive calls about 24% of the time, and a path
 * failing one in two about 3%; raise it with `--samples` for flakier paths.
 */
export const DEFAULT_SAMPLES = 5;

/** The plan's sample size, never below 2 (one success is never enough). */
export function sampleSize(plan: Pick<VerifyPlan, 'samples'>): number {
  return Math.max(2, plan.samples ?? DEFAULT_SAMPLES);
}

/** `agent-sandbox-system/agent-sandbox-controller` (`k8s/controller.yaml@v0.5.6`). */
export const DEFAULT_CONTROLLER = {
  namespace: 'agent-sandbox-system',
  deployment: 'agent-sandbox-controller',
  serviceAccount: 'agent-sandbox-controller',
} as const;

/**
 * Whether the router path is probed with `X-Sandbox-Pod-IP`: every declared client whose calls go through the router
 * sends it (k8s-agent-sandbox reads it from `Sandbox.status.podIPs`, `connector.py@1.0.8`). Without declared router
 * clients, or with one that addresses by name only, the router is probed by name, the stricter path.
 */
export function routerClientsSendPodIP(plan: Pick<VerifyPlan, 'clients'>): boolean {
  const viaRouter = (plan.clients ?? []).filter((c) => c.via === 'router');
  return viaRouter.length > 0 && viaRouter.every((c) => c.headers.includes('X-Sandbox-Pod-IP'));
}
