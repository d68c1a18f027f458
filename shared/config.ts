// The one place that reads process.env and config/: validates both with zod into a typed Config.
import { readFileSync, readdirSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { projectRoot } from './paths.js';

export const ALL_ROLES = ['api', 'mx', 'submission', 'outbound', 'scheduler'] as const;
export type Role = (typeof ALL_ROLES)[number];

/** A whole decimal number: z.coerce alone would take ' ' as 0 and '1e3' as 1000. */
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
const port = wholeNumber(0, 65535);
const boolFlag = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no']))
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const hostPort = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^\s:,]+)(:\d{1,5})?$/, 'expected ip or ip:port');
/** A DNS server: an IP address, optionally with a port (1.1.1.1, 127.0.0.1:5353, [::1]:53, ::1). */
const dnsServer = z.string().refine((v) => {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(v);
  if (bracketed) return isIP(bracketed[1]!) === 6 && Number(bracketed[2] ?? 53) <= 65535;
  if (isIP(v) !== 0) return true;
  const v4 = /^([\d.]+):(\d{1,5})$/.exec(v);
  return v4 !== null && isIP(v4[1]!) === 4 && Number(v4[2]) <= 65535;
}, 'expected an IP address or ip:port (a resolver is reached by address)');
const commaList = <T extends z.ZodType<string, string>>(item: T) =>
  z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(item));

const hostName = z
  .string()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/i, 'expected a host name')
  .transform((v) => v.toLowerCase());

/** The 32-byte master key from its hex or base64 text form, or undefined when it is neither. */
export function decodeMasterKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-f]{64}$/i.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return bytes.length === 32 ? bytes : undefined;
  }
  return undefined;
}

const envSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL').optional(),
  MAILPATH_DATA_DIR: z.string().min(1).default('./data'),
  MAILPATH_HTTPS_PORT: port.default(8443),
  MAILPATH_HTTP_PORT: port.default(8080),
  MAILPATH_BIND_HOST: z.string().min(1).default('0.0.0.0'),
  // Unset: https://localhost:<MAILPATH_HTTPS_PORT> (see loadConfig).
  MAILPATH_PUBLIC_URL: z.url({ protocol: /^https$/ }).optional(),
  MAILPATH_TLS_CERT: z.string().min(1).optional(),
  MAILPATH_TLS_KEY: z.string().min(1).optional(),
  MAILPATH_MX_PORT: port.default(2525),
  MAILPATH_SUBMISSION_PORT: port.default(2587),
  MAILPATH_SUBMISSION_TLS_PORT: port.default(2465),
  MAILPATH_HOSTNAME: hostName.default('mx.mailpath.local'),
  MAILPATH_DNS_SERVERS: commaList(dnsServer).pipe(z.array(z.string()).min(1, 'at least one server')).optional(),
  // Unset: spf.<MAILPATH_HOSTNAME>.
  MAILPATH_SPF_INCLUDE: hostName.optional(),
  // 32 bytes as 64 hex digits or base64; unset: generated once into the data dir.
  MAILPATH_MASTER_KEY: z
    .string()
    .trim()
    .refine((v) => decodeMasterKey(v) !== undefined, 'expected 32 bytes as 64 hex digits or base64')
    .optional(),
  MAILPATH_PUBLIC_RESOLVERS: commaList(dnsServer).pipe(z.array(z.string()).min(1, 'at least one resolver')).default(['1.1.1.1', '8.8.8.8', '9.9.9.9']),
  MAILPATH_OUTBOUND_RELAY: hostPort.optional(),
  MAILPATH_OUTBOUND_PORT: port.default(25),
  MAILPATH_ADMIN_EMAIL: z.email().default('admin@mailpath.local'),
  MAILPATH_ADMIN_PASSWORD: z.string().min(10, 'at least 10 characters').optional(),
  MAILPATH_JWT_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  MAILPATH_LIVE_KEY_PREFIX: z.string().regex(/^[a-z0-9_]{3,16}$/).default('mp_live_'),
  MAILPATH_TEST_KEY_PREFIX: z.string().regex(/^[a-z0-9_]{3,16}$/).default('mp_test_'),
  MAILPATH_CHAT_WEBHOOK_URL: z.url().optional(),
  // Unset: platform e-mails (password reset, invites) are logged instead of sent.
  MAILPATH_SYSTEM_SENDER: z.email().optional(),
  MAILPATH_ROLES: commaList(z.enum(ALL_ROLES)).default([...ALL_ROLES]),
  MAILPATH_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAILPATH_SHUTDOWN_TIMEOUT_MS: wholeNumber(0).default(15000),
  MAILPATH_DB_POOL_SIZE: wholeNumber(1, 200).default(10),
  WARMUP_PER_ESP_ENFORCE: boolFlag.default(false),
  SOC2_EVIDENCE_ENABLED: boolFlag.default(false),
});

const limitsSchema = z.strictObject({
  rate_limits: z.strictObject({
    per_minute: z.strictObject({
      send: z.number().int().positive(),
      read: z.number().int().positive(),
      write: z.number().int().positive(),
      bulk: z.number().int().positive(),
      public: z.number().int().positive(),
    }),
    tenant_default_per_sec: z.number().int().positive(),
    sync_interval_ms: z.number().int().min(10).max(1000),
    override_cache_ms: z.number().int().min(0).max(60000),
  }),
  request: z.strictObject({
    body_limit_bytes: z.number().int().min(1024),
  }),
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
    .refine((a) => a.suspicious.new_address_recent_days + a.suspicious.new_address_lookback_days <= a.retention_days, 'suspicious.new_address_recent_days + new_address_lookback_days must not exceed retention_days'),
});

const authSchema = z.strictObject({
  session_ttl_seconds: z.number().int().min(60),
  bcrypt_cost: z.number().int().min(4).max(15),
  min_password_length: z.number().int().min(8).max(64),
  key_last_used_write_interval_seconds: z.number().int().min(1),
  credential_cache_ms: z.number().int().min(0).max(60000),
  team_invite_ttl_hours: z.number().int().min(1).max(24 * 30),
  totp: z.strictObject({
    session_ttl_seconds: z.number().int().min(30).max(3600),
    window_steps: z.number().int().min(0).max(10),
  }),
  password_reset: z.strictObject({
    token_ttl_seconds: z.number().int().min(60).max(7 * 86_400),
    min_response_ms: z.number().int().min(0).max(10_000),
    max_emails_per_hour: z.number().int().min(1).max(1000),
  }),
  login_protection: z.strictObject({
    window_seconds: z.number().int().min(1).max(86_400),
    max_failures_per_account: z.number().int().min(1).max(10_000),
    max_failures_per_address: z.number().int().min(1).max(100_000),
    lockout_seconds: z.number().int().min(1).max(86_400),
    max_lockout_seconds: z.number().int().min(1).max(86_400),
  }),
});

const dnsSchema = z.strictObject({
  timeout_ms: z.number().int().min(50).max(30000),
  tries: z.number().int().min(1).max(5),
  domain_recheck_hours: z.number().int().min(1).max(24).refine((h) => 24 % h === 0, 'must divide a day (1, 2, 3, 4, 6, 8, 12 or 24)'),
});

const dkimSchema = z.strictObject({
  key_bits: z.union([z.literal(1024), z.literal(2048), z.literal(3072), z.literal(4096)]),
  selector_prefix: z.string().regex(/^[a-z][a-z0-9]{0,15}$/, 'lower-case letters and digits, starting with a letter'),
  rotator_interval_minutes: z
    .number()
    .int()
    .min(1)
    .max(1440)
    .refine((m) => (m < 60 && 60 % m === 0) || (m % 60 === 0 && 24 % (m / 60) === 0), 'must divide an hour, or be whole hours dividing a day'),
  retiring_grace_hours: z.number().int().min(0).max(24 * 90),
  max_key_age_days: z.number().int().min(1).max(3650).nullable(),
});

const warmupSchema = z.strictObject({
  tier_caps: z
    .array(z.number().int().min(1).max(10_000_000))
    .min(1)
    .refine((caps) => caps.every((cap, i) => i === 0 || cap > caps[i - 1]!), 'each tier must allow more than the one below'),
  reset_after_idle_days: z.number().int().min(1).max(365),
});

const deliverySchema = z.strictObject({
  retry: z.strictObject({
    first_retry_minutes: z.number().positive().max(24 * 60),
    factor: z.number().min(1).max(10),
    max_interval_minutes: z.number().positive().max(7 * 24 * 60),
    max_age_hours: z.number().positive().max(30 * 24),
  }),
  destination: z.strictObject({
    max_connections: z.number().int().min(1).max(1000),
    max_messages_per_connection: z.number().int().min(1).max(100_000),
    idle_close_ms: z.number().int().min(0).max(600_000),
  }),
  timeouts: z.strictObject({
    connect_ms: z.number().int().min(100).max(600_000),
    greeting_ms: z.number().int().min(100).max(600_000),
    socket_ms: z.number().int().min(100).max(3_600_000),
  }),
  workers: z.strictObject({
    batch_size: z.number().int().min(1).max(1000),
    concurrency: z.number().int().min(1).max(10_000),
    poll_interval_ms: z.number().int().min(100).max(60_000),
    job_expire_seconds: z.number().int().min(1).max(86_400),
    queue_maintenance_seconds: z.number().int().min(1).max(3600),
  }),
});

/** An enhanced status code pattern: class.subject.detail, `x` for any number (5.7.x). */
const statusCodePattern = z.string().regex(/^[245]\.(\d{1,3}|x)\.(\d{1,3}|x)$/i, 'expected an enhanced status code such as 5.1.1 or 5.7.x');
const bounceRulesSchema = z.strictObject({
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

/** The MX plugins in plugins/ (one file each); config/plugins.yaml enables and orders them. */
export const MX_PLUGINS = ['limits', 'recipient-domains', 'sender-auth', 'queue'] as const;
export type MxPluginName = (typeof MX_PLUGINS)[number];

const inboundSchema = z.strictObject({
  server: z.strictObject({
    banner: z.string().max(100).regex(/^[\x20-\x7e]*$/, 'printable ASCII only'),
    max_clients: z.number().int().min(1).max(100_000),
    max_clients_per_address: z.number().int().min(1).max(100_000),
    socket_timeout_ms: z.number().int().min(1000).max(3_600_000),
    max_session_ms: z.number().int().min(1000).max(86_400_000),
    greeting_delay_ms: z.number().int().min(0).max(30_000),
  }),
  limits: z.strictObject({
    max_message_bytes: z.number().int().min(1024).max(1024 * 1024 * 1024),
    max_recipients: z.number().int().min(1).max(10_000),
    max_line_length: z.number().int().min(78).max(1024 * 1024).nullable(),
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
  queue: z.strictObject({
    max_batch: z.number().int().min(1).max(1000),
  }),
  retention: z.strictObject({
    days: z.number().int().min(1).max(3650),
  }),
});

const pluginsSchema = z.strictObject({
  hook_timeout_ms: z.number().int().min(10).max(600_000),
  phase_timeout_ms: z.partialRecord(z.enum(['connect', 'helo', 'mail', 'rcpt', 'data', 'queue']), z.number().int().min(10).max(600_000)).default({}),
  plugins: z
    .array(z.strictObject({ name: z.enum(MX_PLUGINS), priority: z.number().int().min(0).max(1000) }))
    .refine((list) => new Set(list.map((p) => p.name)).size === list.length, 'a plugin is listed twice'),
});

/** config/webhooks.yaml: the inbound-webhook URL policy, receiver timeout, retry schedule and workers. */
const webhooksSchema = z.strictObject({
  allow_http: z.boolean(),
  allow_private_addresses: z.boolean(),
  timeout_seconds: z.number().min(0.1).max(120),
  retry_delays_seconds: z
    .array(z.number().int().min(1).max(86_400))
    .min(1)
    .max(20)
    .refine((delays) => delays.every((d, i) => i === 0 || d >= delays[i - 1]!), 'each wait must be at least the one before'),
  workers: z.strictObject({
    batch_size: z.number().int().min(1).max(500),
    poll_interval_ms: z.number().int().min(500).max(60_000),
  }),
});

const filesSchema = z.object({
  limits: limitsSchema,
  webhooks: webhooksSchema,
  auth: authSchema,
  dns: dnsSchema,
  dkim: dkimSchema,
  warmup: warmupSchema,
  delivery: deliverySchema,
  'bounce-rules': bounceRulesSchema,
  inbound: inboundSchema,
  plugins: pluginsSchema,
});

export type Env = Record<string, string | undefined>;
export type LimitsConfig = z.infer<typeof limitsSchema>;
export type AuthConfig = z.infer<typeof authSchema>;
export type DnsConfig = z.infer<typeof dnsSchema>;
export type DkimConfig = z.infer<typeof dkimSchema>;
export type WarmupConfig = z.infer<typeof warmupSchema>;
export type DeliveryConfig = z.infer<typeof deliverySchema>;
export type BounceRulesConfig = z.infer<typeof bounceRulesSchema>;
export type WebhooksConfig = z.infer<typeof webhooksSchema>;
export type InboundConfig = z.infer<typeof inboundSchema>;
export type PluginsConfig = z.infer<typeof pluginsSchema>;

export interface Config {
  databaseUrl: string | undefined;
  dataDir: string;
  httpsPort: number;
  httpPort: number;
  bindHost: string;
  publicUrl: URL;
  tls: { certFile: string; keyFile: string } | undefined;
  mxPort: number;
  submissionPort: number;
  submissionTlsPort: number;
  hostname: string;
  dnsServers: string[] | undefined;
  publicResolvers: string[];
  /** The host tenants' SPF records include to authorize Mailpath. */
  spfInclude: string;
  /** MAILPATH_MASTER_KEY decoded; undefined means the key file in the data dir. */
  masterKey: Buffer | undefined;
  outboundRelay: string | undefined;
  outboundPort: number;
  admin: { email: string; password: string | undefined };
  jwtSecret: string | undefined;
  keyPrefixes: { live: string; test: string };
  chatWebhookUrl: string | undefined;
  /** MAILPATH_SYSTEM_SENDER (lower-cased): From of platform e-mails, at a verified domain of the super-admin tenant. */
  systemSender: string | undefined;
  roles: Role[];
  logLevel: string;
  shutdownTimeoutMs: number;
  dbPoolSize: number;
  flags: { warmupPerEspEnforce: boolean; soc2EvidenceEnabled: boolean };
  /** Started by an npm script (npm sets npm_lifecycle_event): the process may sit below a shell. */
  launchedByNpm: boolean;
  limits: LimitsConfig;
  auth: AuthConfig;
  dns: DnsConfig;
  dkim: DkimConfig;
  warmup: WarmupConfig;
  delivery: DeliveryConfig;
  bounceRules: BounceRulesConfig;
  /** config/webhooks.yaml: inbound-webhook URL policy, timeout, retries. */
  webhooks: WebhooksConfig;
  /** config/inbound.yaml: the MX server and its plugins' settings. */
  inbound: InboundConfig;
  /** config/plugins.yaml: the MX plugins enabled, their order and the hook timeouts. */
  plugins: PluginsConfig;
}

/** Raised when configuration is invalid; the message names every offending key. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeIssues(issues: z.core.$ZodIssue[], prefix: string): string {
  return issues.map((i) => `${prefix}${i.path.join('.')}: ${i.message}`).join('; ');
}

/** Reads every config/<name>.yaml file into { name: parsed }. */
function readConfigFiles(configDir: string): Record<string, unknown> {
  const files: Record<string, unknown> = {};
  let names: string[];
  try {
    names = readdirSync(configDir);
  } catch (err) {
    throw new ConfigError(`Invalid configuration: cannot read the config directory ${configDir}: ${(err as Error).message}`);
  }
  for (const file of names) {
    const match = /^([a-z0-9-]+)\.ya?ml$/.exec(file);
    if (!match) continue;
    const name = match[1]!;
    try {
      files[name] = parseYaml(readFileSync(join(configDir, file), 'utf8')) ?? {};
    } catch (err) {
      throw new ConfigError(`Invalid configuration: config/${file}: ${(err as Error).message}`);
    }
  }
  return files;
}

/** Applies MAILPATH_CONFIG__<FILE>__<KEY>__... overrides onto the parsed config files. */
function applyFileOverrides(files: Record<string, unknown>, env: Env): void {
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('MAILPATH_CONFIG__') || raw === undefined) continue;
    const path = name.slice('MAILPATH_CONFIG__'.length).toLowerCase().split('__');
    // Environment names cannot hold '-': BOUNCE_RULES names config/bounce-rules.yaml.
    const file = Object.keys(files).find((f) => f.replace(/-/g, '_') === path[0]);
    if (file !== undefined) path[0] = file;
    // A typo in the file name would otherwise be dropped silently (unknown files are not validated).
    if (!(path[0]! in files) || path.some((p) => p === '')) {
      throw new ConfigError(`Invalid configuration: ${name}: no such setting (expected MAILPATH_CONFIG__<FILE>__<KEY>, FILE one of ${Object.keys(files).join(', ').toUpperCase()})`);
    }
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Not JSON: keep it as the plain string it is.
    }
    let node = files as Record<string, unknown>;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (typeof next !== 'object' || next === null) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = value;
  }
}

/**
 * Builds the configuration from an environment and a config directory.
 * Pure apart from reading the config files, so tests pass their own env.
 */
export function loadConfig(env: Env = process.env, configDir = join(projectRoot(), 'config')): Config {
  const parsedEnv = envSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')),
  );
  if (!parsedEnv.success) {
    throw new ConfigError(`Invalid configuration: ${describeIssues(parsedEnv.error.issues, '')}`);
  }
  const files = readConfigFiles(configDir);
  applyFileOverrides(files, env);
  const parsedFiles = filesSchema.safeParse(files);
  if (!parsedFiles.success) {
    throw new ConfigError(`Invalid configuration: ${describeIssues(parsedFiles.error.issues, 'config/')}`);
  }
  const e = parsedEnv.data;
  if (Boolean(e.MAILPATH_TLS_CERT) !== Boolean(e.MAILPATH_TLS_KEY)) {
    throw new ConfigError('Invalid configuration: MAILPATH_TLS_CERT and MAILPATH_TLS_KEY must be set together');
  }
  return {
    databaseUrl: e.DATABASE_URL,
    dataDir: resolve(e.MAILPATH_DATA_DIR),
    httpsPort: e.MAILPATH_HTTPS_PORT,
    httpPort: e.MAILPATH_HTTP_PORT,
    bindHost: e.MAILPATH_BIND_HOST,
    publicUrl: new URL(e.MAILPATH_PUBLIC_URL ?? `https://localhost${e.MAILPATH_HTTPS_PORT === 443 ? '' : `:${e.MAILPATH_HTTPS_PORT}`}`),
    tls: e.MAILPATH_TLS_CERT ? { certFile: e.MAILPATH_TLS_CERT, keyFile: e.MAILPATH_TLS_KEY! } : undefined,
    mxPort: e.MAILPATH_MX_PORT,
    submissionPort: e.MAILPATH_SUBMISSION_PORT,
    submissionTlsPort: e.MAILPATH_SUBMISSION_TLS_PORT,
    hostname: e.MAILPATH_HOSTNAME,
    dnsServers: e.MAILPATH_DNS_SERVERS,
    publicResolvers: e.MAILPATH_PUBLIC_RESOLVERS,
    spfInclude: e.MAILPATH_SPF_INCLUDE ?? `spf.${e.MAILPATH_HOSTNAME}`,
    masterKey: e.MAILPATH_MASTER_KEY === undefined ? undefined : decodeMasterKey(e.MAILPATH_MASTER_KEY),
    outboundRelay: e.MAILPATH_OUTBOUND_RELAY,
    outboundPort: e.MAILPATH_OUTBOUND_PORT,
    admin: { email: e.MAILPATH_ADMIN_EMAIL.toLowerCase(), password: e.MAILPATH_ADMIN_PASSWORD },
    jwtSecret: e.MAILPATH_JWT_SECRET,
    keyPrefixes: { live: e.MAILPATH_LIVE_KEY_PREFIX, test: e.MAILPATH_TEST_KEY_PREFIX },
    chatWebhookUrl: e.MAILPATH_CHAT_WEBHOOK_URL,
    systemSender: e.MAILPATH_SYSTEM_SENDER?.toLowerCase(),
    roles: [...new Set(e.MAILPATH_ROLES)],
    logLevel: e.MAILPATH_LOG_LEVEL,
    shutdownTimeoutMs: e.MAILPATH_SHUTDOWN_TIMEOUT_MS,
    dbPoolSize: e.MAILPATH_DB_POOL_SIZE,
    flags: { warmupPerEspEnforce: e.WARMUP_PER_ESP_ENFORCE, soc2EvidenceEnabled: e.SOC2_EVIDENCE_ENABLED },
    launchedByNpm: Boolean(env['npm_lifecycle_event']),
    limits: parsedFiles.data.limits,
    auth: parsedFiles.data.auth,
    dns: parsedFiles.data.dns,
    dkim: parsedFiles.data.dkim,
    warmup: parsedFiles.data.warmup,
    delivery: parsedFiles.data.delivery,
    bounceRules: parsedFiles.data['bounce-rules'],
    webhooks: parsedFiles.data.webhooks,
    inbound: parsedFiles.data.inbound,
    plugins: parsedFiles.data.plugins,
  };
}
