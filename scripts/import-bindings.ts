/**
 * `npm run import [-- --mirror DIR --cache-dir DIR --out DIR]`: regenerates the CRD bindings in imports/ from the
 * entries of cdk8s.yaml (`<prefix>:=releases/<tag>/<upstream path>`). Every CRD file comes from loadRelease, so it is
 * sha256-verified against the catalog; nothing from upstream is written into the repository except the generated code.
 *
 * Entries that share a prefix form one import: their CRDs are grouped by (group, version) across files, so cdk8s writes
 * one module per API group holding every kind of every version (one input per file would leave only the last kind,
 * case import-same-group-overwrite). Two inputs defining one group/version/kind with different schemas, and an
 * entry whose file holds no CRD, are refused.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { loadRelease, type FetchOptions, type KubeObject, type LoadedRelease } from '../src/releases/index.js';
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
export async function generateBindings(
  cdk8sYaml: string,
  outDir: string,
  opts: FetchOptions = {},
): Promise<BindingsReport> {
  const entries = bindingEntries(cdk8sYaml);
  const releases = new Map<string, LoadedRelease>();
  const modules = new Map<string, ModuleCrds>();
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
    if (extraction.crds.length === 0) {
      throw new BindingsError(
        'no-crd',
        `cdk8s.yaml import ${e.prefix}: ${e.tag}/${e.path} holds no CustomResourceDefinition (${extraction.skipped.join(', ') || 'no documents'})`,
        { module: e.prefix, sources: [`${e.tag}/${e.path}`], found: extraction.skipped },
      );
    }
    let mod = modules.get(e.prefix);
    if (!mod) {
      mod = new ModuleCrds(e.prefix);
      modules.set(e.prefix, mod);
    }
    for (const crd of extraction.crds) mod.add(crd, `${e.tag}/${e.path}`);
  }
  const specs: ImportSpec[] = [...modules.values()].map((m) => ({ prefix: m.prefix, crds: m.crds() }));
  const run = await runCdk8sImport(specs, outDir);
  lines.push(
    `cdk8s import: ${specs.length} modules into ${outDir} in ${(run.durationMs / 1000).toFixed(1)} s, peak RSS ${Math.round(run.maxRssKiB / 1024)} MiB`,
  );
  return { lines, run };
}

/** What a {@link BindingsError} is about: the module (import prefix), the files involved, and what they hold. */
export interface BindingsErrorSubject {
  readonly module: string;
  /** `<tag>/<path>` of each file involved: the one with no CRD, or both that define the kind. */
  readonly sources: readonly string[];
  /** `conflicting-schema`: `<group>/<version> <Kind>`. */
  readonly kind?: string;
  /** `no-crd`: the documents the file holds instead (`Kind/name`). */
  readonly found?: readonly string[];
}

/** Why the import refused its input: `no-crd` (an entry's file holds none), `conflicting-schema` (one group/version/kind defined twice, differently). */
export class BindingsError extends Error {
  override readonly name = 'BindingsError';
  constructor(
    readonly reason: 'no-crd' | 'conflicting-schema',
    message: string,
    readonly subject: BindingsErrorSubject,
  ) {
    super(message);
  }
}

/** JSON with keys sorted at every level: equal text for equal schemas, whatever the key order or object realm. */
function canonical(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(value));
}

interface CrdVersion {
  readonly name: string;
  readonly [key: string]: unknown;
}

/**
 * The CRDs of one module, grouped by (group, version): versions of one CRD from several files are merged into one CRD
 * object (cdk8s-cli refuses a kind split across objects, cdk8s-cli#1042); the same group/version/kind twice is kept
 * once when identical and refused when the schemas differ.
 */
class ModuleCrds {
  private readonly byName = new Map<
    string,
    { crd: KubeObject; versions: Map<string, { version: CrdVersion; source: string }> }
  >();
  constructor(readonly prefix: string) {}

  add(crd: KubeObject, source: string): void {
    const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string }; versions?: CrdVersion[] };
    const name = String(crd.metadata?.name);
    let entry = this.byName.get(name);
    if (!entry) {
      entry = { crd, versions: new Map() };
      this.byName.set(name, entry);
    }
    for (const v of spec.versions ?? []) {
      const seen = entry.versions.get(v.name);
      if (seen === undefined) entry.versions.set(v.name, { version: v, source });
      else if (canonical(seen.version) !== canonical(v)) {
        throw new BindingsError(
          'conflicting-schema',
          `module ${this.prefix}: ${spec.group}/${v.name} ${spec.names?.kind} is defined by ${seen.source} and by ${source} with different schemas; ` +
            'give one of them its own module prefix in cdk8s.yaml, or import only one',
          { module: this.prefix, sources: [seen.source, source], kind: `${spec.group}/${v.name} ${spec.names?.kind}` },
        );
      }
    }
  }

  /** One CRD per name, versions in first-seen order. */
  crds(): KubeObject[] {
    return [...this.byName.values()].map(
      ({ crd, versions }) =>
        ({
          ...crd,
          spec: { ...(crd.spec as object), versions: [...versions.values()].map((v) => v.version) },
        }) as KubeObject,
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { mirror: { type: 'string' }, 'cache-dir': { type: 'string' }, out: { type: 'string' } },
  });
  const outDir = resolve(values.out ?? join(REPO_ROOT, 'imports'));
  // generate beside, then replace: a failed import leaves the old bindings, and no stale module survives a removed entry
  const staging = mkdtempSync(join(tmpdir(), 'agentplane-bindings-'));
  try {
    const report = await generateBindings(readFileSync(join(REPO_ROOT, 'cdk8s.yaml'), 'utf8'), staging, {
      ...(values.mirror !== undefined ? { mirror: values.mirror } : {}),
      ...(values['cache-dir'] !== undefined ? { cacheDir: values['cache-dir'] } : {}),
    });
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
