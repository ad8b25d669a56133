/**
 * `agentplane verify`: post-deploy verification of an environment (docs/architecture.md, "The verifier"). Reads the synthesized
 * environment descriptor (`--env DIR`, default `dist/<single environment>`), connects with `--kubeconfig/--context`,
 * runs the verifier and prints one row per capability. Exit codes: 0 every required capability reached its required
 * state; 6 verification ran but something is below it (or objects were left behind); 7 the cluster could not be
 * reached, 8 it refused the credentials, 9 the access; 4 an invalid descriptor; 2 a bad command line (a flag value of
 * the wrong form, a named path that does not exist, an unusable kubeconfig or context, no `--env` while dist/ holds
 * several environments or none): the codes every command gives these failures (src/cli/exit-codes.ts). Ctrl-C stops the probes, still deletes
 * the workload objects and prints the partial report.
 *
 * Inside the cluster (the VerifierJob): `--in-cluster` authenticates with the pod's ServiceAccount token, reads the
 * descriptor from its mounted ConfigMap(s) (`--descriptor-dir`) and writes the report to `--report-configmap`;
 * `--from-cluster` prints that stored report in any -o format and exits with the run's exit code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { KubeClient, kubeconfigNamespace } from '../../adapter/kubernetes/client.js';
import { KubeconfigError } from '../../adapter/kubernetes/errors.js';
import { loadRelease } from '../../releases/index.js';
import { outputOption, renderWith, type OutputFormat } from '../output.js';
import {
  boundedCount,
  defaultEnvDir,
  environmentPath,
  existingFile,
  httpUrl,
  ipAddress,
  parseDuration,
  sampleCount,
  sandboxRefs,
  writableFile,
  type SandboxRef,
} from '../arg-parsers.js';
import {
  DEFAULT_SAMPLES,
  EnvironmentDescriptorError,
  type VerifyPlan,
  type VerifyReport,
  planFromDescriptor,
  readEnvironment,
  renderJson,
  renderJunit,
  renderMarkdown,
  renderTable,
  readReport,
  reportConfigMap,
  runVerify,
  StoredReportError,
  VerifyCouldNotRunError,
  writeReport,
  type ConfigMapRef,
} from '../../verify/index.js';
import type { ExitCategory } from '../../model/errors.js';
import { EXIT_CODES, reasonOf } from '../errors.js';
import { reportFailure } from '../error-document.js';
import { ExitCode } from '../exit-codes.js';
import { globalOptions, kubeOptions } from '../global-options.js';
import { COMMAND_SUMMARIES } from '../summaries.js';
import { progressSink } from '../progress.js';
import { DEFAULT_CONCURRENCY } from '../../verify/runner.js';
import { DESCRIPTOR_MOUNT, REPORT_CONFIGMAP } from '../../model/verifier-job.js';
import {
  configMapRef,
  inClusterKubeconfig,
  reportRefOfEnvironment,
  readDescriptorDir,
  runName,
} from '../in-cluster.js';
import { terminationFailure, terminationSummary, writeTerminationMessage } from '../termination.js';
import { Cluster } from '../../adapter/kubernetes/cluster.js';
import { gvrAt } from '../../model/resources.js';
import { FAMILY_VERSION, familyOfTag } from '../../model/releases.js';
import {
  VerifierNotReadyError,
  waitForReadiness,
  type ReadinessReads,
  type ReadinessTargets,
} from '../../verify/readiness-gate.js';
import { ClusterReads } from '../../adapter/kubernetes/reads.js';
import { describePodFault, permanentPodFault } from '../../verify/probes/pod-fault.js';
import type { Result } from '../../adapter/types.js';

interface VerifyFlags {
  env?: string;
  kubeconfig?: string;
  context?: string;
  output: OutputFormat;
  junit?: string;
  transport: 'port-forward' | 'direct' | 'router';
  routerUrl?: string;
  routerCanaryHost?: string;
  routerTokenFile?: string;
  /** Milliseconds (parsed by {@link parseDuration}). */
  probeTimeout: number;
  readyTimeout: number;
  /** Milliseconds to wait for the environment to be ready before probing; undefined: no wait. */
  waitReady?: number;
  samples: number;
  controller: 'deployment' | 'external';
  sandbox?: SandboxRef[];
  concurrency: number;
  inCluster?: boolean;
  descriptorDir?: string;
  reportConfigmap?: ConfigMapRef;
  fromCluster?: boolean;
}

/**
 * The exit category of a run below its requirements: `unauthenticated` when the cluster stopped accepting the
 * credentials during the run, `forbidden` when an unmet capability has evidence of a refused (403) call (the verifier
 * was not allowed to look), else `not-verified`.
 */
export function notVerifiedCategory(report: Pick<VerifyReport, 'capabilities'>): ExitCategory {
  const causes = new Set(report.capabilities.filter((c) => !c.met).flatMap((c) => c.evidence.map((e) => e.cause)));
  if (causes.has('unauthenticated')) return 'unauthenticated';
  if (causes.has('forbidden')) return 'forbidden';
  return 'not-verified';
}

/** Registers `verify` on the program. */
export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description(COMMAND_SUMMARIES['verify'])
    .option(
      '--env <dir>',
      'synthesized environment directory holding environment.json (default: the only dist/<env>)',
      environmentPath,
    )
    .addOption(outputOption('table'))
    .option('--junit <file>', 'also write a JUnit XML report to this file (its directory must exist)', writableFile)
    .addOption(
      new Option('--transport <kind>', "how to reach runtime servers (the client's transport)")
        .choices(['port-forward', 'direct', 'router'])
        .default('port-forward'),
    )
    .option(
      '--router-url <url>',
      'base URL (http or https) of the sandbox-router proxy port, for router health and the router transport',
      httpUrl,
    )
    .option(
      '--router-canary-host <ip>',
      "an address of this machine the router can dial (in the VerifierJob: its pod IP): the router's negative probes point it at a listener there to prove nothing was forwarded; without it that part stays unproven",
      ipAddress,
    )
    .option(
      '--router-token-file <file>',
      'file holding a bearer token for a router that demands one (tokenreview; in the VerifierJob: its ServiceAccount token): the router transport and the negative probes send it',
      existingFile,
    )
    .addOption(
      new Option('--probe-timeout <duration>', 'deadline of each runtime call: 5s, 500ms, 2m or milliseconds')
        .argParser(parseDuration)
        .default(5_000, '5s'),
    )
    .addOption(
      new Option(
        '--samples <n>',
        'consecutive successful calls each network-reached capability needs (runtime commands, the router path); one failure keeps it below verified',
      )
        .argParser(sampleCount)
        .default(DEFAULT_SAMPLES, String(DEFAULT_SAMPLES)),
    )
    .addOption(
      new Option(
        '--ready-timeout <duration>',
        'deadline for a probe sandbox or claim to become Ready: 120s, 2m or milliseconds',
      )
        .argParser(parseDuration)
        .default(120_000, '120s'),
    )
    .addOption(
      new Option(
        '--wait-ready <duration>',
        "first wait up to this long (600s, 10m) for CRDs Established, the controller Available at its generation and every warm pool's members Ready, logging progress; exit 15 when they are not",
      ).argParser(parseDuration),
    )
    .option(
      '--sandbox <ns/name...>',
      'only check the runtime of these existing Sandboxes (creates nothing); requirement: runtime-exec verified',
      sandboxRefs,
    )
    .option(
      '--in-cluster',
      'run inside a pod (the VerifierJob): authenticate with its ServiceAccount token, read the descriptor from --descriptor-dir',
    )
    .option(
      '--descriptor-dir <dir>',
      `with --in-cluster: directory of the mounted descriptor ConfigMap(s), whole or in parts (default ${DESCRIPTOR_MOUNT})`,
    )
    .option(
      '--report-configmap <ns/name>',
      `ConfigMap the report is written to (with --in-cluster) or read from (with --from-cluster) (default for --from-cluster: the one the VerifierJob of --env writes, else ${REPORT_CONFIGMAP} in the context's namespace, else in agent-sandboxes)`,
      configMapRef,
    )
    .option(
      '--from-cluster',
      "print the report the last in-cluster run stored in --report-configmap (no probes run); exit with that run's exit code",
    )
    .addOption(
      new Option(
        '--controller <mode>',
        'where the controller runs: a Deployment in the cluster, or external (outside the cluster)',
      )
        .choices(['deployment', 'external'])
        .default('deployment'),
    )
    .addOption(
      new Option(
        '--concurrency <n>',
        'most probes running at once (independent probes and per-template workloads run in parallel; API requests share one rate limit); 1 runs them one by one',
      )
        .argParser(boundedCount)
        .default(DEFAULT_CONCURRENCY),
    )
    .action(async (given: VerifyFlags, cmd: Command) => {
      // --kubeconfig and --context are global: before or after `verify`
      const flags: VerifyFlags = { ...given, ...kubeOptions(cmd) };
      if (flags.fromCluster) {
        await fromCluster(flags);
        return;
      }
      let plan: VerifyPlan;
      let kubeconfig = flags.kubeconfig;
      let removeKubeconfig = (): void => undefined;
      try {
        const { descriptor, source } =
          flags.inCluster && !flags.env
            ? {
                descriptor: readDescriptorDir(flags.descriptorDir ?? DESCRIPTOR_MOUNT),
                source: `configmap:${flags.descriptorDir ?? DESCRIPTOR_MOUNT}`,
              }
            : ((r) => ({ descriptor: r.descriptor, source: path.dirname(r.file) }))(
                readEnvironment(flags.env ?? defaultEnvDir()),
              );
        if (flags.inCluster && !kubeconfig) {
          const made = inClusterKubeconfig();
          kubeconfig = made.file;
          removeKubeconfig = made.remove;
        }
        plan = planFromDescriptor(descriptor, source, {
          transport: flags.transport,
          ...(flags.routerUrl ? { routerUrl: flags.routerUrl } : {}),
          ...(flags.routerCanaryHost ? { routerCanaryHost: flags.routerCanaryHost } : {}),
          probeTimeoutMs: flags.probeTimeout,
          readyTimeoutMs: flags.readyTimeout,
          samples: flags.samples,
        });
        if (flags.sandbox?.length) {
          plan = {
            ...plan,
            sandboxes: flags.sandbox,
            requirements: [{ name: 'runtime-exec' as const, required: 'verified' as const }],
          };
        }
      } catch (err) {
        if (err instanceof EnvironmentDescriptorError) {
          reportFailure(err, { command: 'verify', output: flags.output });
          if (flags.inCluster)
            writeTerminationMessage(terminationFailure(reasonOf(err), err.message, Number(process.exitCode ?? 1)));
          return;
        }
        throw err;
      }
      let client: KubeClient;
      try {
        client = KubeClient.connect({
          ...(kubeconfig ? { kubeconfig } : {}),
          ...(flags.context ? { context: flags.context } : {}),
        });
        removeKubeconfig();
      } catch (err) {
        if (err instanceof KubeconfigError) {
          // a usage error (exit 2): the message once, its hint only when the message does not already end with it
          reportFailure(err, { command: 'verify', output: flags.output, usageHint: true });
          if (flags.inCluster)
            writeTerminationMessage(terminationFailure(reasonOf(err), err.message, Number(process.exitCode ?? 1)));
          return;
        }
        throw err;
      }
      const g = globalOptions(cmd);
      const loaded = await loadRelease(plan.release, {
        ...(g.mirror ? { mirror: g.mirror } : {}),
        ...(g.cacheDir ? { cacheDir: g.cacheDir } : {}),
      }).catch((err: unknown) => {
        process.stderr.write(
          `warning: release files of ${plan.release} not loaded (${err instanceof Error ? err.message : String(err)}); template schemas and the pinned controller RBAC list are not checked\n`,
        );
        return undefined;
      });
      if (flags.waitReady !== undefined) {
        const gate = await waitForReadiness(
          readinessTargets(plan, flags.controller),
          clusterReadinessReads(client, plan),
          {
            deadlineMs: flags.waitReady,
            progress: (l) => process.stderr.write(`${l}\n`),
          },
        );
        if (!gate.ready) {
          const err = new VerifierNotReadyError(gate.pending, gate.waitedMs);
          reportFailure(err, { command: 'verify', output: flags.output });
          if (flags.inCluster)
            writeTerminationMessage(terminationFailure(reasonOf(err), err.message, Number(process.exitCode ?? 1)));
          return;
        }
      }
      const interrupt = new AbortController();
      const onSigint = (): void => {
        process.stderr.write(
          'interrupted: stopping probes, then deleting workload objects (Ctrl-C again to quit at once)\n',
        );
        interrupt.abort(new Error('SIGINT'));
        process.once('SIGINT', () => process.exit(130));
      };
      process.once('SIGINT', onSigint);
      try {
        const { report } = await runVerify({
          plan,
          client,
          ...(loaded ? { loaded } : {}),
          controllerMode: flags.controller,
          concurrency: flags.concurrency,
          ...(flags.routerTokenFile ? { routerToken: readFileSync(flags.routerTokenFile, 'utf8').trim() } : {}),
          progress: progressSink(process.stderr),
          signal: interrupt.signal,
        });
        const text = renderWith(flags.output, () => JSON.parse(renderJson(report)), {
          table: () => renderTable(report, { color: process.stdout.isTTY === true }),
          markdown: () => renderMarkdown(report),
        });
        process.stdout.write(text);
        if (flags.junit) writeFileSync(flags.junit, renderJunit(report));
        const code = report.outcome === 'verified' ? ExitCode.ok : EXIT_CODES[notVerifiedCategory(report)];
        process.exitCode = code;
        if (flags.inCluster) {
          const ref = flags.reportConfigmap;
          writeTerminationMessage(terminationSummary(report, code, ref ? `${ref.namespace}/${ref.name}` : undefined));
        }
        if (flags.reportConfigmap && flags.inCluster) {
          // A report nobody can read is a broken wiring: a passing run then exits with the write's failure.
          const failed = await writeReport(
            client,
            flags.reportConfigmap,
            reportConfigMap(flags.reportConfigmap, report, {
              run: runName(),
              exitCode: code,
              ...(process.env.AGENTPLANE_JOB ? { job: process.env.AGENTPLANE_JOB } : {}),
            }),
          );
          if (failed !== undefined) {
            process.stderr.write(
              `error: report not written to ConfigMap ${flags.reportConfigmap.namespace}/${flags.reportConfigmap.name}: ${failed.message}\n`,
            );
            if (code === ExitCode.ok)
              process.exitCode = failed.category === 'forbidden' ? ExitCode.forbidden : ExitCode.cluster;
          }
        }
      } catch (err) {
        if (err instanceof VerifyCouldNotRunError) {
          reportFailure(err, { command: 'verify', output: flags.output, prefix: 'could not run: ' });
          if (flags.inCluster)
            writeTerminationMessage(terminationFailure(reasonOf(err), err.message, Number(process.exitCode ?? 1)));
          return;
        }
        throw err;
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    });
}

/** `verify --from-cluster`: prints the stored report of the last in-cluster run and exits with its exit code. */
async function fromCluster(flags: VerifyFlags): Promise<void> {
  // The environment's own Job names its ConfigMap; without one, the context's namespace, else the environments' default.
  const ref = flags.reportConfigmap ??
    reportRefOfEnvironment(flags.env ?? envDirIfAny()) ?? {
      namespace: contextNamespace(flags) ?? 'agent-sandboxes',
      name: REPORT_CONFIGMAP,
    };
  let client: KubeClient;
  try {
    client = KubeClient.connect({
      ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
      ...(flags.context ? { context: flags.context } : {}),
    });
  } catch (err) {
    if (err instanceof KubeconfigError) {
      reportFailure(err, { command: 'verify', output: flags.output });
      return;
    }
    throw err;
  }
  const stored = await readReport(client, ref);
  if (stored instanceof StoredReportError) {
    reportFailure(stored, { command: 'verify', output: flags.output });
    return;
  }
  const { report } = stored;
  if (flags.output !== 'json' && flags.output !== 'yaml')
    process.stderr.write(
      `report of run ${stored.run ?? '(unnamed)'}, release ${report.environment.release}, started ${report.startedAt}\n`,
    );
  const text = renderWith(flags.output, () => JSON.parse(renderJson(report)), {
    table: () => renderTable(report, { color: process.stdout.isTTY === true }),
    markdown: () => renderMarkdown(report),
  });
  process.stdout.write(text);
  if (flags.junit) writeFileSync(flags.junit, renderJunit(report));
  process.exitCode =
    stored.exitCode ?? (report.outcome === 'verified' ? ExitCode.ok : EXIT_CODES[notVerifiedCategory(report)]);
}

/** The namespace of the kubeconfig context `verify` uses, when it sets one. */
function contextNamespace(flags: VerifyFlags): string | undefined {
  return kubeconfigNamespace({
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.context ? { context: flags.context } : {}),
  });
}

/** `dist`'s one synthesized environment, when there is exactly one (`--from-cluster` needs none). */
function envDirIfAny(): string {
  try {
    return defaultEnvDir();
  } catch {
    return '';
  }
}

/** What `--wait-ready` waits for: the release's CRDs, the controller (unless external) and every declared warm pool. */
export function readinessTargets(plan: VerifyPlan, controller: 'deployment' | 'external'): ReadinessTargets {
  const family = familyOfTag(plan.release)!;
  const version = FAMILY_VERSION[family];
  const crd = (kind: 'Sandbox' | 'SandboxTemplate' | 'SandboxWarmPool' | 'SandboxClaim'): string => {
    const g = gvrAt(kind, version);
    return `${g.plural}.${g.group}`;
  };
  const extensions = plan.templates.length > 0 || plan.warmPools.length > 0;
  return {
    release: plan.release,
    crds: [
      crd('Sandbox'),
      ...(extensions ? [crd('SandboxTemplate'), crd('SandboxWarmPool'), crd('SandboxClaim')] : []),
    ],
    ...(controller === 'deployment'
      ? { controller: { namespace: plan.controller.namespace, name: plan.controller.deployment } }
      : {}),
    pools: plan.warmPools.map((p) => ({ namespace: p.namespace, name: p.name })),
  };
}

/** The gate's reads through the API server (a failed read throws: the gate retries it). */
function clusterReadinessReads(client: KubeClient, plan: VerifyPlan): ReadinessReads {
  const reads = new ClusterReads(new Cluster(client), familyOfTag(plan.release));
  const value = async <T>(r: Promise<Result<T>>): Promise<T> => {
    const x = await r;
    if (x.kind === 'ok') return x.value;
    throw new Error(x.kind === 'failed' ? x.error.message : x.message);
  };
  return {
    crd: (name) => value(reads.crd(name)),
    deployment: (namespace, name) => value(reads.deployment(namespace, name)),
    warmPool: (namespace, name) => value(reads.warmPool(namespace, name)),
    poolPodFault: async (namespace, name) => {
      const members = await value(reads.sandboxes(namespace));
      const pods = members
        .filter((s) =>
          s.meta.ownerReferences.some((o) => o.controller && o.kind === 'SandboxWarmPool' && o.name === name),
        )
        .map((s) => s.podName);
      if (pods.length === 0) return undefined;
      const events = await value(reads.events(namespace, 'involvedObject.kind=Pod,reason=FailedCreatePodSandBox'));
      const fault = permanentPodFault(events, new Set(pods));
      return fault ? describePodFault(namespace, fault) : undefined;
    },
  };
}
