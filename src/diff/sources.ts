/**
 * Reading the manifest sets to compare: a directory of synthesized YAML/JSON, or a git ref of the repository
 * synthesized on the fly in a temporary worktree.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CORE_SCHEMA, loadAll, YAMLException } from 'js-yaml';
import type { KubeObject } from '../releases/index.js';
import { appendAll } from '../model/arrays.js';
import { AgentPlaneError } from '../model/errors.js';
import { sha256Hex } from '../releases/cache.js';
import { readDerived, writeDerived } from '../releases/derived.js';
import { isKubeObject } from '../releases/kube-object.js';
import { readBlockDocument } from './block-yaml.js';
import type { ManifestSet } from './manifest-set.js';

const run = promisify(execFile);

/** A manifest file that does not parse. The message names file, line and column and never quotes the content (it may hold Secret values). */
export class ManifestParseError extends AgentPlaneError {
  readonly reason = 'ManifestUnparsable';
  readonly exitCategory = 'invalid';
  readonly hint = 'fix the file (or re-run synth); the position is 1-based';
  constructor(
    readonly file: string,
    detail: string,
    /** Where the parser stopped in the file, 1-based. */
    readonly line?: number,
    readonly column?: number,
  ) {
    super(`${file} is not valid YAML: ${detail}`);
  }
}

/**
 * A BASE/HEAD argument that is neither a directory nor a git ref, or a git ref that could not be synthesized
 * (`ManifestSourceInvalid`); or a git ref of a repository the default synth command cannot synthesize, since it is no
 * AgentPlane checkout, and no `--synth-command` was given (`SynthCommandNeeded`).
 */
export class ManifestSourceError extends AgentPlaneError {
  readonly exitCategory = 'invalid';
  constructor(
    message: string,
    readonly hint: string,
    /** A failed synth of a git ref: the ref, the command run and the last lines it wrote to stderr. */
    readonly synth?: { readonly ref: string; readonly command: readonly string[]; readonly stderr: string },
    readonly reason: 'ManifestSourceInvalid' | 'SynthCommandNeeded' = 'ManifestSourceInvalid',
  ) {
    super(message);
  }
}

/** The synth command for a git ref when none is given: this repository's own examples, through its own CLI. */
const DEFAULT_SYNTH_COMMAND = ['node', 'bin/agentplane.js', 'synth', '--all-examples', '--out', '{out}'];

/** The API group of AgentPlane's own descriptors (`environment.json`): written by synth, never applied, so never compared. */
const OWN_GROUP = 'agentplane.dev';

/**
 * Parsed documents by their exact text. Pass one cache to both sides of a diff: a document that is the same text in
 * BASE and HEAD (most of them, in a review) is parsed once and both sides hold the same objects, which the comparison
 * then skips without normalizing. Objects in the cache are shared: treat them as read-only.
 */
export type DocumentCache = Map<string, readonly KubeObject[]>;

/** Lines that start a document (`---`, alone or followed by a space and content). */
const DOCUMENT_START = /^---(?=[ \t\r]|$)/gm;
/** Directives (`%YAML`) and document-end markers (`...`) tie text to the next or previous document: such files are parsed whole. */
const CROSS_DOCUMENT_SYNTAX = /^(%|\.\.\.(?=[ \t\r]|$))/m;

/** Whether `text` has a line terminator other than `\n` (a regex's `^` and `$` also see lines at those). */
const otherLineTerminators = (text: string): boolean =>
  text.includes('\r') || text.includes('\u2028') || text.includes('\u2029');

/**
 * Whether a line of `text` (split at `\n`) starts with `s`, searched by `s` itself: `%` and `...` are rare in manifests,
 * while a search for `\n%` stops at every newline.
 */
function someLineStartsWith(text: string, s: string): boolean {
  for (let i = text.indexOf(s); i >= 0; i = text.indexOf(s, i + 1))
    if (i === 0 || text.charCodeAt(i - 1) === 10) return true;
  return false;
}

/**
 * {@link CROSS_DOCUMENT_SYNTAX} in `text`. The regex runs only when a line can start with `%` or `...` (the substring
 * searches are several times faster than the regex on megabytes that hold neither).
 */
function hasCrossDocumentSyntax(text: string): boolean {
  const possible = someLineStartsWith(text, '%') || someLineStartsWith(text, '...') || otherLineTerminators(text);
  return possible && CROSS_DOCUMENT_SYNTAX.test(text);
}

/** The objects of one parsed document value: `List` kinds expanded, non-objects and AgentPlane descriptors skipped. */
function objectsOf(docs: readonly unknown[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const value of docs) {
    if (!isKubeObject(value) || value.apiVersion.startsWith(`${OWN_GROUP}/`)) continue;
    if (value.kind.endsWith('List') && Array.isArray(value.items)) appendAll(out, value.items.filter(isKubeObject));
    else out.push(value);
  }
  return out;
}

/**
 * js-yaml's `loadAll`, with errors turned into {@link ManifestParseError}; `lineOffset` gives the text's first line in
 * the file (0-based), asked only for an error.
 */
function load(file: string, text: string, lineOffset: () => number): unknown[] {
  try {
    return loadAll(text, undefined, { schema: CORE_SCHEMA, filename: file });
  } catch (err) {
    if (!(err instanceof YAMLException)) throw err;
    const line = err.mark.line + lineOffset() + 1;
    throw new ManifestParseError(
      file,
      `${err.reason} at line ${line}, column ${err.mark.column + 1}`,
      line,
      err.mark.column + 1,
    );
  }
}

/** A JSON file through JSON.parse (several times faster than YAML); js-yaml only for what JSON.parse refuses, which also gives the error position. */
function loadJson(file: string, text: string, lineOffset: () => number): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch {
    return load(file, text, lineOffset);
  }
}

/**
 * Where the documents of `text` start: 0 (what precedes the first `---`), then each document-start line
 * ({@link DOCUMENT_START}); found with indexOf when `\n` is the only line terminator, else with the regex.
 */
function documentStarts(text: string): number[] {
  const starts = [0];
  if (otherLineTerminators(text)) {
    for (const m of text.matchAll(DOCUMENT_START)) if (m.index > 0) starts.push(m.index);
    return starts;
  }
  for (let i = text.indexOf('\n---'); i >= 0; i = text.indexOf('\n---', i + 4)) {
    const c = text.charCodeAt(i + 4);
    if (Number.isNaN(c) || c === 32 || c === 9 || c === 10) starts.push(i + 1);
  }
  return starts;
}

/** The first line (0-based) of each document starting at `starts` in `text`. */
function firstLines(text: string, starts: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 0;
  let at = 0;
  for (const start of starts) {
    for (let j = text.indexOf('\n', at); j >= 0 && j < start; j = text.indexOf('\n', j + 1)) line++;
    lines.push(line);
    at = start;
  }
  return lines;
}

/** A document of a file whose first line is counted on first read (most documents are never parsed, or parse). */
class FileDocument implements ManifestDocument {
  declare readonly environment?: string;
  constructor(
    readonly file: string,
    readonly text: string,
    private readonly index: number,
    private readonly lines: () => readonly number[],
    environment: string | undefined,
  ) {
    if (environment !== undefined) this.environment = environment;
  }
  get line(): number {
    return this.lines()[this.index]!;
  }
}

/**
 * The Kubernetes objects in one YAML or JSON text; `List` kinds are expanded; other documents and AgentPlane
 * descriptors are skipped. Parsed with js-yaml's YAML 1.2 core schema (no timestamps, no merge keys: every scalar is
 * read as the API server's JSON would be), about ten times faster than the yaml package on large CRDs (synth still
 * writes with yaml 2). With `cache`, each document is looked up by its text first (see {@link DocumentCache}).
 * @throws {ManifestParseError} naming file, line and column, never quoting the content (it may hold Secret values).
 */
export function parseManifests(file: string, text: string, cache?: DocumentCache): KubeObject[] {
  if (cache === undefined || hasCrossDocumentSyntax(text)) return objectsOf(load(file, text, () => 0));
  const out: KubeObject[] = [];
  for (const doc of splitDocuments(file, text)) appendAll(out, parseDocument(doc, cache));
  return out;
}

/**
 * One document of a manifest file, not parsed yet: `text` from its `---` line to the next, `line` its first line in
 * `file` (0-based). A file with directives or `...` markers is one document (see `CROSS_DOCUMENT_SYNTAX`).
 */
export interface ManifestDocument {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  /** The environment (subdirectory holding synth's `environment.json`) the file belongs to, if any. */
  readonly environment?: string;
}

/**
 * Where parses of large documents (over {@link LARGE_DOCUMENT_CHARS}: CRDs) are kept between processes, or undefined
 * (the default: none). See {@link useParseCache}.
 */
let parseCacheRoot: string | undefined;
const LARGE_DOCUMENT_CHARS = 64 * 1024;
const JS_YAML_VERSION = (createRequire(import.meta.url)('js-yaml/package.json') as { version: string }).version;

/**
 * Keeps the parsed value of each YAML document over 64 KiB (the CRDs of a synthesized install, ~0.4 MiB each, which a
 * diff parses for the defaults of a changed object) as a derived entry under `<root>/.derived/diff-parse/` (see
 * src/releases/derived.ts), keyed by the sha256 of the document's exact text, the js-yaml version and the schema, so a
 * later process reads it with JSON.parse. Only documents that parsed are stored: a parse error is always the parser's.
 * `undefined` turns it off.
 */
export function useParseCache(root: string | undefined): void {
  parseCacheRoot = root;
}

/**
 * A YAML document's values: a small one through the block-layout reader (js-yaml when it declines), a large one through
 * the parse cache when it is on, else js-yaml.
 */
function loadDocument(file: string, text: string, lineOffset: () => number): unknown[] {
  if (text.length <= LARGE_DOCUMENT_CHARS) return readBlockDocument(text) ?? load(file, text, lineOffset);
  const root = parseCacheRoot;
  if (root === undefined) return load(file, text, lineOffset);
  const key = `diff-parse:${sha256Hex(text)}:js-yaml@${JS_YAML_VERSION}:core`;
  const cached = readDerived(root, 'diff-parse', key);
  if (Array.isArray(cached)) return cached;
  const values = load(file, text, lineOffset);
  writeDerived(root, 'diff-parse', key, values);
  return values;
}

/** The objects of one document, through `cache` when given. @throws {ManifestParseError} as {@link parseManifests}. */
export function parseDocument(
  doc: Pick<ManifestDocument, 'file' | 'line' | 'text'>,
  cache?: DocumentCache,
): readonly KubeObject[] {
  let objects = cache?.get(doc.text);
  if (objects === undefined) {
    const line = (): number => doc.line;
    objects = objectsOf(
      doc.file.endsWith('.json') ? loadJson(doc.file, doc.text, line) : loadDocument(doc.file, doc.text, line),
    );
    cache?.set(doc.text, objects);
  }
  return objects;
}

/** The documents of one file's text (see {@link ManifestDocument}). */
export function splitDocuments(file: string, text: string, environment?: string): ManifestDocument[] {
  const env = environment === undefined ? {} : { environment };
  if (hasCrossDocumentSyntax(text)) return [{ file, line: 0, text, ...env }];
  const starts = documentStarts(text);
  let lines: number[] | undefined;
  const linesOnce = (): number[] => (lines ??= firstLines(text, starts));
  return starts.map(
    (s, i) => new FileDocument(file, text.slice(s, starts[i + 1] ?? text.length), i, linesOnce, environment),
  );
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.(ya?ml|json)$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** How BASE/HEAD are read. */
export interface ReadOptions {
  /**
   * Shared parse results; give both sides the same cache (see {@link DocumentCache}).
   * @default - none
   */
  readonly documents?: DocumentCache;
}

/**
 * A manifest set read from files: its documents, and `objects` parsed from them on first use (so a diff of two such
 * sets parses only the documents that differ, see compare.ts; a parse error is thrown where `objects` is first read).
 */
export function documentSet(
  label: string,
  documents: readonly ManifestDocument[],
  cache?: DocumentCache,
): ManifestSet & { readonly documents: readonly ManifestDocument[] } {
  let parsed: { objects: KubeObject[]; environments: Array<string | undefined> } | undefined;
  const parse = (): NonNullable<typeof parsed> => {
    if (parsed !== undefined) return parsed;
    const objects: KubeObject[] = [];
    const environments: Array<string | undefined> = [];
    for (const doc of documents) {
      for (const obj of parseDocument(doc, cache)) {
        objects.push(obj);
        environments.push(doc.environment);
      }
    }
    return (parsed = { objects, environments });
  };
  return {
    label,
    documents,
    get objects() {
      return parse().objects;
    },
    get environments() {
      const envs = parse().environments;
      return envs.some((e) => e !== undefined) ? envs : undefined;
    },
  };
}

/**
 * Every Kubernetes object under `dir` (recursive; `.yaml`, `.yml`, `.json`; files in path order, documents in file order).
 * A subdirectory holding synth's `environment.json` is one environment: its objects are keyed `<subdir>:<object key>`.
 * The files are read now and parsed when `objects` is first read (see {@link documentSet}).
 * @throws {ManifestParseError} a file that does not parse (when `objects` is read).
 */
export async function readManifestDir(
  dir: string,
  label = dir,
  opts: ReadOptions = {},
): Promise<ManifestSet & { readonly documents: readonly ManifestDocument[] }> {
  const files = await listFiles(dir);
  const envDirs = [
    ...new Set(files.filter((f) => path.basename(f) === 'environment.json').map((f) => path.dirname(f))),
  ].filter((d) => d !== path.resolve(dir) && d !== dir);
  const texts = await Promise.all(files.map((f) => readFile(f, 'utf8')));
  const documents: ManifestDocument[] = [];
  files.forEach((file, i) => {
    const envDir = envDirs.find((d) => file.startsWith(`${d}${path.sep}`));
    appendAll(
      documents,
      splitDocuments(
        path.relative(dir, file) || file,
        texts[i]!,
        envDir === undefined ? undefined : path.relative(dir, envDir),
      ),
    );
  });
  return documentSet(label, documents, opts.documents);
}

export interface GitRefOptions extends ReadOptions {
  /**
   * The repository.
   * @default - the current directory
   */
  readonly repo?: string;
  /**
   * The synth command run inside the ref's worktree, as argv; `{out}` is replaced by the output directory.
   * @default ['node', 'bin/agentplane.js', 'synth', '--all-examples', '--out', '{out}'] (the ref's own CLI, so the ref's code decides the output)
   */
  readonly synthCommand?: readonly string[];
}

/** Whether `ref` names a commit of the repository. */
export async function isGitRef(ref: string, repo = process.cwd()): Promise<boolean> {
  try {
    await run('git', ['-C', repo, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Synthesizes the repository at `ref` in a temporary detached worktree (sharing this checkout's node_modules) and
 * reads the output. The worktree is removed afterwards, also on failure.
 * @throws {ManifestSourceError} the worktree cannot be made or synth fails (stderr tail in the message).
 */
export async function readManifestsAtGitRef(ref: string, opts: GitRefOptions = {}): Promise<ManifestSet> {
  const repo = path.resolve(opts.repo ?? process.cwd());
  const tmp = await mkdtemp(path.join(tmpdir(), 'agentplane-ref-'));
  const tree = path.join(tmp, 'tree');
  const out = path.join(tmp, 'out');
  const argv = (opts.synthCommand ?? DEFAULT_SYNTH_COMMAND).map((a) => a.replace('{out}', out));
  try {
    await run('git', ['-C', repo, 'worktree', 'add', '--detach', tree, ref]);
    await symlink(path.join(repo, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
    // The default runs an AgentPlane checkout's own CLI; a project of the user's says how it synthesizes.
    const noCli = async (): Promise<boolean> =>
      (await stat(path.join(tree, DEFAULT_SYNTH_COMMAND[1]!)).catch(() => undefined)) === undefined;
    if (opts.synthCommand === undefined && (await noCli()))
      throw new ManifestSourceError(
        `${ref} has no ${DEFAULT_SYNTH_COMMAND[1]}: the default synth command (${argv.join(' ')}) works only in an AgentPlane checkout`,
        `say how this repository synthesizes, e.g. --synth-command "npx --no-install agentplane synth environment.ts --out {out}"`,
        undefined,
        'SynthCommandNeeded',
      );
    try {
      await run(argv[0]!, argv.slice(1), { cwd: tree, maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      const stderr = String((err as { stderr?: unknown }).stderr ?? '')
        .trim()
        .split('\n')
        .slice(-5)
        .join('\n');
      throw new ManifestSourceError(
        `synth of git ref ${ref} failed (${argv.join(' ')}): ${stderr}`,
        `check that ${ref} synthesizes: git checkout ${ref} && ${argv.join(' ')}`,
        { ref, command: argv, stderr },
      );
    }
    return await readManifestDir(out, ref, opts);
  } finally {
    await run('git', ['-C', repo, 'worktree', 'remove', '--force', tree]).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Resolves a BASE/HEAD argument: an existing directory, else a git ref of `repo`.
 * @throws {ManifestSourceError} neither.
 */
export async function readManifestSource(arg: string, opts: GitRefOptions = {}): Promise<ManifestSet> {
  const info = await stat(arg).catch(() => undefined);
  if (info?.isDirectory()) return readManifestDir(arg, arg, opts);
  if (await isGitRef(arg, opts.repo)) return readManifestsAtGitRef(arg, opts);
  throw new ManifestSourceError(
    `"${arg}" is neither a directory nor a git ref of this repository`,
    'pass a synthesized output directory (e.g. dist/) or a commit, branch or tag',
  );
}
