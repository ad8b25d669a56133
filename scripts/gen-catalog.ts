/**
 * Writes src/releases/catalog.ts from the upstream data snapshot index
 * (`index.json` of the release mirror `$AGENTPLANE_MIRROR`, or the path given as the first argument).
 *
 * Only facts carry over: commit, pinned files (upstream path, mirror path, sha256, size), controller image and
 * placeholder, asset orders, CRD identities and versions. Output is deterministic: the same index gives the same bytes.
 *
 * Usage: `npm run gen:catalog [-- <index.json>]`
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The release mirror (`npm run gen:catalog` sets it through scripts/upstream-data.sh). */
function mirrorDir(): string {
  const mirror = process.env['AGENTPLANE_MIRROR'];
  if (!mirror) throw new Error('AGENTPLANE_MIRROR is not set: name the release mirror, or the index.json as argument');
  return mirror;
}
const TAGS = ['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'] as const;
const KINDS = ['Sandbox', 'SandboxClaim', 'SandboxTemplate', 'SandboxWarmPool'] as const;

/**
 * `--manage-webhook-certs` exists on v0.5.6 only: v0.4.6 and v0.5.0 predate it and v1.0.3 removed every webhook flag
 * (`cmd/agent-sandbox-controller/main.go@{v0.4.6,v0.5.0,v0.5.6,v1.0.3}`, its flag definitions); the index does not
 * record controller flags, so this one fact is kept here.
 */
const MANAGE_WEBHOOK_CERTS_FLAG: Record<(typeof TAGS)[number], boolean> = {
  'v0.4.6': false,
  'v0.5.0': false,
  'v0.5.6': true,
  'v1.0.3': false,
};

/** The family of a tag: its minor version (`v1.0.3` -> `v1.0`). */
function familyOf(tag: string): string {
  return need(/^(v\d+\.\d+)\./.exec(tag)?.[1], `a family for ${tag}`);
}

interface IndexFile {
  localPath: string;
  tag: string;
  commit: string;
  upstreamPath: string;
  sha256: string;
  size: number;
  byteExact: boolean;
}
interface IndexVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  subresources: string[];
  printerColumns: { name: string; type: string; jsonPath: string }[];
}
interface IndexCrd {
  crdName: string;
  group: string;
  plural: string;
  scope: string;
  versions: IndexVersion[];
  conversion?: { strategy?: string } | null;
}
interface IndexTag {
  commit: string;
  controllerImage: string;
  controllerImagePlaceholder: string;
  releaseTool: { coreAssetOrder: string[]; extensionsAssetOrder: string[] };
  crds: Record<string, IndexCrd>;
}
interface Index {
  upstream: { repo: string };
  tags: Record<string, IndexTag>;
  files: IndexFile[];
}

function need<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null)
    throw new Error(`index.json lacks ${what}; regenerate the snapshot or fix the generator`);
  return value;
}

function releaseEntry(index: Index, tag: (typeof TAGS)[number]): unknown {
  const t = need(index.tags[tag], `tags.${tag}`);
  const prefix = `releases/${tag}/`;
  const files = index.files
    .filter((f) => f.tag === tag && f.localPath.startsWith(prefix) && f.byteExact)
    .map((f) => ({
      path: f.upstreamPath,
      mirrorPath: f.localPath.slice(prefix.length),
      sha256: f.sha256,
      size: f.size,
    }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const crds: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const c = need(t.crds[kind], `tags.${tag}.crds.${kind}`);
    const file = need(
      files.find((f) => f.path.startsWith('k8s/crds/') && f.path.endsWith(`_${c.plural}.yaml`)),
      `a pinned CRD file for ${kind} at ${tag}`,
    ).path;
    crds[kind] = {
      kind,
      crdName: c.crdName,
      group: c.group,
      plural: c.plural,
      scope: c.scope,
      // the index writes an absent stanza as a note ("None (field absent)"); the apiserver default is None
      conversionStrategy: c.conversion?.strategy === 'Webhook' ? 'Webhook' : 'None',
      versions: c.versions.map((v) => ({
        name: v.name,
        served: v.served,
        storage: v.storage,
        deprecated: v.deprecated,
        subresources: [...v.subresources].sort(),
        printerColumns: v.printerColumns.map((p) => ({ name: p.name, type: p.type, jsonPath: p.jsonPath })),
      })),
      file,
    };
  }
  return {
    tag,
    family: familyOf(tag),
    commit: t.commit,
    controllerImage: t.controllerImage,
    controllerImagePlaceholder: t.controllerImagePlaceholder,
    coreAssetOrder: t.releaseTool.coreAssetOrder,
    extensionsAssetOrder: t.releaseTool.extensionsAssetOrder,
    hasManageWebhookCertsFlag: MANAGE_WEBHOOK_CERTS_FLAG[tag],
    crds,
    files,
  };
}

/** Renders the catalog module text for an index. */
export function renderCatalog(index: Index): string {
  const repo = need(index.upstream?.repo, 'upstream.repo').replace(/^github\.com\//, '');
  const entries = TAGS.map(
    (tag) => `  '${tag}': ${JSON.stringify(releaseEntry(index, tag), null, 2).replace(/\n/g, '\n  ')},`,
  );
  return [
    "// Generated by scripts/gen-catalog.ts from the release mirror's index.json. Do not edit; run `npm run gen:catalog`.",
    '// Facts only (hashes, sizes, versions, names); the upstream files themselves are fetched and verified at run time.',
    "import type { ReleaseFacts, ReleaseTag } from './types.js';",
    '',
    '/** The upstream GitHub repository (`owner/name`) the pinned files come from. */',
    `export const UPSTREAM_REPO = '${repo}';`,
    '',
    '/** Pinned facts per supported release (`dev/tools/release@tag`, `k8s/crds/*.yaml@tag`, `cmd/agent-sandbox-controller/main.go@tag`). */',
    'export const CATALOG: Readonly<Record<ReleaseTag, ReleaseFacts>> = {',
    ...entries,
    '};',
    '',
  ].join('\n');
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const indexPath = resolve(process.argv[2] ?? resolve(mirrorDir(), 'index.json'));
  const index = JSON.parse(readFileSync(indexPath, 'utf8')) as Index;
  const out = resolve(REPO_ROOT, 'src/releases/catalog.ts');
  writeFileSync(out, renderCatalog(index));
  console.log(`wrote ${out} from ${indexPath}`);
}
