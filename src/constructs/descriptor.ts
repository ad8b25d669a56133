/**
 * The environment descriptor: what an environment declares and what the verifier must check, written by synthesis as
 * `dist/<environment>/environment.json` and as ConfigMap `agentplane-environment` (key `environment.json`).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AgentPlaneError } from '../model/errors.js';
import { withSortedKeys } from '../model/objects.js';
import { OUTPUT_RULES, type OutputRule } from '../model/output-rules.js';
import { RELEASE_FAMILIES, type ReleaseFamily } from '../model/releases.js';
import type { Assert, SameType } from '../model/same-type.js';
import { SUPPORT_STATES, type RequiredState } from '../model/states.js';

/** Name of the descriptor ConfigMap; its key is `environment.json`. */
export const DESCRIPTOR_CONFIGMAP = 'agentplane-environment';
export const DESCRIPTOR_KEY = 'environment.json';

const Labels = z.record(z.string(), z.string());
const PodPeer = z.object({ namespace: z.string(), podLabels: Labels.exactOptional() }).strict();

/**
 * `environment.json` (`apiVersion: agentplane.dev/v1alpha1`, `kind: EnvironmentDescriptor`): what the environment
 * declares and the verifier checks. Written by the constructs, read by the verifier.
 */
export interface EnvironmentDescriptor {
  apiVersion: 'agentplane.dev/v1alpha1';
  kind: 'EnvironmentDescriptor';
  /** Environment name (also the dist folder). */
  name: string;
  release: {
    tag: string;
    commit: string;
    family: ReleaseFamily;
    /** apiVersion written per kind, e.g. `{ SandboxTemplate: 'extensions.agents.x-k8s.io/v1beta1' }`. */
    apiVersions: Record<string, string>;
  };
  /** `null` when the environment does not install the controller itself. */
  install: {
    namespace: string;
    controllerDeployment: string;
    controllerImage: string;
    extensions: boolean;
    certificates: 'controller' | 'external' | 'none';
    /** CRD names marked for server-side apply (over 256 KiB). */
    serverSideApply: string[];
    /**
     * Controller resources the install's `rbac` prop narrowed to namespaces (`plural` or `plural.group`); absent when
     * none is. The verifier checks the controller's rights on them in these namespaces instead of cluster-wide.
     */
    rbacNarrowed?: { resources: string[]; namespaces: string[] }[];
  } | null;
  runtimeClasses: {
    name: string;
    handler: string;
    preset: 'gvisor' | 'kata';
    overhead: { cpu?: string; memory?: string } | null;
    /** `null` when `allNodes`. */
    scheduling: { nodeSelector: Record<string, string>; tolerations: Record<string, unknown>[] } | null;
    allNodes: boolean;
  }[];
  templates: {
    namespace: string;
    name: string;
    runtimeClassName: string;
    networkPolicyManagement: 'Managed' | 'Unmanaged';
    /** Labels every sandbox pod of the template carries. */
    podLabels: Record<string, string>;
    runtime: { kind: 'sandboxd' | 'python-runtime' | 'custom'; container: string; ports: number[] };
    images: { container: string; image: string }[];
  }[];
  warmPools: {
    namespace: string;
    name: string;
    template: string;
    replicas: number;
    updateStrategy: 'Recreate' | 'OnReplenish';
  }[];
  claims: { namespace: string; name: string; warmPool: string }[];
  router: {
    namespace: string;
    serviceName: string;
    port: number;
    podLabels: Record<string, string>;
    image: string;
    authorizationMode: 'tokenreview' | 'scoped-token' | 'allow-all';
    /**
     * `true` when the environment chose allow-all explicitly (construct `acknowledgeUnauthenticated`).
     * @default - absent: not acknowledged
     */
    acknowledgeUnauthenticated?: true;
  } | null;
  networkPolicies: {
    namespace: string;
    name: string;
    template: string;
    podSelector: Record<string, string>;
    /** Peer pods in `namespace` (all its pods when `podLabels` is absent). */
    ingressFrom: { namespace: string; podLabels?: Record<string, string> }[];
    ingressPorts: number[];
    /** DNS targets admitted on UDP+TCP 53 (`null`: none). */
    dns: {
      pods?: { namespace: string; podLabels?: Record<string, string> };
      nodeLocalCache?: string;
      serviceIP?: string;
    } | null;
    egress: {
      description?: string;
      namespace?: string;
      podLabels?: Record<string, string>;
      cidr?: string;
      except?: string[];
      ports: { port: number; protocol: 'TCP' | 'UDP' | 'SCTP' }[];
    }[];
  }[];
  /** Every image the environment runs, by role (`controller`, `router`, `template/<ns>/<name>/<container>`). */
  images: Record<string, string>;
  /** The state each capability must reach for `verify` to pass (DESIGN §1 capability names). */
  capabilities: { capability: string; required: RequiredState }[];
  /**
   * Rules the written objects break on purpose (`AgentEnvironment.acknowledge`): rule, construct path, reason. Absent
   * when none is acknowledged.
   */
  acknowledgements?: { rule: OutputRule; path: string; reason: string }[];
  /**
   * The application's client SDKs (`env.addClient`): mode, the runtime API it speaks, whether it goes through the
   * router or to the pod, the runtime ports it names, the headers it sets, the pools it claims from. Absent when none
   * is declared.
   */
  clients?: {
    sdk: string;
    version: string;
    mode: string;
    runtimeApi: 'python-runtime' | 'sandboxd';
    via: 'router' | 'pod';
    ports: number[];
    headers: string[];
    warmPools: { namespace: string; name: string }[];
    routerNamespace?: string;
  }[];
}

/**
 * zod schema of {@link EnvironmentDescriptor}, the contract between the constructs (writer) and the verifier (reader);
 * it must infer exactly that interface (checked below).
 * @internal
 */
export const EnvironmentDescriptorSchema = z
  .object({
    apiVersion: z.literal('agentplane.dev/v1alpha1'),
    kind: z.literal('EnvironmentDescriptor'),
    /** Environment name (also the dist folder). */
    name: z.string().min(1),
    release: z
      .object({
        tag: z.string(),
        commit: z.string().regex(/^[0-9a-f]{40}$/),
        family: z.enum(RELEASE_FAMILIES),
        /** apiVersion written per kind, e.g. `{ SandboxTemplate: 'extensions.agents.x-k8s.io/v1beta1' }`. */
        apiVersions: z.record(z.string(), z.string()),
      })
      .strict(),
    /** `null` when the environment does not install the controller itself. */
    install: z
      .object({
        namespace: z.string(),
        controllerDeployment: z.string(),
        controllerImage: z.string(),
        extensions: z.boolean(),
        certificates: z.enum(['controller', 'external', 'none']),
        /** CRD names marked for server-side apply (over 256 KiB). */
        serverSideApply: z.array(z.string()),
        /**
         * Controller resources the install's `rbac` prop narrowed to namespaces (`plural` or `plural.group`); absent
         * when none is. The verifier checks the controller's rights on them in these namespaces instead of cluster-wide.
         */
        rbacNarrowed: z
          .array(z.object({ resources: z.array(z.string()).min(1), namespaces: z.array(z.string()).min(1) }).strict())
          .exactOptional(),
      })
      .strict()
      .nullable(),
    runtimeClasses: z.array(
      z
        .object({
          name: z.string(),
          handler: z.string(),
          preset: z.enum(['gvisor', 'kata']),
          overhead: z
            .object({ cpu: z.string().exactOptional(), memory: z.string().exactOptional() })
            .strict()
            .nullable(),
          /** `null` when `allNodes`. */
          scheduling: z
            .object({ nodeSelector: Labels, tolerations: z.array(z.record(z.string(), z.unknown())) })
            .strict()
            .nullable(),
          allNodes: z.boolean(),
        })
        .strict(),
    ),
    templates: z.array(
      z
        .object({
          namespace: z.string(),
          name: z.string(),
          runtimeClassName: z.string(),
          networkPolicyManagement: z.enum(['Managed', 'Unmanaged']),
          /** Labels every sandbox pod of the template carries. */
          podLabels: Labels,
          runtime: z
            .object({
              kind: z.enum(['sandboxd', 'python-runtime', 'custom']),
              container: z.string(),
              ports: z.array(z.number().int()),
            })
            .strict(),
          images: z.array(z.object({ container: z.string(), image: z.string() }).strict()),
        })
        .strict(),
    ),
    warmPools: z.array(
      z
        .object({
          namespace: z.string(),
          name: z.string(),
          template: z.string(),
          replicas: z.number().int(),
          updateStrategy: z.enum(['Recreate', 'OnReplenish']),
        })
        .strict(),
    ),
    claims: z.array(z.object({ namespace: z.string(), name: z.string(), warmPool: z.string() }).strict()),
    router: z
      .object({
        namespace: z.string(),
        serviceName: z.string(),
        port: z.number().int(),
        podLabels: Labels,
        image: z.string(),
        authorizationMode: z.enum(['tokenreview', 'scoped-token', 'allow-all']),
        /** `true` when the environment chose allow-all explicitly (construct `acknowledgeUnauthenticated`); absent otherwise. */
        acknowledgeUnauthenticated: z.literal(true).exactOptional(),
      })
      .strict()
      .nullable(),
    networkPolicies: z.array(
      z
        .object({
          namespace: z.string(),
          name: z.string(),
          template: z.string(),
          podSelector: Labels,
          ingressFrom: z.array(PodPeer),
          ingressPorts: z.array(z.number().int()),
          dns: z
            .object({
              pods: PodPeer.exactOptional(),
              nodeLocalCache: z.string().exactOptional(),
              serviceIP: z.string().exactOptional(),
            })
            .strict()
            .nullable(),
          egress: z.array(
            z
              .object({
                description: z.string().exactOptional(),
                namespace: z.string().exactOptional(),
                podLabels: Labels.exactOptional(),
                cidr: z.string().exactOptional(),
                except: z.array(z.string()).exactOptional(),
                ports: z.array(z.object({ port: z.number().int(), protocol: z.enum(['TCP', 'UDP', 'SCTP']) }).strict()),
              })
              .strict(),
          ),
        })
        .strict(),
    ),
    /** Every image the environment runs, by role (`controller`, `router`, `template/<ns>/<name>/<container>`). */
    images: z.record(z.string(), z.string()),
    /** The state each capability must reach for `verify` to pass (DESIGN §1 capability names). */
    capabilities: z.array(z.object({ capability: z.string(), required: z.enum(SUPPORT_STATES) }).strict()),
    /** Rules the written objects break on purpose (`AgentEnvironment.acknowledge`). Absent when none is acknowledged. */
    acknowledgements: z
      .array(z.object({ rule: z.enum(OUTPUT_RULES), path: z.string().min(1), reason: z.string().min(1) }).strict())
      .exactOptional(),
    /**
     * The application's client SDKs (`env.addClient`): mode, the runtime API it speaks, whether it goes through the
     * router or to the pod, the runtime ports it names, the headers it sets, the pools it claims from. Absent when none is declared.
     */
    clients: z
      .array(
        z
          .object({
            sdk: z.string(),
            version: z.string(),
            mode: z.string(),
            runtimeApi: z.enum(['python-runtime', 'sandboxd']),
            via: z.enum(['router', 'pod']),
            ports: z.array(z.number().int()),
            headers: z.array(z.string()),
            warmPools: z.array(z.object({ namespace: z.string(), name: z.string() }).strict()),
            routerNamespace: z.string().exactOptional(),
          })
          .strict(),
      )
      .exactOptional(),
  })
  .strict();

/** @internal */
export type EnvironmentDescriptorMatchesSchema = Assert<
  SameType<EnvironmentDescriptor, z.infer<typeof EnvironmentDescriptorSchema>>
>;

/** Parses a descriptor (e.g. `environment.json` read by the verifier). @throws a zod error naming each bad field. */
export function parseEnvironmentDescriptor(value: unknown): EnvironmentDescriptor {
  return EnvironmentDescriptorSchema.parse(value);
}

/**
 * The descriptor as text: JSON with keys sorted at every level (so label maps built from Maps or object literals in any
 * order give the same bytes), 2-space indent, trailing newline. Used for both environment.json and the ConfigMap.
 */
export function descriptorJson(descriptor: EnvironmentDescriptor): string {
  return `${JSON.stringify(withSortedKeys(descriptor), null, 2)}\n`;
}

/**
 * A descriptor too large for one ConfigMap is stored in parts (descriptor-parts.ts): the descriptor
 * ConfigMap then holds {@link DESCRIPTOR_PARTS_KEY} (the number of parts) and {@link DESCRIPTOR_SHA256_KEY} (sha256 of
 * the whole text) instead of the text, and ConfigMap `<name>-<i>` (i = 1..n, 4 digits) holds part i under
 * {@link DESCRIPTOR_PART_KEY}. The parts, concatenated in order, are the exact bytes of `environment.json`.
 */
export const DESCRIPTOR_PARTS_KEY = 'environment.json.parts';
export const DESCRIPTOR_SHA256_KEY = 'environment.json.sha256';
export const DESCRIPTOR_PART_KEY = 'environment.json.part';

/** The name of part `i` (1-based) of descriptor ConfigMap `name`. */
export function descriptorPartName(name: string, i: number): string {
  return `${name}-${String(i).padStart(4, '0')}`;
}

/** A descriptor stored in ConfigMaps that cannot be put back together (a part missing, or a checksum mismatch). */
export class DescriptorPartsError extends AgentPlaneError {
  readonly reason = 'DescriptorPartsInvalid';
  readonly exitCategory = 'invalid';
  constructor(
    message: string,
    readonly hint: string,
    /** What is wrong: no part count, a part missing, or the parts not matching the stored sha256. */
    readonly problem: 'no-part-count' | 'part-missing' | 'checksum-mismatch',
    /** The head ConfigMap, and the missing part's ConfigMap for `part-missing`. */
    readonly configMap: string,
    readonly part?: string,
  ) {
    super(message);
  }
}

/**
 * The descriptor text from its ConfigMap (`data[key]`) or, when stored in parts, from the part ConfigMaps `byName`
 * gives (checked against the stored sha256). @throws {DescriptorPartsError} a part missing, a bad count or checksum.
 */
export function descriptorTextFromConfigMaps(
  head: { name: string; data: Readonly<Record<string, string>> },
  key: string,
  byName: (name: string) => Readonly<Record<string, string>> | undefined,
): string {
  const whole = head.data[key];
  if (whole !== undefined) return whole;
  const count = Number(head.data[DESCRIPTOR_PARTS_KEY]);
  const hint = 're-apply the synthesized output of the environment (all descriptor ConfigMaps together)';
  if (!Number.isInteger(count) || count < 1)
    throw new DescriptorPartsError(
      `ConfigMap ${head.name} holds neither ${key} nor a part count (${DESCRIPTOR_PARTS_KEY})`,
      hint,
      'no-part-count',
      head.name,
    );
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const part = byName(descriptorPartName(head.name, i))?.[DESCRIPTOR_PART_KEY];
    if (part === undefined)
      throw new DescriptorPartsError(
        `descriptor part ${descriptorPartName(head.name, i)} (${i} of ${count}) is missing`,
        hint,
        'part-missing',
        head.name,
        descriptorPartName(head.name, i),
      );
    parts.push(part);
  }
  const text = parts.join('');
  const sha = createHash('sha256').update(text, 'utf8').digest('hex');
  if (sha !== head.data[DESCRIPTOR_SHA256_KEY])
    throw new DescriptorPartsError(
      `descriptor parts of ${head.name} do not match its sha256 (${head.data[DESCRIPTOR_SHA256_KEY]}; parts give ${sha})`,
      hint,
      'checksum-mismatch',
      head.name,
    );
  return text;
}
