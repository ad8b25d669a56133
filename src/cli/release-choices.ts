/**
 * The supported release tags, and the one check of a release named on the command line (`--to`, `--from`,
 * `--release`, `mirror pull <release...>`): an unknown tag is an {@link UnknownReleaseError} (exit 3, reason
 * `UnknownRelease`), as it is for `synth` when a module loads one, never a usage error.
 */
import { UnknownReleaseError } from '../releases/errors.js';
import { SUPPORTED_RELEASES } from '../releases/supported.js';

export const RELEASE_CHOICES: readonly string[] = SUPPORTED_RELEASES;

/** commander `argParser` of a release flag. @throws {UnknownReleaseError} for a tag that is not pinned. */
export function releaseTag(tag: string): string {
  if (!RELEASE_CHOICES.includes(tag)) throw new UnknownReleaseError(tag, RELEASE_CHOICES);
  return tag;
}
