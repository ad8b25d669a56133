/**
 * The derived-cache key of a verified file's parsed documents, in its own module so that the CRD schema model
 * (crd-schema.ts, loaded by every diff) does not load the release loader and its fetchers to build it.
 */
import { createRequire } from 'node:module';

/** The yaml library's version: part of the derived-cache key, so a new parser never reuses an old parser's output. */
const YAML_VERSION = (createRequire(import.meta.url)('yaml/package.json') as { version: string }).version;

/** Derived-cache key of the parsed documents of a file whose verified bytes have this sha256. */
export function parsedDocumentsKey(sha256: string): string {
  return `yaml-documents/1 yaml@${YAML_VERSION} sha256:${sha256}`;
}
