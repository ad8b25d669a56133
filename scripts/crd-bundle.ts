/**
 * The import path for CRD bindings: take release bundles (multi-document YAML as released, with Namespaces, RBAC,
 * Deployments, empty and comment-only documents mixed in), keep only the CustomResourceDefinitions, make open schemas
 * importable, and run `cdk8s import` (cdk8s-cli) on them, measuring time and peak memory of the import process.
 *
 * Known cdk8s-cli behaviour worked around here (see case import-release-bundle):
 * - a version whose openAPIV3Schema is open at the top (`x-kubernetes-preserve-unknown-fields: true`) without a
 *   `spec` property gets props with `metadata` only (cdk8s#2152, cdk8s-cli#1068); we add an open `spec`
 *   (`additionalProperties` of unknown values), which cdk8s turns into `spec?: { [key: string]: any }`;
 * - non-CRD documents are filtered out before cdk8s sees them (cdk8s-cli#2338).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { ReleaseParseError, isKubeObject } from '../src/releases/index.js';
import type { KubeObject } from '../src/releases/index.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CDK8S_BIN = join(REPO_ROOT, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s');

/** What extractCrds kept and skipped from one bundle. */
export interface CrdExtraction {
  /** The CustomResourceDefinitions, in bundle order, with open top-level schemas given an open `spec`. */
  readonly crds: KubeObject[];
  /** `Kind/name` of every non-CRD document skipped, in bundle order. */
  readonly skipped: string[];
  /** Documents that were empty or held only comments. */
  readonly emptyDocuments: number;
  /** `<crd name>/<version>` of every version whose open schema got an open `spec`. */
  readonly openedSpecs: string[];
}

/** A document of a bundle that is not a Kubernetes object (no apiVersion/kind); `document` counts from 1. */
export class BundleDocumentError extends Error {
  override readonly name = 'BundleDocumentError';
  readonly reason = 'NotAKubernetesObject';
  constructor(
    readonly source: string,
    readonly document: number,
  ) {
    super(`${source}: document ${document} is not a Kubernetes object (no apiVersion/kind); fix the bundle`);
  }
}

/**
 * Splits a multi-document YAML bundle and keeps only `apiextensions.k8s.io/v1` CustomResourceDefinitions.
 * @throws ReleaseParseError when the text is not YAML; BundleDocumentError when a document is not a Kubernetes object.
 */
export function extractCrds(text: string, source: string): CrdExtraction {
  const all = parseAllDocuments(text);
  for (const d of all)
    if (d.errors.length > 0) throw new ReleaseParseError(source, d.errors.map((e) => e.message).join('; '));
  const values: unknown[] = all.map((d) => d.toJS({ maxAliasCount: 100 }));
  const docs = values.filter((v) => v !== null && v !== undefined);
  const crds: KubeObject[] = [];
  const skipped: string[] = [];
  const openedSpecs: string[] = [];
  for (const [i, doc] of docs.entries()) {
    if (!isKubeObject(doc)) throw new BundleDocumentError(source, i + 1);
    if (doc.apiVersion === 'apiextensions.k8s.io/v1' && doc.kind === 'CustomResourceDefinition') {
      crds.push(withOpenSpecs(doc, openedSpecs));
    } else {
      skipped.push(`${doc.kind}/${doc.metadata?.name ?? '(unnamed)'}`);
    }
  }
  return { crds, skipped, emptyDocuments: values.length - docs.length, openedSpecs };
}

/** One line for people: how many CRDs were kept and what was skipped. */
export function describeExtraction(source: string, e: CrdExtraction): string {
  const opened = e.openedSpecs.length ? `; open schema given an open spec: ${e.openedSpecs.join(', ')}` : '';
  const skipped = e.skipped.length ? ` (${e.skipped.join(', ')})` : '';
  return `${source}: kept ${e.crds.length} CustomResourceDefinition(s), skipped ${e.skipped.length} other document(s)${skipped} and ${e.emptyDocuments} empty document(s)${opened}`;
}

function withOpenSpecs(crd: KubeObject, opened: string[]): KubeObject {
  const copy = structuredClone(crd);
  const versions =
    (copy.spec as { versions?: { name: string; schema?: { openAPIV3Schema?: Record<string, unknown> } }[] } | undefined)
      ?.versions ?? [];
  for (const v of versions) {
    const schema = v.schema?.openAPIV3Schema;
    if (!schema || schema['x-kubernetes-preserve-unknown-fields'] !== true) continue;
    const props = (schema.properties ?? {}) as Record<string, unknown>;
    if (props.spec !== undefined) continue;
    schema.properties = {
      ...props,
      spec: { type: 'object', additionalProperties: { 'x-kubernetes-preserve-unknown-fields': true } },
    };
    opened.push(`${crd.metadata?.name ?? '?'}/${v.name}`);
  }
  return copy;
}

/** One `cdk8s import` module: classes go to `<outDir>/<prefix>-<group>.ts`. */
export interface ImportSpec {
  readonly prefix: string;
  readonly crds: readonly KubeObject[];
}

/** Time and peak memory of one `cdk8s import` run. */
export interface ImportRun {
  readonly durationMs: number;
  /** Peak resident set size of the cdk8s-cli process, in KiB (`process.resourceUsage().maxRSS` reported at its exit). */
  readonly maxRssKiB: number;
  readonly output: string;
}

/**
 * Writes each spec's CRDs to a temporary directory (never the repository) and runs
 * `cdk8s import --output <outDir> --language typescript` there (a temporary cdk8s.yaml lists `<prefix>:=<file>` per spec),
 * with the upgrade check off.
 * @throws Error with cdk8s-cli's output when the import fails or exceeds `timeoutMs` (default 300000).
 */
export async function runCdk8sImport(
  specs: readonly ImportSpec[],
  outDir: string,
  timeoutMs = 300_000,
): Promise<ImportRun> {
  const work = mkdtempSync(join(tmpdir(), 'agentplane-import-'));
  try {
    // cdk8s-cli takes one SPEC on the command line, but imports every entry of the cdk8s.yaml in its working directory.
    const imports = specs.map((s) => {
      const file = join(work, `${s.prefix}.yaml`);
      writeFileSync(file, s.crds.map((c) => stringify(c, { lineWidth: 0 })).join('---\n'));
      return `${s.prefix}:=${file}`;
    });
    writeFileSync(join(work, 'cdk8s.yaml'), stringify({ language: 'typescript', imports }));
    const usageFile = join(work, 'usage.json');
    const reporter = join(work, 'report-usage.cjs');
    writeFileSync(
      reporter,
      `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(usageFile)}, JSON.stringify(process.resourceUsage())));\n`,
    );
    const started = performance.now();
    const output = await new Promise<string>((ok, fail) => {
      execFile(
        process.execPath,
        [
          '--require',
          reporter,
          CDK8S_BIN,
          'import',
          '--output',
          resolve(outDir),
          '--language',
          'typescript',
          '--no-check-upgrade',
        ],
        {
          cwd: work,
          env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
          timeout: timeoutMs,
          maxBuffer: 16 * 1024 * 1024,
        },
        (err, stdout, stderr) =>
          err ? fail(new Error(`cdk8s import failed: ${err.message}\n${stdout}${stderr}`)) : ok(`${stdout}${stderr}`),
      );
    });
    const durationMs = performance.now() - started;
    const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { maxRSS: number };
    return { durationMs, maxRssKiB: usage.maxRSS, output };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
