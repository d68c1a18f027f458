// config/dkim.yaml: DKIM key size, selector prefix, the rotator interval and how long a replaced key stays published.
import { z } from 'zod';

export const dkimSchema = z.strictObject({
  key_bits: z.union([z.literal(1024), z.literal(2048), z.literal(3072), z.literal(4096)]),
  selector_prefix: z.string().regex(/^[a-z][a-z0-9]{0,15}$/, 'lower-case letters and digits, starting with a letter'),
  rotator_interval_minutes: z
    .number()
    .int()
    .min(1)
    .max(1440)
    .refine((m) => (m < 60 && 60 % m === 0) || (m % 60 === 0 && 24 % (m / 60) === 0), 'must divide an hour, or be whole hours dividing a day'),
  retiring_grace_hours: z
    .number()
    .int()
    .min(0)
    .max(24 * 90),
  max_key_age_days: z.number().int().min(1).max(3650).nullable(),
});

export type DkimConfig = z.infer<typeof dkimSchema>;
