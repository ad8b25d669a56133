/**
 * `agentplane diff [BASE] [HEAD]`: compare two synthesized directories or git refs of this repository (synthesized on
 * the fly), or, with `--live`, the cluster against HEAD through server-side dry-run. Exit codes like diff(1):
 * 0 no change, 1 changes, 2 error.
 */
import { Option, type Command } from 'commander';
import { KubeClient } from '../../adapter/kubernetes/client.js';
import { KubeObjects } from '../../adapter/kubernetes/objects.js';
import {
  DIFF_FORMATS, diffManifests, readLiveSets, readManifestSource, renderDiff, schemaLookupFromRelease, type DiffFormat, type LiveReader, type ManifestSet,
} from '../../diff/index.js';
import { loadRelease, type KubeObject } from '../../releases/index.js';
import { describeError } from '../errors.js';
import { globalOptions } from '../global-options.js';

interface DiffFlags {
  live?: boolean;
  kubeconfig?: string;
  context?: string;
  release?: string;
  synthCommand?: string;
  output: DiffFormat;
}

/** A cluster error for an object, without its content; a Secret's server message is left out too (it may echo values). */
class LiveReadError extends Error {
  readonly code = 'live-read';
  readonly hint: string;
  constructor(what: string, obj: KubeObject, error: { category: string; message: string; code?: number; hint?: string }) {
    const id = `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${String(obj.metadata?.name)}`;
    super(`${what} ${id}: ${obj.kind === 'Secret' ? `${error.category}${error.code ? ` (HTTP ${error.code})` : ''}` : error.message}`);
    this.name = 'LiveReadError';
    this.hint = error.hint ?? 'check the object can be applied with kubectl apply --server-side --dry-run=server';
  }
}

/**
 * The cluster implementation of {@link LiveReader}: GET + server-side apply with dryRun=All (field manager `agentplane`),
 * through the adapter's shape-preserving {@link KubeObjects} (client-node's typed bodies drop CRD `default`/`enum` keys).
 */
function kubeLiveReader(client: KubeClient): LiveReader {
  const objects = new KubeObjects(client);
  return {
    label: `live (context ${client.context})`,
    async get(obj) {
      const ns = obj.metadata?.namespace;
      const r = await objects.get({ apiVersion: obj.apiVersion, kind: obj.kind, name: String(obj.metadata?.name), ...(ns ? { namespace: ns } : {}) });
      if (r.kind === 'ok') return r.value;
      if (r.kind === 'failed' && r.error.category === 'not-found' && r.error.missing !== 'api') return undefined;
      throw new LiveReadError('cannot read', obj, r.kind === 'failed' ? r.error : { category: r.kind, message: r.reason });
    },
    async dryRunApply(obj) {
      const r = await objects.apply(obj, { dryRun: true, fieldManager: 'agentplane' });
      if (r.kind === 'ok') return r.value;
      throw new LiveReadError('server-side dry run of', obj, r.kind === 'failed' ? r.error : { category: r.kind, message: r.reason });
    },
  };
}

/** Registers `diff` on the program. */
export function registerDiff(program: Command): void {
  program
    .command('diff')
    .description('compare two synthesized directories or git refs (or the cluster, --live) object by object, with risk labels')
    .argument('[BASE]', 'synthesized directory or git ref (omit with --live)')
    .argument('[HEAD]', 'synthesized directory or git ref', 'dist')
    .option('--live', 'BASE is the cluster: compare live objects with a server-side dry run of HEAD')
    .option('--kubeconfig <file>', 'kubeconfig for --live (default: $KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context for --live')
    .option('--release <tag>', 'also take CRD defaults from this pinned release (default: the CRDs found in BASE and HEAD)')
    .option('--synth-command <argv>', 'command synthesizing a git ref in its worktree, {out} = output dir (default: node bin/agentplane.js synth --all-examples --out {out})')
    .addOption(new Option('-o, --output <format>', 'output format').choices(DIFF_FORMATS).default('text'))
    .addHelpText('after', '\nExit codes (like diff): 0 no change, 1 changes, 2 error.')
    .action(async (baseArg: string | undefined, headArg: string, flags: DiffFlags, cmd: Command) => {
      if (flags.live !== true && baseArg === undefined) cmd.error('error: give BASE and HEAD, or --live', { exitCode: 2 });
      try {
        const gitOpts = flags.synthCommand !== undefined ? { synthCommand: flags.synthCommand.split(/\s+/).filter(Boolean) } : {};
        let base: ManifestSet;
        let head: ManifestSet;
        if (flags.live === true) {
          const desired = await readManifestSource(baseArg ?? headArg, gitOpts);
          ({ base, head } = await readLiveSets(desired, kubeLiveReader(KubeClient.connect({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) }))));
        } else {
          [base, head] = await Promise.all([readManifestSource(baseArg!, gitOpts), readManifestSource(headArg, gitOpts)]);
        }
        const schemaFor = flags.release !== undefined ? schemaLookupFromRelease(await loadRelease(flags.release, globalOptions(cmd))) : undefined;
        const report = diffManifests(base, head, schemaFor ? { schemaFor } : {});
        process.stdout.write(renderDiff(report, flags.output));
        process.exitCode = report.objects.length === 0 ? 0 : 1;
      } catch (err) {
        process.stderr.write(`${describeError(err)}\n`);
        process.exitCode = 2;
      }
    });
}
