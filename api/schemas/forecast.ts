// The send forecast of a campaign (shared/campaigns/forecast.ts), as the send answer and GET /campaigns/{id}/forecast show it.
import { z } from 'zod';

export const sendForecast = z
  .object({
    mode: z.enum(['live', 'test']).describe("test: a test key's send, simulated: nothing is counted and all goes today"),
    recipients: z
      .number()
      .int()
      .describe("Recipients in all: the fixed recipients once the fan-out has them, else the target now (active list members, or the segment's matches)"),
    remaining: z.number().int().describe('Recipients not sent or skipped yet'),
    today: z.number().int().describe('How many of them go out today (UTC) under the warm-up allowance and the monthly quota'),
    limited_by: z.enum(['warmup', 'domain_paused', 'quota']).nullable().describe('What holds the rest back today; null when all of it goes today'),
    warmup: z
      .object({
        domain: z.string().describe("The sending domain of the campaign's From address"),
        tier: z.number().int(),
        daily_cap: z.number().int().describe('Sends a day at this tier'),
        sent_today: z.number().int().describe('Sent from the domain today (UTC) so far, transactional mail included'),
        paused: z.boolean().describe("The domain's warm-up is paused: nothing goes until a super-admin resumes it"),
      })
      .nullable()
      .describe("null for a test key's send"),
    quota: z.object({
      monthly_cap: z.number().int(),
      used: z.number().int().describe('Sends counted this UTC month'),
      resets_at: z.string().describe("When the next month's quota starts (RFC 3339)"),
    }),
    days: z
      .array(z.object({ date: z.string().describe('UTC day, YYYY-MM-DD'), sends: z.number().int() }))
      .describe('Sends per UTC day from today, the first 31 sending days'),
    rest_starts_at: z
      .string()
      .nullable()
      .describe('When what does not go today starts going (RFC 3339); null when nothing waits or nothing can be promised (a paused domain)'),
    completes_on: z.string().nullable().describe('The UTC day the last recipient goes; null beyond ten years or while the domain is paused'),
  })
  .describe(
    'Assumes the tier holds and nothing else sends from the domain or the tenant: the auto-ramp may promote the domain after healthy days, ' +
      'transactional mail takes from the same counters, and suppressed or unsubscribed recipients are skipped without counting.',
  );
