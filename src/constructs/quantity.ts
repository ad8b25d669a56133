/**
 * The one quantity grammar of construct props and pod specs. Its own module because it holds a zod schema: the
 * public type declarations (resources.ts's types among them) must not reach zod's.
 */
import { z } from 'zod';

/**
 * A non-negative Kubernetes quantity: the `pattern` the pinned CRDs give every quantity field
 * (`k8s/crds/extensions.agents.x-k8s.io_sandboxtemplates.yaml@v0.5.6`) without the `-` sign, since requests,
 * limits, overhead and sizes are never negative: a number, then a binary suffix, a decimal suffix or an exponent.
 */
export const QUANTITY =
  /^\+?(?<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(?<binary>[KMGTPE]i)|(?<decimal>[numkMGTPE])|[eE](?<exponent>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)))?$/;

/** The zod schema of a quantity prop (see {@link QUANTITY}). */
export const QuantitySchema = z.string().regex(QUANTITY, 'must be a Kubernetes quantity such as 250m, 1.5 or 256Mi');
