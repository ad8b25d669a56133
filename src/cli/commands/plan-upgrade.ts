/**
 * `agentplane plan-upgrade --to TAG [--from TAG | --kubeconfig FILE]`: classify a release jump from the pinned CRD
 * schemas and, with a cluster, from live `status.storedVersions`, v1alpha1 claims and warm pools.
 * Exit codes: 0 safe, 1 needs action (needs-migration or blocked), 2 error.
 */
import * as k8s from '@kubernetes/client-node';
import { Option, type Command } from 'commander';
import { KubeClient } from '../../adapter/kubernetes/client.js';
import { DIFF_FORMATS, renderPlan, type DiffFormat } from '../../diff/index.js';
import {
  intermediateTags, loadRelease, planUpgrade, releaseFacts, type LiveClaim, type LiveUpgradeState, type ReleaseFacts, type SandboxKind,
} from '../../releases/index.js';
import { describeError } from '../errors.js';
import { globalOptions } from '../global-options.js';

interface PlanFlags {
  to: string;
  from?: string;
  kubeconfig?: string;
  context?: string;
  output: DiffFormat;
}

/** A live read that failed; the message names the call and the kubeconfig context. */
class LiveStateError extends Error {
  readonly code = 'live-state';
  constructor(what: string, readonly hint: string) {
    super(what);
    this.name = 'LiveStateError';
  }
}

const KINDS: readonly SandboxKind[] = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'];

type Obj = { metadata?: { name?: string; namespace?: string; labels?: Record<string, string> }; spec?: Record<string, unknown>; status?: Record<string, unknown> };

/** Reads what the plan needs from the cluster: the live release label, storedVersions, v1alpha1 claims and pools. */
async function readLiveState(client: KubeClient, facts: ReleaseFacts): Promise<{ state: LiveUpgradeState; tag?: string }> {
  const ext = client.api(k8s.ApiextensionsV1Api);
  const co = client.api(k8s.CustomObjectsApi);
  const storedVersions: Partial<Record<SandboxKind, readonly string[]>> = {};
  const servedLive: Partial<Record<SandboxKind, readonly string[]>> = {};
  let tag: string | undefined;
  for (const kind of KINDS) {
    const name = facts.crds[kind].crdName;
    const r = await client.call(`get customresourcedefinitions.apiextensions.k8s.io ${name}`, () => ext.readCustomResourceDefinition({ name }));
    if (r.kind !== 'ok') {
      if (r.kind === 'failed' && r.error.category === 'not-found') continue;
      throw new LiveStateError(`cannot read CRD ${name} in context ${client.context}: ${r.kind === 'failed' ? r.error.message : r.kind}`, r.kind === 'failed' ? r.error.hint ?? 'grant get on customresourcedefinitions' : 'grant get on customresourcedefinitions');
    }
    storedVersions[kind] = r.value.status?.storedVersions ?? [];
    servedLive[kind] = r.value.spec.versions.filter((v) => v.served).map((v) => v.name);
    if (kind === 'Sandbox') tag = r.value.metadata?.labels?.['app.kubernetes.io/version'];
  }
  const list = async (kind: SandboxKind, version: string): Promise<Obj[]> => {
    const { group, plural } = facts.crds[kind];
    const r = await client.call(`list ${plural}.${group}`, () => co.listCustomObjectForAllNamespaces({ group, version, plural }) as Promise<{ items?: Obj[] }>);
    if (r.kind !== 'ok') throw new LiveStateError(`cannot list ${plural}.${group}/${version} in context ${client.context}: ${r.kind === 'failed' ? r.error.message : r.kind}`, 'grant list on the Agent Sandbox resources, or plan with --from instead');
    return r.value.items ?? [];
  };
  let claims: LiveClaim[] | undefined;
  let pools: string[] | undefined;
  if ((storedVersions.SandboxClaim ?? []).includes('v1alpha1') && (servedLive.SandboxClaim ?? []).includes('v1alpha1')) {
    claims = (await list('SandboxClaim', 'v1alpha1')).map((c) => ({
      namespace: c.metadata?.namespace ?? '',
      name: c.metadata?.name ?? '',
      ...(typeof (c.spec?.sandboxTemplateRef as { name?: unknown } | undefined)?.name === 'string' ? { template: (c.spec!.sandboxTemplateRef as { name: string }).name } : {}),
      ...(typeof c.spec?.warmpool === 'string' ? { warmpool: c.spec.warmpool } : {}),
      ...(typeof (c.status?.sandbox as { name?: unknown } | undefined)?.name === 'string' ? { sandboxName: (c.status!.sandbox as { name: string }).name } : {}),
    }));
    const poolVersion = (servedLive.SandboxWarmPool ?? [])[0];
    pools = poolVersion === undefined ? [] : (await list('SandboxWarmPool', poolVersion)).map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`);
  }
  return {
    state: { source: `context ${client.context}`, storedVersions, ...(claims ? { claims } : {}), ...(pools ? { pools } : {}) },
    ...(tag ? { tag } : {}),
  };
}

/** Registers `plan-upgrade` on the program. */
export function registerPlanUpgrade(program: Command): void {
  program
    .command('plan-upgrade')
    .description('classify an upgrade between pinned releases (safe, needs-migration, blocked) from CRD schemas and live storedVersions')
    .requiredOption('--to <tag>', 'target release')
    .option('--from <tag>', 'current release (default with --kubeconfig: the live install\'s app.kubernetes.io/version label)')
    .option('--kubeconfig <file>', 'read status.storedVersions, v1alpha1 claims and warm pools from this cluster')
    .option('--context <name>', 'kubeconfig context')
    .addOption(new Option('-o, --output <format>', 'output format').choices(DIFF_FORMATS).default('text'))
    .addHelpText('after', '\nExit codes: 0 safe, 1 needs action (needs-migration or blocked), 2 error.')
    .action(async (flags: PlanFlags, cmd: Command) => {
      if (flags.from === undefined && flags.kubeconfig === undefined && flags.context === undefined) cmd.error('error: give --from TAG or --kubeconfig FILE', { exitCode: 2 });
      try {
        const fetchOpts = globalOptions(cmd);
        const to = await loadRelease(flags.to, fetchOpts);
        let live: { state: LiveUpgradeState; tag?: string } | undefined;
        if (flags.kubeconfig !== undefined || flags.context !== undefined) {
          const client = KubeClient.connect({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) });
          live = await readLiveState(client, to.facts);
        }
        const fromTag = flags.from ?? live?.tag;
        if (fromTag === undefined) throw new LiveStateError('the live install has no app.kubernetes.io/version label on its Sandbox CRD', 'pass --from with the release that is installed');
        const from = await loadRelease(releaseFacts(fromTag).tag, fetchOpts);
        const intermediates = await Promise.all(intermediateTags(from.facts.tag, to.facts.tag).map((t) => loadRelease(releaseFacts(t).tag, fetchOpts)));
        const plan = planUpgrade(from, to, live?.state, intermediates);
        process.stdout.write(renderPlan(plan, flags.output));
        process.exitCode = plan.verdict === 'safe' ? 0 : 1;
      } catch (err) {
        process.stderr.write(`${describeError(err)}\n`);
        process.exitCode = 2;
      }
    });
}
