// config/limits.yaml: rate limits per key and tenant, request limits (body, timeouts, headers, JSON depth), send and submission limits, API key activity,
// bulk imports.
import { z } from 'zod';

export const limitsSchema = z.strictObject({
  rate_limits: z.strictObject({
    per_minute: z.strictObject({
      send: z.number().int().positive(),
      read: z.number().int().positive(),
      write: z.number().int().positive(),
      bulk: z.number().int().positive(),
      public: z.number().int().positive(),
      tracking: z.number().int().positive(),
      app: z.number().int().positive(),
    }),
    tenant_default_per_sec: z.number().int().positive(),
    sync_interval_ms: z.number().int().min(10).max(1000),
    override_cache_ms: z.number().int().min(0).max(60000),
  }),
  request: z
    .strictObject({
      body_limit_bytes: z.number().int().min(1024),
      timeout_ms: z.number().int().min(100).max(3_600_000),
      headers_timeout_ms: z.number().int().min(100).max(3_600_000),
      keep_alive_timeout_ms: z.number().int().min(100).max(3_600_000),
      max_header_bytes: z.number().int().min(1024).max(1_048_576),
      max_json_depth: z.number().int().min(2).max(1000),
    })
    .refine((r) => r.headers_timeout_ms <= r.timeout_ms, { message: 'must not exceed timeout_ms', path: ['headers_timeout_ms'] }),
  send: z.strictObject({
    max_subject_length: z.number().int().min(1).max(998),
    max_body_bytes: z.number().int().min(1024),
    max_attachments: z.number().int().min(0).max(1000),
    max_attachment_bytes: z.number().int().min(0),
    max_headers: z.number().int().min(0).max(1000),
    max_message_bytes: z.number().int().min(1024),
  }),
  submission: z.strictObject({
    max_recipients: z.number().int().min(1).max(1000),
    max_auth_failures_per_session: z.number().int().min(1).max(100),
  }),
  key_activity: z
    .strictObject({
      flush_interval_ms: z.number().int().min(100).max(60_000),
      retention_days: z.number().int().min(31).max(400),
      suspicious: z.strictObject({
        auth_failure_window_minutes: z.number().int().min(1).max(1440),
        auth_failure_threshold: z.number().int().min(1),
        new_address_recent_days: z.number().int().min(1).max(7),
        new_address_lookback_days: z.number().int().min(1).max(23),
        error_rate_window_minutes: z.number().int().min(1).max(1440),
        error_rate_baseline_days: z.number().int().min(1).max(30),
        error_rate_min_requests: z.number().int().min(1),
        error_rate_min: z.number().min(0).max(1),
        error_rate_factor: z.number().min(1).max(100),
      }),
    })
    .refine(
      (a) => a.suspicious.new_address_recent_days + a.suspicious.new_address_lookback_days <= a.retention_days,
      'suspicious.new_address_recent_days + new_address_lookback_days must not exceed retention_days',
    ),
  imports: z
    .strictObject({
      max_file_bytes: z.number().int().min(1024),
      chunk_bytes: z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 * 1024),
      upload_timeout_ms: z.number().int().min(1000),
      upload_idle_timeout_ms: z.number().int().min(100),
      max_record_bytes: z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 * 1024),
      batch_size: z.number().int().min(1).max(10_000),
      slice_seconds: z.number().int().min(1).max(3600),
      job_expire_seconds: z.number().int().min(1).max(86_400),
      workers: z.number().int().min(0).max(16),
      per_tenant_in_progress: z.number().int().min(1).max(100),
    })
    .refine((i) => i.slice_seconds < i.job_expire_seconds, { message: 'must be below job_expire_seconds', path: ['slice_seconds'] }),
});

export type LimitsConfig = z.infer<typeof limitsSchema>;
