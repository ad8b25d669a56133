/**
 * One verify run: connect, read the tuple, run the probes in dependency order, clean up the workload objects, settle
 * every declared capability. Throws {@link VerifyCouldNotRunError} only when the cluster cannot be used at all
 * (unreachable, unauthenticated); every other outcome is in the report.
 */
import type { KubeClient } from '../adapter/kubernetes/client.js';
import { releaseFacts, type LoadedRelease } from '../releases/index.js';
import { Cluster } from '../adapter/kubernetes/cluster.js';
import { ClusterReads } from '../adapter/kubernetes/reads.js';
import { routerClientsSendPodIP, type VerifyPlan } from './plan.js';
import { controllerNeeds, controllerProbe, KNOWN_GAPS, scopedNeeds } from './probes/controller.js';
import type { ProbeDeps } from './probes/common.js';
import { existingSandboxProbe } from './probes/existing-sandbox.js';
import { imageDigestsProbe } from './probes/image-digests.js';
import { installProbe } from './probes/install.js';
import { snapshotProbe, suspendProbe } from './probes/lifecycle.js';
import { networkProbe } from './probes/network.js';
import { routerProbe } from './probes/router.js';
import { routerNegativeProbe } from './probes/router-negative.js';
import { runtimeClassProbe } from './probes/runtime-class.js';
import { templateProbe } from './probes/template.js';
import { unboundedLifetimesProbe } from './probes/unbounded-lifetimes.js';
import { warmPoolProbe } from './probes/warm-pool.js';
import { workloadProbe } from './probes/workload.js';
import { ProbeSandboxes } from './probes/workload/handoff.js';
import { suspendRoundTripProbe } from './probes/workload/suspend-round-trip.js';
import { buildReport, type VerifyReport } from './report.js';
import { runProbes, type Probe } from './runner.js';
import { AdapterRuntimeProber, type RuntimeProber } from './runtime-prober.js';
import { readTuple } from './tuple-reader.js';
import { Workload } from './workload.js';
import { AgentPlaneError, exitCategoryOfFailure, type ExitCategory } from '../model/errors.js';

/** The cluster cannot be used at all (unreachable, bad credentials); maps to the CLI's "could not run" exit code. */
export class VerifyCouldNotRunError extends AgentPlaneError {
  readonly reason = 'VerifyCouldNotRun';
  readonly exitCategory: ExitCategory;
  /** The classified cause (`unreachable`, `unauthenticated`, `timeout`), for the CLI's exit code. */
  readonly category: string;
  constructor(
    message: string,
    readonly hint: string,
    category = 'unreachable',
  ) {
    super(message);
    this.category = category;
    this.exitCategory = exitCategoryOfFailure(category, 'cluster');
  }
}

export interface VerifyOptions {
  readonly plan: VerifyPlan;
  readonly client: KubeClient;
  /**
   * The pinned release's verified files: enables schema checks of templates and the controller RBAC list from the pinned RBAC.
   * @default - none: no schema checks, the controller RBAC list of the known gaps
   */
  readonly loaded?: LoadedRelease;
  /**
   * `deployment` reads the controller Deployment; `external` for a controller run outside the cluster.
   * @default 'deployment'
   */
  readonly controllerMode?: 'deployment' | 'external';
  /**
   * Image the environment pins for the controller (a mirror of the release image).
   * @default - the release image
   */
  readonly controllerImage?: string;
  /** @default - an AdapterRuntimeProber on `client` (through the plan's router URL when it has one) */
  readonly runtime?: RuntimeProber;
  /**
   * Bearer token for a router that demands credentials (tokenreview): the router transport and the negative probes'
   * control request send it; never stored in the plan or the report.
   * @default - none
   */
  readonly routerToken?: string;
  /** `waiting` marks the status line of a long wait. @default - lines to stderr */
  readonly progress?: (line: string, kind?: 'waiting') => void;
  /**
   * Abort (SIGINT): remaining probes are not run; cleanup still runs.
   * @default - none (not abortable)
   */
  readonly signal?: AbortSignal;
  /**
   * Run id (6 hex) for object names and labels.
   * @default - random
   */
  readonly runId?: string;
  /**
   * Most probes running at once.
   * @default DEFAULT_CONCURRENCY of the runner (8)
   */
  readonly concurrency?: number;
  /**
   * Bound on waiting for workload objects to disappear, ms.
   * @default 30000
   */
  readonly cleanupWaitMs?: number;
}

export interface VerifyResult {
  readonly report: VerifyReport;
  readonly cluster: Cluster;
}

/** The probes for a plan, in declaration order (the runner orders them by dependency). */
export function planProbes(
  deps: ProbeDeps,
  opts: {
    loaded?: LoadedRelease;
    controllerMode: 'deployment' | 'external';
    controllerImage?: string;
    extensions: boolean;
  },
): Probe[] {
  const { plan } = deps;
  if (plan.sandboxes && plan.sandboxes.length > 0)
    return plan.sandboxes.map((s) => existingSandboxProbe(deps, s.namespace, s.name));
  const needs = scopedNeeds(
    opts.loaded ? controllerNeeds(opts.loaded.objects.values(), opts.extensions) : [...KNOWN_GAPS],
    plan.controller.rbacNarrowed,
  );
  const probes: Probe[] = [
    installProbe(deps),
    controllerProbe(deps, {
      mode: opts.controllerMode,
      extensions: opts.extensions,
      needs,
      ...(opts.controllerImage ? { image: opts.controllerImage } : {}),
    }),
  ];
  for (const rc of plan.runtimeClasses) probes.push(runtimeClassProbe(deps, rc));
  for (const t of plan.templates) probes.push(templateProbe(deps, t, opts.loaded));
  for (const p of plan.warmPools) probes.push(warmPoolProbe(deps, p));
  if (plan.router) probes.push(routerProbe(deps));
  // Before the workloads: it compares the environment's own pods, not the verifier's probe sandboxes.
  const images = imageDigestsProbe(deps, {
    controllerMode: opts.controllerMode,
    ...(opts.controllerImage ? { controllerImage: opts.controllerImage } : {}),
  });
  if (images) probes.push(images);
  // A workload starts once the probes reading what it would change are done: the template, pool, router and image
  // probes (its probe pods carry the template's labels) and the class gate's runtime-class probe. Not the controller
  // probe: its SubjectAccessReviews and reads see nothing a probe object changes.
  const staticIds = probes.map((p) => p.id).filter((id) => id !== 'controller');
  const sandboxes = new ProbeSandboxes();
  const workloads = plan.templates.map((t) =>
    workloadProbe(
      deps,
      t,
      plan.warmPools.find((p) => p.namespace === t.namespace && p.template === t.name),
      staticIds,
      sandboxes,
    ),
  );
  probes.push(...workloads);
  // After the workloads: their probe Sandboxes give the negative probes a live Sandbox name.
  if (plan.router)
    probes.push(
      routerNegativeProbe(
        deps,
        workloads.map((w) => w.id),
      ),
    );
  probes.push(
    networkProbe(
      deps,
      workloads.map((w) => w.id),
      sandboxes,
    ),
  );
  // The suspend-resume round trip (only when the environment declares the capability) stops and restarts a workload's
  // probe sandbox: after every probe that uses those sandboxes, and nothing waits for it.
  const roundTrips = plan.requirements.some((r) => r.name === 'suspend-resume')
    ? plan.templates.filter((t) => t.runtime !== 'custom')
    : [];
  const workloadIds = new Set(workloads.map((w) => w.id));
  const users = probes.filter((p) => p.after.some((a) => workloadIds.has(a))).map((p) => p.id);
  for (const t of roundTrips)
    probes.push(suspendRoundTripProbe(deps, t, sandboxes, [`workload/${t.namespace}/${t.name}`, ...users]));
  probes.push(suspendProbe(deps, roundTrips.length > 0), snapshotProbe(deps), unboundedLifetimesProbe(deps));
  return probes;
}

export async function runVerify(opts: VerifyOptions): Promise<VerifyResult> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const cluster = new Cluster(opts.client);
  const reach = await cluster.version();
  if (
    reach.kind === 'failed' &&
    (reach.error.category === 'unreachable' ||
      reach.error.category === 'unauthenticated' ||
      reach.error.category === 'timeout')
  ) {
    throw new VerifyCouldNotRunError(
      `cannot use the cluster: ${reach.error.message}`,
      reach.error.hint ?? 'check --kubeconfig and --context',
      reach.error.category,
    );
  }
  const facts = releaseFacts(opts.plan.release);
  const mode = opts.controllerMode ?? 'deployment';
  const runtime =
    opts.runtime ??
    new AdapterRuntimeProber({
      client: opts.client,
      ...(opts.plan.router?.url ? { routerUrl: opts.plan.router.url } : {}),
      ...(opts.routerToken ? { routerToken: opts.routerToken } : {}),
      ...(routerClientsSendPodIP(opts.plan) ? { routerPodIPHeader: true } : {}),
      pods: (namespace, name) => new ClusterReads(cluster).pod(namespace, name),
    });
  const workload = new Workload(cluster, opts.runId);
  const deps: ProbeDeps = {
    cluster,
    plan: opts.plan,
    facts,
    runtime,
    workload,
    ...(opts.routerToken ? { routerToken: opts.routerToken } : {}),
  };
  const progress = opts.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  // Read beside the probes: no probe changes what the tuple reads (CRDs, the controller Deployment, nodes, DaemonSets).
  const tupleRead = readTuple(cluster, opts.plan, mode, opts.loaded, reach);
  tupleRead.catch(() => undefined); // awaited after the probes; a throw there must not go unhandled meanwhile
  const extensions = opts.plan.requirements.some((r) => r.name === 'extensions-api') || opts.plan.warmPools.length > 0;
  const probes = planProbes(deps, {
    ...(opts.loaded ? { loaded: opts.loaded } : {}),
    controllerMode: mode,
    ...(opts.controllerImage ? { controllerImage: opts.controllerImage } : {}),
    extensions,
  });
  let evidence: Awaited<ReturnType<typeof runProbes>>;
  let leftovers: string[];
  try {
    evidence = await runProbes(probes, {
      progress,
      ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } finally {
    // Runs on success, failure, throw and interrupt alike.
    progress(`cleanup: deleting objects labelled agentplane.dev/verify-run=${workload.runId}`);
    leftovers = await workload.cleanup(opts.cleanupWaitMs ?? 30_000);
    if (leftovers.length > 0) progress(`cleanup: ${leftovers.length} object(s) left behind: ${leftovers.join('; ')}`);
    if (!opts.runtime) await runtime.close();
  }
  const tuple = await tupleRead;
  const answered = evidence
    .filter(
      (e) =>
        e.capability === 'runtime-exec' &&
        e.step === 'verified' &&
        e.verdict === 'proven' &&
        e.field?.startsWith('Execute'),
    )
    .map((e) => e.subject);
  const runtimeServer =
    answered.length > 0
      ? {
          ...tuple.runtimeServer,
          source: `${tuple.runtimeServer.source}; answered: ${[...new Set(answered)].join(', ')}`,
        }
      : tuple.runtimeServer;
  const report = buildReport({
    environment: { name: opts.plan.environment, release: opts.plan.release, source: opts.plan.source },
    tuple: { ...tuple, runtimeServer },
    requirements: opts.plan.requirements,
    evidence,
    leftovers,
    startedAt,
    durationMs: Date.now() - started,
  });
  return { report, cluster };
}
