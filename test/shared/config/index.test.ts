// Configuration: defaults, environment overrides, MAILPATH_CONFIG__ file overrides, and errors naming the bad key.
import t from 'tap';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, loadConfig, type Env } from '../../../shared/config/index.js';
import { projectRoot } from '../../../shared/kernel/paths.js';

const CONFIG_DIR = join(projectRoot(), 'config');

/** A copy of config/ in a temp dir, with `edit` applied to one file's text. */
function configDirWith(t: { teardown(fn: () => unknown): void }, file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of readdirSync(CONFIG_DIR)) copyFileSync(join(CONFIG_DIR, name), join(dir, name));
  writeFileSync(join(dir, file), edit(readFileSync(join(dir, file), 'utf8')));
  return dir;
}

/** The subset of a tap Test used here (tap's own signatures take variadic message/extra arguments). */
interface Assert {
  ok(value: unknown, ...rest: [string]): unknown;
  match(value: unknown, pattern: RegExp, ...rest: [string]): unknown;
}

/** Asserts loadConfig throws a ConfigError whose message matches every pattern. */
function assertConfigError(t: Assert, env: Env, patterns: RegExp[], configDir?: string): void {
  let caught: unknown;
  try {
    loadConfig(env, { configDir });
  } catch (err) {
    caught = err;
  }
  t.ok(caught instanceof ConfigError, `${JSON.stringify(env)} throws ConfigError`);
  for (const p of patterns) t.match((caught as Error | undefined)?.message, p, `message matches ${p}`);
}

t.test('defaults with an empty environment', async (t) => {
  const c = loadConfig({});
  t.equal(c.databaseUrl, undefined, 'no DATABASE_URL: embedded database');
  t.equal(c.dataDir, resolve('./data'), 'data dir is ./data, resolved');
  t.equal(c.httpsPort, 8443);
  t.equal(c.httpPort, 8080);
  t.equal(c.bindHost, '0.0.0.0');
  t.equal(c.publicUrl.toString(), 'https://localhost:8443/');
  t.equal(c.tls, undefined, 'no configured certificate: self-signed');
  t.equal(c.mxPort, 2525);
  t.equal(c.submissionPort, 2587);
  t.equal(c.submissionTlsPort, 2465);
  t.equal(c.hostname, 'mx.mailpath.local');
  t.equal(c.dnsServers, undefined, 'system resolvers');
  t.same(c.publicResolvers, ['1.1.1.1', '8.8.8.8', '9.9.9.9']);
  t.equal(c.outboundRelay, undefined);
  t.equal(c.outboundPort, 25);
  t.same(c.admin, { email: 'admin@mailpath.local', password: undefined });
  t.equal(c.jwtSecret, undefined);
  t.same(c.keyPrefixes, { live: 'mp_live_', test: 'mp_test_' });
  t.equal(c.chatWebhookUrl, undefined);
  t.same(c.roles, ['api', 'mx', 'submission', 'outbound', 'scheduler'], 'every role by default');
  t.equal(c.logLevel, 'info');
  t.equal(c.shutdownTimeoutMs, 15000);
  t.equal(c.dbPoolSize, 10);
  t.same(c.flags, { warmupPerEspEnforce: false, soc2EvidenceEnabled: false });
  // From config/*.yaml as shipped.
  t.equal(c.limits.rate_limits.per_minute.read, 60);
  t.equal(c.limits.rate_limits.per_minute.send, 600);
  t.equal(c.limits.request.body_limit_bytes, 10485760);
  t.equal(c.auth.bcrypt_cost, 12);
  t.equal(c.auth.session_ttl_seconds, 43200);
});

t.test('empty variables count as unset', async (t) => {
  const c = loadConfig({ MAILPATH_HTTPS_PORT: '', DATABASE_URL: '', MAILPATH_ROLES: '' });
  t.equal(c.httpsPort, 8443);
  t.equal(c.databaseUrl, undefined);
  t.same(c.roles, ['api', 'mx', 'submission', 'outbound', 'scheduler']);
});

t.test('environment variables override the defaults', async (t) => {
  const c = loadConfig({
    DATABASE_URL: 'postgres://mp@db.internal:5432/mailpath',
    MAILPATH_DATA_DIR: '/var/lib/mailpath',
    MAILPATH_HTTPS_PORT: '443',
    MAILPATH_HTTP_PORT: '80',
    MAILPATH_BIND_HOST: '127.0.0.1',
    MAILPATH_TLS_CERT: '/etc/tls/cert.pem',
    MAILPATH_TLS_KEY: '/etc/tls/key.pem',
    MAILPATH_MX_PORT: '25',
    MAILPATH_SUBMISSION_PORT: '587',
    MAILPATH_SUBMISSION_TLS_PORT: '465',
    MAILPATH_HOSTNAME: 'MX.Example.COM',
    MAILPATH_DNS_SERVERS: '127.0.0.1:5353, [::1]:53',
    MAILPATH_PUBLIC_RESOLVERS: '10.0.0.1,10.0.0.2,10.0.0.3',
    MAILPATH_OUTBOUND_RELAY: 'smarthost.example.com:2525',
    MAILPATH_OUTBOUND_PORT: '2526',
    MAILPATH_ADMIN_EMAIL: 'Ops@Example.com',
    MAILPATH_ADMIN_PASSWORD: 'a-long-admin-password',
    MAILPATH_JWT_SECRET: 'x'.repeat(32),
    MAILPATH_LIVE_KEY_PREFIX: 'ek_live_',
    MAILPATH_TEST_KEY_PREFIX: 'ek_test_',
    MAILPATH_CHAT_WEBHOOK_URL: 'https://chat.example.com/hook',
    MAILPATH_ROLES: 'api, api',
    MAILPATH_LOG_LEVEL: 'warn',
    MAILPATH_SHUTDOWN_TIMEOUT_MS: '500',
    MAILPATH_DB_POOL_SIZE: '3',
    WARMUP_PER_ESP_ENFORCE: 'TRUE',
    SOC2_EVIDENCE_ENABLED: '1',
  });
  t.equal(c.databaseUrl, 'postgres://mp@db.internal:5432/mailpath');
  t.equal(c.dataDir, '/var/lib/mailpath');
  t.equal(c.httpsPort, 443);
  t.equal(c.httpPort, 80);
  t.equal(c.bindHost, '127.0.0.1');
  t.equal(c.publicUrl.toString(), 'https://localhost/', 'public URL follows the HTTPS port when unset');
  t.same(c.tls, { certFile: '/etc/tls/cert.pem', keyFile: '/etc/tls/key.pem' });
  t.equal(c.mxPort, 25);
  t.equal(c.submissionPort, 587);
  t.equal(c.submissionTlsPort, 465);
  t.equal(c.hostname, 'mx.example.com', 'host name lowercased');
  t.same(c.dnsServers, ['127.0.0.1:5353', '[::1]:53']);
  t.same(c.publicResolvers, ['10.0.0.1', '10.0.0.2', '10.0.0.3']);
  t.equal(c.outboundRelay, 'smarthost.example.com:2525');
  t.equal(c.outboundPort, 2526);
  t.same(c.admin, { email: 'ops@example.com', password: 'a-long-admin-password' });
  t.equal(c.jwtSecret, 'x'.repeat(32));
  t.same(c.keyPrefixes, { live: 'ek_live_', test: 'ek_test_' });
  t.equal(c.chatWebhookUrl, 'https://chat.example.com/hook');
  t.same(c.roles, ['api'], 'roles deduplicated');
  t.equal(c.logLevel, 'warn');
  t.equal(c.shutdownTimeoutMs, 500);
  t.equal(c.dbPoolSize, 3);
  t.same(c.flags, { warmupPerEspEnforce: true, soc2EvidenceEnabled: true });

  t.equal(loadConfig({ MAILPATH_HTTPS_PORT: '9443' }).publicUrl.toString(), 'https://localhost:9443/');
  t.equal(
    loadConfig({ MAILPATH_HTTPS_PORT: '9443', MAILPATH_PUBLIC_URL: 'https://mail.example.com' }).publicUrl.toString(),
    'https://mail.example.com/',
    'an explicit public URL wins',
  );
});

t.test('MAILPATH_CONFIG__<FILE>__<KEY> overrides config/ values', async (t) => {
  const c = loadConfig({
    MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '250',
  });
  t.equal(c.auth.bcrypt_cost, 4, 'a number parsed from JSON');
  t.equal(c.limits.rate_limits.per_minute.read, 250, 'nested keys separated by __');
  t.equal(c.limits.rate_limits.per_minute.write, 60, 'siblings untouched');

  const whole = loadConfig({ MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE: '{"send":1,"read":2,"write":3,"bulk":4,"public":5,"tracking":6,"app":7}' });
  t.same(whole.limits.rate_limits.per_minute, { send: 1, read: 2, write: 3, bulk: 4, public: 5, tracking: 6, app: 7 }, 'a JSON object replaces a section');
});

t.test('a bad environment value stops start-up naming the key', async (t) => {
  assertConfigError(t, { MAILPATH_HTTPS_PORT: 'abc' }, [/MAILPATH_HTTPS_PORT/]);
  assertConfigError(t, { MAILPATH_HTTPS_PORT: '70000' }, [/MAILPATH_HTTPS_PORT/]);
  assertConfigError(t, { MAILPATH_HTTP_PORT: ' ' }, [/MAILPATH_HTTP_PORT/]);
  assertConfigError(t, { MAILPATH_MX_PORT: '1e3' }, [/MAILPATH_MX_PORT/]);
  assertConfigError(t, { MAILPATH_ROLES: 'api,bogus' }, [/MAILPATH_ROLES/]);
  assertConfigError(t, { DATABASE_URL: 'mysql://x' }, [/DATABASE_URL/]);
  assertConfigError(t, { MAILPATH_PUBLIC_URL: 'http://insecure.example.com' }, [/MAILPATH_PUBLIC_URL/]);
  assertConfigError(t, { MAILPATH_HOSTNAME: 'not a host' }, [/MAILPATH_HOSTNAME/]);
  assertConfigError(t, { MAILPATH_DNS_SERVERS: '1.1.1.1,bad host' }, [/MAILPATH_DNS_SERVERS/]);
  assertConfigError(t, { MAILPATH_ADMIN_PASSWORD: 'short' }, [/MAILPATH_ADMIN_PASSWORD/]);
  assertConfigError(t, { MAILPATH_JWT_SECRET: 'too-short' }, [/MAILPATH_JWT_SECRET/]);
  assertConfigError(t, { MAILPATH_LOG_LEVEL: 'loud' }, [/MAILPATH_LOG_LEVEL/]);
  assertConfigError(t, { WARMUP_PER_ESP_ENFORCE: 'maybe' }, [/WARMUP_PER_ESP_ENFORCE/]);
  assertConfigError(t, { MAILPATH_HTTPS_PORT: 'x', MAILPATH_DB_POOL_SIZE: '0' }, [/MAILPATH_HTTPS_PORT/, /MAILPATH_DB_POOL_SIZE/]);
});

t.test('a TLS certificate without its key (or the reverse) is refused', async (t) => {
  assertConfigError(t, { MAILPATH_TLS_CERT: '/etc/tls/cert.pem' }, [/MAILPATH_TLS_CERT/, /MAILPATH_TLS_KEY/]);
  assertConfigError(t, { MAILPATH_TLS_KEY: '/etc/tls/key.pem' }, [/MAILPATH_TLS_CERT/, /MAILPATH_TLS_KEY/]);
});

t.test('a bad override names the setting', async (t) => {
  assertConfigError(t, { MAILPATH_CONFIG__AUTH__BCRYPT_COST: 'abc' }, [/config\/auth\.bcrypt_cost/]);
  assertConfigError(t, { MAILPATH_CONFIG__AUTH__BCRYPT_COST: '99' }, [/config\/auth\.bcrypt_cost/]);
  assertConfigError(t, { MAILPATH_CONFIG__AUTH__BCRYPT_COSTS: '4' }, [/config\/auth/, /bcrypt_costs/]);
  assertConfigError(t, { MAILPATH_CONFIG__AUHT__BCRYPT_COST: '4' }, [/MAILPATH_CONFIG__AUHT__BCRYPT_COST/]);
  assertConfigError(t, { MAILPATH_CONFIG__LIMITS__RATE_LIMITS: '5' }, [/config\/limits\.rate_limits/]);
});

t.test('a bad value in a config file names the file and key', async (t) => {
  const badValue = configDirWith(t, 'auth.yaml', (text) => text.replace(/^bcrypt_cost: \d+/m, 'bcrypt_cost: twelve'));
  assertConfigError(t, {}, [/config\/auth\.bcrypt_cost/], badValue);

  const badNested = configDirWith(t, 'limits.yaml', (text) => text.replace(/^(\s+)read: \d+/m, '$1read: -1'));
  assertConfigError(t, {}, [/config\/limits\.rate_limits\.per_minute\.read/], badNested);

  const unknownKey = configDirWith(t, 'auth.yaml', (text) => `${text}\nsession_ttl: 5\n`);
  assertConfigError(t, {}, [/config\/auth/, /session_ttl/], unknownKey);

  const badYaml = configDirWith(t, 'limits.yaml', (text) => `${text}\n  : : [unclosed\n`);
  assertConfigError(t, {}, [/config\/limits\.yaml/], badYaml);

  const missing = mkdtempSync(join(tmpdir(), 'mailpath-config-'));
  t.teardown(() => rmSync(missing, { recursive: true, force: true }));
  copyFileSync(join(CONFIG_DIR, 'auth.yaml'), join(missing, 'auth.yaml'));
  assertConfigError(t, {}, [/config\/limits/], missing);

  assertConfigError(t, {}, [/config directory/], join(missing, 'does-not-exist'));

  // An override repairs a bad file value: the environment wins.
  t.equal(loadConfig({ MAILPATH_CONFIG__AUTH__BCRYPT_COST: '5' }, { configDir: badValue }).auth.bcrypt_cost, 5);
});

t.test('delivery and bounce-rule files: defaults, env overrides of a hyphenated file, bad values named', async (t) => {
  const c = loadConfig({});
  t.match(c.delivery.retry, { first_retry_minutes: 5, factor: 2, max_age_hours: 72 });
  t.ok(c.bounceRules.rules.length > 0);
  t.equal(c.bounceRules.rules[0]!.code, '5.1.1');
  const overridden = loadConfig({ MAILPATH_CONFIG__BOUNCE_RULES__DEFAULT: 'soft', MAILPATH_CONFIG__DELIVERY__RETRY__MAX_AGE_HOURS: '24' });
  t.equal(overridden.bounceRules.default, 'soft');
  t.equal(overridden.delivery.retry.max_age_hours, 24);
  t.throws(
    () => loadConfig({ MAILPATH_CONFIG__BOUNCE_RULES__RULES: '[{"code":"5.1","class":"hard"}]' }),
    /config\/bounce-rules\.rules\.0\.code: expected an enhanced status code/,
  );
  t.throws(() => loadConfig({ MAILPATH_CONFIG__BOUNCE_RULES__RULES: '[{"text":"(unclosed","class":"hard"}]' }), /expected a regular expression/);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__BOUNCE_RULES__RULES: '[{"class":"hard"}]' }), /a rule needs code, text or both/);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__DELIVERY__DESTINATION__MAX_CONNECTIONS: '0' }), /config\/delivery\.destination\.max_connections/);
});

t.test('the dev profile (mailpath dev): its ports, and defaults that keep everything on one machine, an explicit value winning', async (t) => {
  t.equal(loadConfig({}).dev, undefined, 'no dev profile unless asked for');
  const c = loadConfig({}, { dev: true });
  t.same(c.dev, { dnsPort: 1053, smtpPort: 1025, httpPort: 8025 });
  t.equal(c.bindHost, '127.0.0.1');
  t.equal(c.dataDir, resolve('./data-dev'), "a data dir apart from npm start's");
  t.equal(c.hostname, 'mx.mailpath.localhost');
  t.equal(c.spfInclude, 'spf.mx.mailpath.localhost');
  t.same(c.dnsServers, ['127.0.0.1:1053'], 'every look-up through the dev DNS');
  t.same(c.publicResolvers, ['127.0.0.1:1053']);
  t.equal(c.outboundRelay, '127.0.0.1:1025', 'all outbound mail to the sink');
  t.equal(c.webhooks.allow_http, true);
  t.equal(c.webhooks.allow_private_addresses, true);
  t.equal(c.httpsPort, 8443, "the API ports are npm start's");

  const moved = loadConfig(
    {
      MAILPATH_DEV_DNS_PORT: '5300',
      MAILPATH_DEV_SMTP_PORT: '2025',
      MAILPATH_DEV_HTTP_PORT: '',
      MAILPATH_HOSTNAME: 'mx.example.localhost',
      MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'false',
    },
    { dev: true },
  );
  t.same(moved.dev, { dnsPort: 5300, smtpPort: 2025, httpPort: 8025 }, 'an empty variable counts as unset');
  t.same(moved.dnsServers, ['127.0.0.1:5300'], 'defaults follow the dev ports');
  t.equal(moved.outboundRelay, '127.0.0.1:2025');
  t.equal(moved.hostname, 'mx.example.localhost', 'a variable that is set wins');
  t.equal(moved.webhooks.allow_http, false, 'so does a config override');

  let caught: unknown;
  try {
    loadConfig({ MAILPATH_DEV_SMTP_PORT: '0' }, { dev: true });
  } catch (err) {
    caught = err;
  }
  t.ok(caught instanceof ConfigError);
  t.match((caught as Error).message, /MAILPATH_DEV_SMTP_PORT/);
});
