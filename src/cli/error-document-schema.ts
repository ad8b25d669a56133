/** The zod schema of the error document a failing command prints under `-o json|yaml` (./error-document.ts). */
import { z } from 'zod';
import { ERROR_REASONS, type ErrorReason } from '../model/error-reasons.js';
import type { Assert, SameType } from '../model/same-type.js';
import { ERROR_API_VERSION, type ErrorDocument } from './error-document.js';
import { CLUSTER_FAILURE_REASONS, type DocumentReason } from './errors.js';

/** Every code the document's `reason` may hold: an error's own, or a cluster failure's. */
const REASONS = [
  ...(Object.keys(ERROR_REASONS) as ErrorReason[]),
  ...(Object.keys(CLUSTER_FAILURE_REASONS) as (keyof typeof CLUSTER_FAILURE_REASONS)[]),
] as [DocumentReason, ...DocumentReason[]];

/** Strict, so an added or renamed key is a new `apiVersion`. */
export const ErrorDocumentSchema = z
  .object({
    apiVersion: z.literal(ERROR_API_VERSION),
    kind: z.literal('Error'),
    command: z.string(),
    reason: z.enum(REASONS),
    exitCode: z.number().int(),
    message: z.string(),
    hint: z.string().exactOptional(),
    details: z.record(z.string(), z.unknown()),
  })
  .strict()
  .readonly();

export type ErrorDocumentSchemaMatches = Assert<SameType<z.infer<typeof ErrorDocumentSchema>, ErrorDocument>>;
