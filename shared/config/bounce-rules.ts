// config/bounce-rules.yaml: how a permanent (5xx) reply is classified, hard or soft: ordered rules, first match wins.
import { z } from 'zod';

/** An enhanced status code pattern: class.subject.detail, `x` for any number (5.7.x). */
const statusCodePattern = z.string().regex(/^[245]\.(\d{1,3}|x)\.(\d{1,3}|x)$/i, 'expected an enhanced status code such as 5.1.1 or 5.7.x');
export const bounceRulesSchema = z.strictObject({
  rules: z.array(
    z
      .strictObject({
        code: statusCodePattern.optional(),
        text: z
          .string()
          .min(1)
          .refine((t) => {
            try {
              new RegExp(t, 'i');
              return true;
            } catch {
              return false;
            }
          }, 'expected a regular expression')
          .optional(),
        class: z.enum(['hard', 'soft']),
      })
      .refine((r) => r.code !== undefined || r.text !== undefined, 'a rule needs code, text or both'),
  ),
  default: z.enum(['hard', 'soft']),
});

export type BounceRulesConfig = z.infer<typeof bounceRulesSchema>;
