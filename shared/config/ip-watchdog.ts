// config/ip-watchdog.yaml: the quarantine cool-down, how long processes cache the quarantine state, and the block rules on delivery replies.
import { z } from 'zod';

const regex = z
  .string()
  .min(1)
  .max(1000)
  .refine((t) => {
    try {
      new RegExp(t, 'i');
      return true;
    } catch {
      return false;
    }
  }, 'expected a regular expression');

/** 5xx, 421, 55x: three places, each a digit or x, the first 4 or 5 (only refusals can be blocks). */
const replyPattern = z
  .union([z.string(), z.number().int()])
  .transform(String)
  .pipe(z.string().regex(/^[45][0-9x][0-9x]$/i, 'expected a reply code pattern such as 5xx or 421'));

/** 5.7.x, or a range of details within one class.subject: 5.7.606-5.7.649. */
const enhancedPattern = z.string().refine((v) => {
  if (/^[45]\.(\d{1,3}|x)\.(\d{1,3}|x)$/i.test(v)) return true;
  const range = /^([45])\.(\d{1,3})\.(\d{1,3})-([45])\.(\d{1,3})\.(\d{1,3})$/.exec(v);
  return range !== null && range[1] === range[4] && Number(range[2]) === Number(range[5]) && Number(range[3]) <= Number(range[6]);
}, 'expected an enhanced code pattern such as 5.7.x or a range such as 5.7.606-5.7.649');

export const ipWatchdogSchema = z.strictObject({
  cooldown_minutes: z
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 60),
  state_cache_ms: z.number().int().min(0).max(600_000),
  rules: z
    .array(
      z
        .strictObject({
          name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'expected a rule name (a-z, 0-9, _ and -)'),
          reply: replyPattern.optional(),
          enhanced: enhancedPattern.optional(),
          text: regex.optional(),
        })
        .refine((r) => r.enhanced !== undefined || r.text !== undefined, 'a rule needs enhanced, text or both'),
    )
    .max(200),
});

export type IpWatchdogConfig = z.infer<typeof ipWatchdogSchema>;
