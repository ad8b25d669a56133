/** One line per command: its description in `agentplane --help` and in its own `--help` (kept here so the program's help loads no command). */
export const COMMAND_SUMMARIES = {
  compat:
    'compatibility worksheet of one cluster: the nine tuple parts as read live, what the release was built for, and what our tests covered',
  diff: 'compare two synthesized directories or git refs (or the cluster, --live) object by object, with risk labels',
  'migrate-storage':
    'rewrite every Agent Sandbox object at its storage version, then prune status.storedVersions (dry-run unless --apply)',
  mirror: 'fill a release mirror for offline or air-gapped use: `mirror pull <release...> --to DIR`, then --mirror DIR',
  'plan-upgrade':
    'classify a move between pinned releases (safe, needs-migration, blocked, unknown) from CRD schemas and live storedVersions',
  synth: 'synthesize environment modules into dist/<environment>/ (numbered apply-phase files + environment.json)',
  verify:
    'verify a deployed environment: move every declared capability through discovered -> compatible -> configured -> verified, with evidence',
  version: 'print the version of agentplane, the Agent Sandbox releases it is built for, and the Node.js running it',
} as const;

export type CommandName = keyof typeof COMMAND_SUMMARIES;
