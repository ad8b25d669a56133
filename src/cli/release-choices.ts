/** The supported release tags, for commander's `.choices()` on `--to`, `--from`, `--release` (src/releases/supported.ts). */
import { SUPPORTED_RELEASES } from '../releases/supported.js';

export const RELEASE_CHOICES: readonly string[] = SUPPORTED_RELEASES;
