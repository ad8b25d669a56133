/**
 * Typed errors of the releases layer. Each names what is wrong, shows the value and says what to do (`hint`).
 * `reason` is a stable CamelCase code for programs; a pinned release that cannot be used exits with the `release` category.
 */
import type { ErrorReason } from '../model/error-reasons.js';
import { AgentPlaneError, type ExitCategory } from '../model/errors.js';
import { describeLockDifference, type LockDifference } from './lock-difference.js';

/** Base of every releases-layer error. `reason`: stable CamelCase code; `hint`: what the user should do. */
export class ReleaseError extends AgentPlaneError {
  readonly reason: ErrorReason;
  readonly exitCategory: ExitCategory = 'release';
  override readonly hintInMessage = true;
  readonly hint: string;
  constructor(reason: ErrorReason, message: string, hint: string, options?: { cause?: unknown }) {
    super(`${message}\n  hint: ${hint}`, { ...options, summary: message });
    this.reason = reason;
    this.hint = hint;
  }
}

/** The tag is not one of the supported releases. `supported` lists the tags the catalog holds. */
export class UnknownReleaseError extends ReleaseError {
  readonly tag: string;
  readonly supported: readonly string[];
  constructor(tag: string, supported: readonly string[]) {
    super(
      'UnknownRelease',
      `unknown Agent Sandbox release ${JSON.stringify(tag)}: supported releases are ${supported.join(', ')}`,
      `pick one of ${supported.join(', ')}; a release this version of cdk8s-agentplane does not know needs a newer cdk8s-agentplane`,
    );
    this.tag = tag;
    this.supported = supported;
  }
}

/** Where pinned files were read from: a mirror directory or the upstream repository. */
export type SourceOrigin = 'mirror' | 'upstream';

/** A file's bytes do not hash to the pinned sha256 (hex). `source` says where the bytes came from. */
export class ChecksumMismatchError extends ReleaseError {
  readonly file: string;
  readonly expected: string;
  readonly actual: string;
  readonly source: string;
  readonly origin: SourceOrigin | undefined;
  constructor(file: string, expected: string, actual: string, source = 'unknown source', origin?: SourceOrigin) {
    super(
      'ChecksumMismatch',
      `checksum mismatch for ${file} from ${source}: expected sha256 ${expected}, got ${actual}`,
      origin === 'mirror'
        ? 'the mirror holds different bytes than the pinned release: restore the original file (never edit pinned release files), ' +
            'or point --mirror / AGENTPLANE_MIRROR at an intact mirror'
        : 'the downloaded bytes differ from the pinned release (proxy rewriting, or upstream history changed): ' +
            'use a verified mirror (--mirror DIR or AGENTPLANE_MIRROR) and report the difference',
    );
    this.file = file;
    this.expected = expected;
    this.actual = actual;
    this.source = source;
    this.origin = origin;
  }
}

/** The source answered, but does not have the file (mirror: no such file; upstream: HTTP 404). */
export class MissingFileError extends ReleaseError {
  readonly file: string;
  readonly source: string;
  readonly origin: SourceOrigin;
  constructor(file: string, source: string, origin: SourceOrigin) {
    super(
      'MissingFile',
      `pinned file ${file} is missing from ${source}`,
      origin === 'mirror'
        ? 'complete the mirror (layout <mirror>/<tag>/<path>, as `agentplane mirror pull` writes it) or point --mirror / AGENTPLANE_MIRROR at a complete one'
        : 'the pinned commit or path does not resolve upstream; use a mirror that holds the release (--mirror DIR or AGENTPLANE_MIRROR)',
    );
    this.file = file;
    this.source = source;
    this.origin = origin;
  }
}

/** How a release source failed to answer: an HTTP status outside 2xx, no answer in time, the connection, or I/O. */
export type SourceFailure = 'http-status' | 'timeout' | 'connection' | 'io' | 'missing-directory';

/**
 * The source could not be reached at all (missing mirror directory, connection refused, timeout, HTTP 5xx).
 * `failure` is the kind; `status` the HTTP status it answered, `timeoutMs` the wait it did not answer within, `code` the
 * system error code (`ECONNREFUSED`, …) when there is one.
 */
export class SourceUnreachableError extends ReleaseError {
  readonly source: string;
  readonly failure: SourceFailure;
  readonly status: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly code: string | undefined;
  constructor(
    source: string,
    cause: unknown,
    details: { failure?: SourceFailure; status?: number; timeoutMs?: number } = {},
  ) {
    super(
      'SourceUnreachable',
      `cannot reach release source ${source}: ${describeCause(cause)}`,
      'check the network or use a local mirror (--mirror DIR or AGENTPLANE_MIRROR); already verified files are reused from the cache',
      { cause },
    );
    this.source = source;
    this.code = causeCode(cause);
    this.status = details.status;
    this.timeoutMs = details.timeoutMs;
    this.failure =
      details.failure ?? (details.status !== undefined ? 'http-status' : this.code !== undefined ? 'connection' : 'io');
  }
}

/** A kind/version is not served by a release (e.g. v1beta1 on v0.4.6). */
export class VersionNotServedError extends ReleaseError {
  constructor(
    readonly tag: string,
    readonly kind: string,
    readonly version: string,
    readonly served: readonly string[],
  ) {
    super(
      'VersionNotServed',
      `${kind} ${version} is not served by release ${tag} (served: ${served.join(', ') || 'none'})`,
      `write ${kind} objects as ${served[0] ?? 'a served version'} for ${tag}, or pin a release that serves ${version}`,
    );
  }
}

/** A pinned file could not be parsed as YAML. */
export class ReleaseParseError extends ReleaseError {
  constructor(file: string, detail: string) {
    super(
      'ReleaseFileUnparsable',
      `pinned file ${file} is not valid YAML: ${detail}`,
      'report this: a verified pinned file should always parse',
    );
  }
}

/** One problem of a lock file: the field at fault (`(root)` for the file itself) and the kind of problem. */
export interface LockIssue {
  readonly field: string;
  /** `NotJson`, `UnrecognizedKey`, or the schema validator's issue code (`invalid_format`, `invalid_type`, …). */
  readonly code: string;
}

/** The lock file exists but its content is not a valid lock. */
export class LockFileInvalidError extends ReleaseError {
  override readonly exitCategory: ExitCategory = 'invalid';
  readonly path: string;
  constructor(
    path: string,
    detail: string,
    readonly issues: readonly LockIssue[],
  ) {
    super(
      'LockFileInvalid',
      `lock file ${path} is not valid: ${detail}`,
      `fix the file by hand, or delete ${path} and synthesize again to rewrite it`,
    );
    this.path = path;
  }
}

/** The environment and the lock file at `lockFile` disagree; `differences` names each field and both values. */
export class LockMismatchError extends ReleaseError {
  override readonly exitCategory: ExitCategory = 'lock-mismatch';
  /** Environments the lock holds that the module does not define (the lock is another module's); empty when none. */
  readonly otherEnvironments: readonly string[];
  /**
   * @param environments the environments the module being synthesized defines, when known
   * @param hint what to do instead of the default advice (`--update-lock`), e.g. for `app.synth()`
   */
  constructor(
    readonly lockFile: string,
    readonly differences: readonly LockDifference[],
    environments?: readonly string[],
    hint?: string,
  ) {
    const others = environments === undefined ? [] : lockedOnlyEnvironments(differences, environments);
    super(
      'LockMismatch',
      `the environment does not match ${lockFile}:\n${differences.map((d) => `  - ${describeLockDifference(d)}`).join('\n')}`,
      others.length > 0
        ? `the lock holds environment(s) ${others.join(', ')} that this module does not define: it is another module's lock (one lock per directory by default); give this module its own with --lock <file> or its own directory, or, if those environments were removed on purpose, synthesize again with --update-lock`
        : (hint ?? 'if the change is intended, synthesize again with --update-lock and commit the new lock file'),
    );
    this.otherEnvironments = others;
  }
}

/** Environments the lock's `images` (keyed `<environment>/<role>`) name that the module does not define. */
function lockedOnlyEnvironments(differences: readonly LockDifference[], environments: readonly string[]): string[] {
  const defined = new Set(environments);
  const locked = differences
    .filter((d) => d.field === 'images' && d.declared === undefined && d.key !== undefined)
    .map((d) => d.key!.split('/')[0]!);
  return [...new Set(locked)].filter((e) => !defined.has(e)).sort();
}

/** The system error code of a cause or of its own cause (Node's fetch wraps it); read by shape, as errors may come from another realm. */
function causeCode(cause: unknown): string | undefined {
  if (typeof cause !== 'object' || cause === null) return undefined;
  const c = cause as { code?: unknown; cause?: { code?: unknown } };
  const code = c.code ?? (typeof c.cause === 'object' && c.cause !== null ? c.cause.code : undefined);
  return typeof code === 'string' ? code : undefined;
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = causeCode(cause);
    return code !== undefined ? `${cause.message} (${code})` : cause.message;
  }
  return String(cause);
}
