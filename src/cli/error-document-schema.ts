/** The zod schema of the error document a failing command prints under `-o json|yaml` (./error-document.ts). */
import { z } from 'zod';
import type { Assert, SameType } from '../model/same-type.js';
import { ERROR_API_VERSION, type ErrorDocument } from './error-document.js';

/** Strict, so an added or renamed key is a new `apiVersion`. */
export const ErrorDocumentSchema = z
  .object({
    apiVersion: z.literal(ERROR_API_VERSION),
    kind: z.literal('Error'),
    command: z.string(),
    reason: z.string(),
    exitCode: z.number().int(),
    message: z.string(),
    hint: z.string().exactOptional(),
    details: z.record(z.string(), z.unknown()),
  })
  .strict()
  .readonly();

export type ErrorDocumentSchemaMatches = Assert<SameType<z.infer<typeof ErrorDocumentSchema>, ErrorDocument>>;
