/**
 * `npm run import [-- --mirror DIR --cache-dir DIR --out DIR]`: regenerates the CRD bindings in imports/ from the
 * entries of cdk8s.yaml (`<prefix>:=releases/<tag>/<upstream path>`). Every CRD file comes from loadRelease, so it is
 * sha256-verified against the catalog; nothing from upstream is written into the repository except the generated code.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { loadRelease, type FetchOptions, type LoadedRelease } from '../src/releases/index.js';
import { describeExtraction, extractCrds, runCdk8sImport, type ImportRun, type ImportSpec } from './crd-bundle.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = /^([a-z0-9][a-z0-9-]*):=releases\/(v\d+\.\d+\.\d+)\/(.+)$/;

/** One import entry of cdk8s.yaml. */
export interface BindingEntry {
  readonly prefix: string;
  readonly tag: string;
  readonly path: string;
}

/** The import entries of a cdk8s.yaml text. @throws Error naming an entry that is not `<prefix>:=releases/<tag>/<path>`. */
export function bindingEntries(cdk8sYaml: string): BindingEntry[] {
  const imports = (parse(cdk8sYaml) as { imports?: unknown } | null)?.imports;
  if (!Array.isArray(imports)) throw new Error('cdk8s.yaml has no imports list');
  return imports.map((raw) => {
    const m = ENTRY.exec(String(raw));
    if (!m) throw new Error(`cdk8s.yaml import ${JSON.stringify(raw)} is not <prefix>:=releases/<tag>/<upstream path>`);
    return { prefix: m[1]!, tag: m[2]!, path: m[3]! };
  });
}

/** Result of generateBindings: one line per import entry, and the cdk8s import measurement. */
export interface BindingsReport {
  readonly lines: string[];
  readonly run: ImportRun;
}

/**
 * Regenerates the bindings of every cdk8s.yaml entry into `outDir` from verified release files.
 * @throws the releases layer's errors (checksum, missing file, unreachable source) and Error for a bad entry or a failed import.
 */
export async function generateBindings(cdk8sYaml: string, outDir: string, opts: FetchOptions = {}): Promise<BindingsReport> {
  const entries = bindingEntries(cdk8sYaml);
  const releases = new Map<string, LoadedRelease>();
  const specs: ImportSpec[] = [];
  const lines: string[] = [];
  for (const e of entries) {
    let release = releases.get(e.tag);
    if (!release) {
      release = await loadRelease(e.tag, opts);
      releases.set(e.tag, release);
    }
    const bytes = release.files.get(e.path);
    if (!bytes) throw new Error(`cdk8s.yaml import ${e.prefix}: ${e.path} is not a pinned file of ${e.tag}`);
    const extraction = extractCrds(bytes.toString('utf8'), `${e.tag}/${e.path}`);
    lines.push(describeExtraction(`${e.prefix} <- ${e.tag}/${e.path}`, extraction));
    specs.push({ prefix: e.prefix, crds: extraction.crds });
  }
  const run = await runCdk8sImport(specs, outDir);
  lines.push(`cdk8s import: ${specs.length} modules into ${outDir} in ${(run.durationMs / 1000).toFixed(1)} s, peak RSS ${Math.round(run.maxRssKiB / 1024)} MiB`);
  return { lines, run };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { mirror: { type: 'string' }, 'cache-dir': { type: 'string' }, out: { type: 'string' } } });
  const outDir = resolve(values.out ?? join(REPO_ROOT, 'imports'));
  // generate beside, then replace: a failed import leaves the old bindings, and no stale module survives a removed entry
  const staging = mkdtempSync(join(tmpdir(), 'agentplane-bindings-'));
  try {
    const report = await generateBindings(readFileSync(join(REPO_ROOT, 'cdk8s.yaml'), 'utf8'), staging, { mirror: values.mirror, cacheDir: values['cache-dir'] });
    rmSync(outDir, { recursive: true, force: true });
    cpSync(staging, outDir, { recursive: true });
    for (const line of report.lines) console.log(line.replace(staging, outDir));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
