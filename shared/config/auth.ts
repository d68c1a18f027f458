// config/auth.yaml: sessions, passwords, API key use, two-factor, password reset, sign-in throttling and team invites.
import { z } from 'zod';

export const authSchema = z.strictObject({
  session_ttl_seconds: z.number().int().min(60),
  bcrypt_cost: z.number().int().min(4).max(15),
  min_password_length: z.number().int().min(8).max(64),
  key_last_used_write_interval_seconds: z.number().int().min(1),
  credential_cache_ms: z.number().int().min(0).max(60000),
  team_invite_ttl_hours: z
    .number()
    .int()
    .min(1)
    .max(24 * 30),
  /** The plan a tenant that registers itself starts on (a row of plans; checked at start-up). */
  registration_plan: z
    .string()
    .regex(/^[a-z0-9_-]{1,64}$/)
    .default('free'),
  totp: z.strictObject({
    session_ttl_seconds: z.number().int().min(30).max(3600),
    window_steps: z.number().int().min(0).max(10),
  }),
  password_reset: z.strictObject({
    token_ttl_seconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 86_400),
    min_response_ms: z.number().int().min(0).max(10_000),
    max_emails_per_hour: z.number().int().min(1).max(1000),
  }),
  login_protection: z.strictObject({
    window_seconds: z.number().int().min(1).max(86_400),
    max_failures_per_account: z.number().int().min(1).max(10_000),
    max_failures_per_address: z.number().int().min(1).max(100_000),
    max_failures_per_submission_address: z.number().int().min(1).max(100_000),
    lockout_seconds: z.number().int().min(1).max(86_400),
    max_lockout_seconds: z.number().int().min(1).max(86_400),
  }),
});

export type AuthConfig = z.infer<typeof authSchema>;
