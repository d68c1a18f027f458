// The response envelopes every route answers with, as zod schemas (and so in the OpenAPI document).
import { z } from 'zod';

export const errorEnvelope = z
  .object({
    ok: z.literal(false),
    error: z.string().describe('Stable error slug, e.g. validation_error'),
    message: z.string().describe('Human-readable hint; may change between releases'),
  })
  .meta({ id: 'Error' });

/** The error answer of an export whose selection holds more rows than it may: the envelope, the bound and the count. */
export const overLimitError = errorEnvelope
  .extend({
    limit: z.number().int().describe('The most rows the export holds'),
    row_count: z.number().int().describe('How many rows the selection matched'),
  })
  .meta({ id: 'OverLimitError' });

export function okEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ ok: z.literal(true), data }).describe('Success');
}

export function listEnvelope<T extends z.ZodType>(item: T) {
  return z
    .object({
      ok: z.literal(true),
      data: z.array(item),
      next_cursor: z.string().nullable().describe('Pass as ?after= to get the next page; null on the last page'),
      total: z.number().int().describe('Number of items matching the query'),
    })
    .describe('Success: one page of items');
}
