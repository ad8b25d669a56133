/** Lookup of the supported releases in the generated catalog. */
import { CATALOG } from './catalog.js';
import { UnknownReleaseError } from './errors.js';
import type { ReleaseFacts, ReleaseTag } from './types.js';

/** The supported Agent Sandbox releases, oldest first: v0.4.6, v0.5.0, v0.5.6, v1.0.3. */
export const SUPPORTED_RELEASES: readonly ReleaseTag[] = Object.freeze(Object.keys(CATALOG) as ReleaseTag[]);

/** Whether `tag` is a supported release tag. */
export function isReleaseTag(tag: string): tag is ReleaseTag {
  return Object.prototype.hasOwnProperty.call(CATALOG, tag);
}

/**
 * The pinned facts of one release (commit, files, images, CRD versions).
 * @throws UnknownReleaseError when `tag` is not in SUPPORTED_RELEASES.
 */
export function releaseFacts(tag: string): ReleaseFacts {
  if (!isReleaseTag(tag)) throw new UnknownReleaseError(tag, SUPPORTED_RELEASES);
  return CATALOG[tag];
}
