// config/dns.yaml: DNS look-up timeout and attempts, how often every domain is re-checked, and when unproven domain claims expire.
import { z } from 'zod';

export const dnsSchema = z.strictObject({
  timeout_ms: z.number().int().min(50).max(30000),
  tries: z.number().int().min(1).max(5),
  domain_recheck_hours: z
    .number()
    .int()
    .min(1)
    .max(24)
    .refine((h) => 24 % h === 0, 'must divide a day (1, 2, 3, 4, 6, 8, 12 or 24)'),
  claim_expiry_days: z.number().int().min(1).max(365),
});

export type DnsConfig = z.infer<typeof dnsSchema>;
