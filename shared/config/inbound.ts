// config/inbound.yaml: the MX server, its plugins' settings and how long received mail is kept.
import { z } from 'zod';

export const inboundSchema = z.strictObject({
  server: z
    .strictObject({
      banner: z
        .string()
        .max(100)
        .regex(/^[\x20-\x7e]*$/, 'printable ASCII only'),
      max_clients: z.number().int().min(1).max(100_000),
      max_clients_per_address: z.number().int().min(1).max(100_000),
      socket_timeout_ms: z.number().int().min(1000).max(3_600_000),
      max_session_ms: z.number().int().min(1000).max(86_400_000),
      greeting_delay_ms: z.number().int().min(0).max(30_000),
      pregreet_wait_ms: z.number().int().min(0).max(30_000),
      pregreet_ttl_seconds: z
        .number()
        .int()
        .min(0)
        .max(30 * 86_400),
    })
    // The client is silent in the pause before the greeting, as it must be: the idle timeout would cut it.
    .refine(
      (s) => Math.max(s.greeting_delay_ms, s.pregreet_wait_ms) < s.socket_timeout_ms,
      'greeting_delay_ms and pregreet_wait_ms must be shorter than socket_timeout_ms',
    ),
  limits: z.strictObject({
    max_message_bytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024),
    max_recipients: z.number().int().min(1).max(10_000),
    max_line_length: z
      .number()
      .int()
      .min(78)
      .max(1024 * 1024)
      .nullable(),
  }),
  recipient_domains: z.strictObject({
    feedback_loop_local_part: z.string().regex(/^[a-z0-9][a-z0-9._+-]{0,63}$/, 'a lower-case local part (letters, digits, . _ + -)'),
  }),
  sender_auth: z.strictObject({
    timeout_ms: z.number().int().min(100).max(600_000),
    dns_cache_seconds: z.number().int().min(0).max(3600),
    dns_cache_entries: z.number().int().min(1).max(1_000_000),
    min_key_bits: z.union([z.literal(512), z.literal(768), z.literal(1024), z.literal(2048)]),
  }),
  store: z.strictObject({
    max_batch: z.number().int().min(1).max(1000),
  }),
  retention: z.strictObject({
    days: z.number().int().min(1).max(3650),
  }),
});

export type InboundConfig = z.infer<typeof inboundSchema>;
