// The environment variables Mailpath reads (names and defaults in docs/operating.md, "Configuration"), validated with zod.
import { isIP } from 'node:net';
import { z } from 'zod';

/** Environment variables as given (process.env, or a test's own set). */
export type Env = Record<string, string | undefined>;

export const ALL_ROLES = ['api', 'mx', 'submission', 'outbound', 'scheduler'] as const;
export type Role = (typeof ALL_ROLES)[number];

/** A whole decimal number: z.coerce alone would take ' ' as 0 and '1e3' as 1000. */
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().trim().regex(/^\d+$/, 'expected a whole number').transform(Number).pipe(z.number().int().min(min).max(max));
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
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
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

export const envSchema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL')
    .optional(),
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
  MAILPATH_LIVE_KEY_PREFIX: z
    .string()
    .regex(/^[a-z0-9_]{3,16}$/)
    .default('mp_live_'),
  MAILPATH_TEST_KEY_PREFIX: z
    .string()
    .regex(/^[a-z0-9_]{3,16}$/)
    .default('mp_test_'),
  MAILPATH_CHAT_WEBHOOK_URL: z.url().optional(),
  // Unset: platform e-mails (password reset, invites) are logged instead of sent.
  MAILPATH_SYSTEM_SENDER: z.email().optional(),
  MAILPATH_ROLES: commaList(z.enum(ALL_ROLES)).default([...ALL_ROLES]),
  MAILPATH_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAILPATH_SHUTDOWN_TIMEOUT_MS: wholeNumber(0).default(15000),
  MAILPATH_DB_POOL_SIZE: wholeNumber(1, 200).default(10),
  // The operator port (GET /metrics, Prometheus): loopback only unless the operator says otherwise; 'off' serves none.
  MAILPATH_METRICS_PORT: z.union([z.literal('off'), port]).default(9464),
  MAILPATH_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  // On: every API answer is checked against its zod schema too (tests, `mailpath dev`); off: the compiled serializer alone.
  MAILPATH_VALIDATE_RESPONSES: boolFlag.default(false),
  WARMUP_PER_ESP_ENFORCE: boolFlag.default(false),
  SOC2_EVIDENCE_ENABLED: boolFlag.default(false),
});
