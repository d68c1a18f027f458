// The one place that reads process.env and config/: validates both with zod into a typed Config (one schema module per config file beside this one).
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { projectRoot } from '../kernel/paths.js';
import { authSchema, type AuthConfig } from './auth.js';
import { bounceMailboxesSchema, type BounceMailboxesConfig } from './bounce-mailboxes.js';
import { bounceRulesSchema, type BounceRulesConfig } from './bounce-rules.js';
import { campaignsSchema, type CampaignsConfig } from './campaigns.js';
import { deliverySchema, type DeliveryConfig } from './delivery.js';
import { dkimSchema, type DkimConfig } from './dkim.js';
import { dnsSchema, type DnsConfig } from './dns.js';
import { devDefaults, devEnvSchema, type DevConfig } from './dev.js';
import { decodeMasterKey, envSchema, type Env, type Role } from './env.js';
import { inboundSchema, type InboundConfig } from './inbound.js';
import { ipPoolsSchema, type IpPoolsConfig } from './ip-pools.js';
import { ipWatchdogSchema, type IpWatchdogConfig } from './ip-watchdog.js';
import { limitsSchema, type LimitsConfig } from './limits.js';
import { notifySchema, type NotifyConfig } from './notify.js';
import { observabilitySchema, type ObservabilityConfig } from './observability.js';
import { runtimeSchema, type RuntimeConfig } from './runtime.js';
import { pluginsSchema, type PluginsConfig } from './plugins.js';
import { renderSchema, type RenderConfig } from './render.js';
import { queriesSchema, type QueriesConfig } from './queries.js';
import { seedlistSchema, type SeedlistConfig } from './seedlist.js';
import { trackingSchema, type TrackingConfig } from './tracking.js';
import { warmupSchema, type WarmupConfig } from './warmup.js';
import { webhooksSchema, type WebhooksConfig } from './webhooks.js';
import { workersSchema, type WorkersConfig } from './workers.js';

export { ALL_ROLES, decodeMasterKey, type Env, type Role } from './env.js';
export { MX_PHASES } from './plugins.js';
export type { DevConfig } from './dev.js';
export type {
  AuthConfig,
  BounceRulesConfig,
  CampaignsConfig,
  DeliveryConfig,
  DkimConfig,
  DnsConfig,
  InboundConfig,
  LimitsConfig,
  PluginsConfig,
  TrackingConfig,
  WarmupConfig,
  WebhooksConfig,
};
export type { BounceMailboxesConfig, IpPoolsConfig, IpWatchdogConfig, NotifyConfig, ObservabilityConfig, RuntimeConfig, SeedlistConfig, WorkersConfig };
export type { RenderConfig } from './render.js';
export type { QueriesConfig, QueryKind } from './queries.js';

/** The config/ files, by name: each is validated by its own schema. */
function filesSchema(mxPlugins: readonly string[] | undefined) {
  return z.object({
    limits: limitsSchema,
    webhooks: webhooksSchema,
    auth: authSchema,
    dns: dnsSchema,
    dkim: dkimSchema,
    warmup: warmupSchema,
    delivery: deliverySchema,
    'bounce-rules': bounceRulesSchema,
    inbound: inboundSchema,
    campaigns: campaignsSchema,
    plugins: pluginsSchema(mxPlugins),
    tracking: trackingSchema,
    'ip-pools': ipPoolsSchema,
    'ip-watchdog': ipWatchdogSchema,
    workers: workersSchema,
    notify: notifySchema,
    'bounce-mailboxes': bounceMailboxesSchema,
    seedlist: seedlistSchema,
    observability: observabilitySchema,
    runtime: runtimeSchema,
    render: renderSchema,
    queries: queriesSchema,
  });
}

export interface LoadOptions {
  /** The config/ directory (default: the project's). */
  configDir?: string;
  /** The MX plugin catalogue's names (plugins/index.ts): config/plugins.yaml may enable only these. */
  mxPlugins?: readonly string[];
  /** The `mailpath dev` profile: its ports are read, and its defaults fill the variables left unset (shared/config/dev.ts). */
  dev?: boolean;
}

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
  /** The operator port serving GET /metrics; undefined when MAILPATH_METRICS_PORT is off. */
  metrics: { port: number; host: string } | undefined;
  /** MAILPATH_VALIDATE_RESPONSES: API answers are also checked against their zod schemas. */
  validateResponses: boolean;
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
  /** config/campaigns.yaml: target materialization and the fan-out's batches, leases and jobs. */
  campaigns: CampaignsConfig;
  /** config/tracking.yaml: machine-open and scanner-click rules, hit batching. */
  tracking: TrackingConfig;
  /** config/ip-pools.yaml: outbound source-address pools and which sends use them. */
  ipPools: IpPoolsConfig;
  /** config/ip-watchdog.yaml: block rules on delivery replies, quarantine cool-down, state cache. */
  ipWatchdog: IpWatchdogConfig;
  /** config/workers.yaml: alerts on scheduled workers' failing ticks. */
  workers: WorkersConfig;
  /** config/notify.yaml: the chat notifier's timeout and retries. */
  notify: NotifyConfig;
  /** config/bounce-mailboxes.yaml: reaching and polling the POP3 bounce mailboxes. */
  bounceMailboxes: BounceMailboxesConfig;
  /** config/seedlist.yaml: seed copies of campaign sends and the missing window. */
  seedlist: SeedlistConfig;
  /** config/observability.yaml: metrics scrape caching, query timing and the slow-query thresholds. */
  observability: ObservabilityConfig;
  /** config/runtime.yaml: the helper threads' priority below the event loop's. */
  runtime: RuntimeConfig;
  /** config/render.yaml: the render threads, render budgets and each tenant's share. */
  render: RenderConfig;
  /** config/queries.yaml: deadlines of tenant-shaped queries and their concurrency caps. */
  queries: QueriesConfig;
  /** Set only under `mailpath dev`: the ports of its loopback DNS, mail sink and inbox. */
  dev: DevConfig | undefined;
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

const OVERRIDE_PREFIX = 'MAILPATH_CONFIG__';

/** The MAILPATH_CONFIG__<FILE>__<KEY>__... overrides among `env` (what loadConfig applies onto the config files). */
export function configOverrides(env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[0].startsWith(OVERRIDE_PREFIX) && e[1] !== undefined));
}

/** Applies MAILPATH_CONFIG__<FILE>__<KEY>__... overrides onto the parsed config files. */
function applyFileOverrides(files: Record<string, unknown>, env: Env): void {
  for (const [name, raw] of Object.entries(configOverrides(env))) {
    const path = name.slice(OVERRIDE_PREFIX.length).toLowerCase().split('__');
    // Environment names cannot hold '-': BOUNCE_RULES names config/bounce-rules.yaml.
    const file = Object.keys(files).find((f) => f.replace(/-/g, '_') === path[0]);
    if (file !== undefined) path[0] = file;
    // A typo in the file name would otherwise be dropped silently (unknown files are not validated).
    if (!(path[0]! in files) || path.some((p) => p === '')) {
      throw new ConfigError(
        `Invalid configuration: ${name}: no such setting (expected MAILPATH_CONFIG__<FILE>__<KEY>, FILE one of ${Object.keys(files).join(', ').toUpperCase()})`,
      );
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
export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  const configDir = options.configDir ?? join(projectRoot(), 'config');
  // An empty variable counts as unset.
  let given: Env = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  let dev: DevConfig | undefined;
  if (options.dev) {
    const parsedDev = devEnvSchema.safeParse(given);
    if (!parsedDev.success) throw new ConfigError(`Invalid configuration: ${describeIssues(parsedDev.error.issues, '')}`);
    const d = parsedDev.data;
    dev = { dnsPort: d.MAILPATH_DEV_DNS_PORT, smtpPort: d.MAILPATH_DEV_SMTP_PORT, httpPort: d.MAILPATH_DEV_HTTP_PORT };
    // A variable that is set wins over the dev default.
    given = { ...devDefaults(dev), ...given };
  }
  const parsedEnv = envSchema.safeParse(given);
  if (!parsedEnv.success) {
    throw new ConfigError(`Invalid configuration: ${describeIssues(parsedEnv.error.issues, '')}`);
  }
  const files = readConfigFiles(configDir);
  applyFileOverrides(files, given);
  const parsedFiles = filesSchema(options.mxPlugins).safeParse(files);
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
    metrics: e.MAILPATH_METRICS_PORT === 'off' ? undefined : { port: e.MAILPATH_METRICS_PORT, host: e.MAILPATH_METRICS_HOST },
    validateResponses: e.MAILPATH_VALIDATE_RESPONSES,
    flags: { warmupPerEspEnforce: e.WARMUP_PER_ESP_ENFORCE, soc2EvidenceEnabled: e.SOC2_EVIDENCE_ENABLED },
    launchedByNpm: Boolean(env['npm_lifecycle_event']),
    limits: parsedFiles.data.limits,
    auth: parsedFiles.data.auth,
    dns: parsedFiles.data.dns,
    dkim: parsedFiles.data.dkim,
    // WARMUP_PER_ESP_ENFORCE keeps the spec's name; the gate reads it with the rest of the warm-up settings.
    warmup: { ...parsedFiles.data.warmup, per_esp_enforce: e.WARMUP_PER_ESP_ENFORCE },
    delivery: parsedFiles.data.delivery,
    bounceRules: parsedFiles.data['bounce-rules'],
    webhooks: parsedFiles.data.webhooks,
    inbound: parsedFiles.data.inbound,
    plugins: parsedFiles.data.plugins,
    campaigns: parsedFiles.data.campaigns,
    tracking: parsedFiles.data.tracking,
    ipPools: parsedFiles.data['ip-pools'],
    ipWatchdog: parsedFiles.data['ip-watchdog'],
    workers: parsedFiles.data.workers,
    notify: parsedFiles.data.notify,
    bounceMailboxes: parsedFiles.data['bounce-mailboxes'],
    seedlist: parsedFiles.data.seedlist,
    observability: parsedFiles.data.observability,
    runtime: parsedFiles.data.runtime,
    render: parsedFiles.data.render,
    queries: parsedFiles.data.queries,
    dev,
  };
}
