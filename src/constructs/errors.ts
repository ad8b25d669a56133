/**
 * Typed errors of the constructs layer. Every error names the construct path (`this.node.path`), shows the offending
 * value and says what to do (`hint`, also appended to the message).
 */

/** Base class: `path` is the construct path, `hint` what to do. */
export class ConstructError extends Error {
  readonly path: string;
  readonly hint: string;
  constructor(path: string, message: string, hint: string) {
    super(`${path}: ${message}\n  hint: ${hint}`);
    this.name = new.target.name;
    this.path = path;
    this.hint = hint;
  }
}

/** Props failed validation. `issues` are `field: problem (got value)` lines. */
export class ConstructPropsError extends ConstructError {
  readonly issues: readonly string[];
  constructor(path: string, construct: string, issues: readonly string[], hint?: string) {
    super(
      path,
      `invalid ${construct} props:\n${issues.map((i) => `    - ${i}`).join('\n')}`,
      hint ?? `fix the listed ${construct}Props fields (see the ${construct}Props docs for defaults and allowed values)`,
    );
    this.issues = issues;
  }
}

/** An image is not pinned: `latest*` tag, `ko://` placeholder, no tag or digest, or (when digests are required) no digest. */
export class UnpinnedImageError extends ConstructError {
  readonly image: string;
  constructor(path: string, where: string, image: string, reason: string) {
    super(
      path,
      `image ${JSON.stringify(image)} in ${where} is not pinned: ${reason}`,
      'pin every image by an immutable version tag and, where known, a digest (repo:tag@sha256:<64 hex>); never use latest or ko:// placeholders',
    );
    this.image = image;
  }
}

/** Two parts of an environment contradict each other (e.g. own NetworkPolicies and a Managed template). */
export class ConflictError extends ConstructError {}

/** A reference points at something the environment does not contain (a pool, a template). */
export class MissingReferenceError extends ConstructError {}

/** A setting the pinned release cannot honour (e.g. external certificates on v0.5.0, a router on v0.4.6). */
export class UnsupportedByReleaseError extends ConstructError {}
