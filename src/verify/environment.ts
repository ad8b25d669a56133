/**
 * The environment descriptor, read the way the verifier needs it.
 *
 * The descriptor's zod schema lives with its writer (src/constructs/descriptor.ts, a leaf module importing only zod).
 * This file is the verifier's one import from the constructs layer and takes nothing else from it: the edge
 * verify -> constructs/descriptor is narrow and cannot form a cycle (constructs never import verify), and the
 * contract keeps a single definition instead of a copy that could drift.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EnvironmentDescriptorSchema, type EnvironmentDescriptor } from '../constructs/descriptor.js';
import type { CapabilityName, TransportKind } from '../adapter/types.js';
import { isReleaseTag } from '../releases/index.js';
import { DEFAULT_CONTROLLER, type TemplatePlan, type VerifyPlan } from './plan.js';
import { requirementsFor } from './requirements.js';
import type { RequiredState } from './states.js';
import { AgentPlaneError } from '../model/errors.js';

/** What is wrong with a descriptor: not there, not JSON, not the schema, its parts, or a release not supported. */
export type DescriptorProblem = 'missing' | 'not-json' | 'schema' | 'parts' | 'unsupported-release';

/** The descriptor could not be read or is not valid; `hint` says what to do. */
export class EnvironmentDescriptorError extends AgentPlaneError {
  readonly reason = 'EnvironmentDescriptorInvalid';
  readonly exitCategory = 'invalid';
  readonly problem: DescriptorProblem | undefined;
  /** The descriptor file or directory read. */
  readonly file: string | undefined;
  /** `schema`: the dotted paths of the first fields at fault; `unsupported-release`: the tag pinned. */
  readonly fields: readonly string[];
  readonly release: string | undefined;
  constructor(
    message: string,
    readonly hint: string,
    details: {
      problem?: DescriptorProblem;
      file?: string;
      fields?: readonly string[];
      release?: string;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: details.cause });
    this.problem = details.problem;
    this.file = details.file;
    this.fields = details.fields ?? [];
    this.release = details.release;
  }
}

/** The dotted paths of the first five issues of a failed descriptor parse. */
function issueFields(issues: readonly { readonly path: readonly PropertyKey[] }[]): string[] {
  return issues.slice(0, 5).map((i) => i.path.map(String).join('.') || '(root)');
}

/**
 * Reads `<dir>/environment.json` (or `dir` itself when it is a file) and validates it.
 * @throws {EnvironmentDescriptorError} missing file, bad JSON, schema violations (each named), unsupported release.
 */
export function readEnvironment(dir: string): { descriptor: EnvironmentDescriptor; file: string } {
  const file = dir.endsWith('.json') ? dir : path.join(dir, 'environment.json');
  if (!existsSync(file))
    throw new EnvironmentDescriptorError(
      `no environment descriptor at ${file}`,
      'run `agentplane synth` first, or pass --env with the synthesized environment directory',
      { problem: 'missing', file },
    );
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new EnvironmentDescriptorError(
      `${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
      're-run `agentplane synth` to rewrite it',
      { problem: 'not-json', file },
    );
  }
  const parsed = EnvironmentDescriptorSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new EnvironmentDescriptorError(
      `${file} is not a valid environment descriptor: ${issues}`,
      're-run `agentplane synth` with this AgentPlane version',
      { problem: 'schema', file, fields: issueFields(parsed.error.issues) },
    );
  }
  return { descriptor: parsed.data, file };
}

/** Options the descriptor cannot know: how this verifier reaches things. */
export interface PlanOptions {
  readonly transport: TransportKind;
  /** @default - none: the router is reached through the API server */
  readonly routerUrl?: string;
  /**
   * Address of this verifier the router can dial, for the router's negative probes (see RouterPlan.canaryHost).
   * @default - none: the no-connection part of the negative probes stays unproven
   */
  readonly routerCanaryHost?: string;
  /**
   * Per runtime call, ms.
   * @default 5000
   */
  readonly probeTimeoutMs?: number;
  /**
   * For a workload object to become Ready, ms.
   * @default 120000
   */
  readonly readyTimeoutMs?: number;
  /**
   * Consecutive successes per network-reached capability.
   * @default DEFAULT_SAMPLES (5)
   */
  readonly samples?: number;
}

function runtimePorts(kind: 'sandboxd' | 'python-runtime' | 'custom', ports: readonly number[]): TemplatePlan['ports'] {
  if (kind === 'sandboxd') {
    return {
      rest: ports.includes(8080) ? 8080 : (ports[0] ?? 8080),
      grpc: ports.includes(9090) ? 9090 : (ports[1] ?? 9090),
    };
  }
  return { rest: ports[0] ?? 8888 };
}

/**
 * Maps a descriptor to the verifier's plan.
 * @throws {EnvironmentDescriptorError} when the descriptor's release is not one AgentPlane supports.
 */
export function planFromDescriptor(d: EnvironmentDescriptor, source: string, opts: PlanOptions): VerifyPlan {
  if (!isReleaseTag(d.release.tag))
    throw new EnvironmentDescriptorError(
      `environment ${d.name} pins release ${d.release.tag}, which this AgentPlane does not support`,
      'upgrade AgentPlane or re-synthesize with a supported release',
      { problem: 'unsupported-release', release: d.release.tag },
    );
  const overrides: Record<string, RequiredState> = {};
  for (const c of d.capabilities) overrides[c.capability] = c.required;
  const declared = d.capabilities.map((c) => c.capability as CapabilityName);
  return {
    environment: d.name,
    release: d.release.tag,
    source,
    controller: d.install
      ? {
          namespace: d.install.namespace,
          deployment: d.install.controllerDeployment,
          serviceAccount: DEFAULT_CONTROLLER.serviceAccount,
          image: d.install.controllerImage,
          ...(d.install.rbacNarrowed ? { rbacNarrowed: d.install.rbacNarrowed } : {}),
        }
      : { ...DEFAULT_CONTROLLER },
    runtimeClasses: d.runtimeClasses.map((r) => r.name),
    runtimeClassIsolation: Object.fromEntries(d.runtimeClasses.map((r) => [r.name, r.preset])),
    templates: d.templates.map((t) => ({
      namespace: t.namespace,
      name: t.name,
      runtime: t.runtime.kind,
      ports: runtimePorts(t.runtime.kind, t.runtime.ports),
      ...(t.images.find((i) => i.container === t.runtime.container)
        ? { runtimeImage: t.images.find((i) => i.container === t.runtime.container)!.image }
        : {}),
      ...(t.runtimeClassName ? { runtimeClassName: t.runtimeClassName } : {}),
      networkPolicyManagement: t.networkPolicyManagement,
      images: Object.fromEntries(t.images.map((i) => [i.container, i.image])),
      podLabels: t.podLabels,
    })),
    warmPools: d.warmPools.map((p) => ({
      namespace: p.namespace,
      name: p.name,
      template: p.template,
      replicas: p.replicas,
    })),
    networkPolicies: d.networkPolicies.map((p) => ({
      namespace: p.namespace,
      name: p.name,
      template: p.template,
      allowedEgress: p.egress.map((e) =>
        `${e.cidr ?? `${e.namespace ?? '*'}/${JSON.stringify(e.podLabels ?? {})}`} ${e.ports.map((x) => `${x.protocol}/${x.port}`).join(',')}`.trim(),
      ),
      ingressFrom: p.ingressFrom.map((i) => ({ namespace: i.namespace, podLabels: i.podLabels ?? {} })),
      ...(p.dns ? { dns: p.dns } : {}),
    })),
    ...(d.router
      ? {
          router: {
            namespace: d.router.namespace,
            service: d.router.serviceName,
            podLabels: d.router.podLabels,
            image: d.router.image,
            authorizationMode: d.router.authorizationMode,
            acknowledgeUnauthenticated: d.router.acknowledgeUnauthenticated === true,
            ...(opts.routerUrl ? { url: opts.routerUrl } : {}),
            ...(opts.routerCanaryHost ? { canaryHost: opts.routerCanaryHost } : {}),
          },
        }
      : {}),
    ...(d.clients !== undefined && d.clients.length > 0 ? { clients: d.clients.map((c) => ({ ...c })) } : {}),
    transport: opts.transport,
    requirements: requirementsFor(declared, overrides),
    probeTimeoutMs: opts.probeTimeoutMs ?? 5_000,
    ...(opts.samples !== undefined ? { samples: opts.samples } : {}),
    readyTimeoutMs: opts.readyTimeoutMs ?? 120_000,
  };
}
