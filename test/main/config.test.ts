// The MX configuration: config/plugins.yaml and config/inbound.yaml as shipped, overrides, and the bad values that stop start-up naming the key.
import t from 'tap';
import { ConfigError, type Env } from '../../shared/config/index.js';
import { loadMailpathConfig as loadConfig } from '../../main/config.js';
import { PLUGINS } from '../../plugins/index.js';

interface Assert {
  ok(value: unknown, ...rest: [string]): unknown;
  match(value: unknown, pattern: RegExp, ...rest: [string]): unknown;
}

/** loadConfig throws a ConfigError whose message matches `pattern`. */
function refused(t: Assert, env: Env, pattern: RegExp): void {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (err) {
    caught = err;
  }
  t.ok(caught instanceof ConfigError, `${JSON.stringify(env)} throws ConfigError`);
  t.match((caught as Error | undefined)?.message, pattern, `naming ${pattern}`);
}

t.test('as shipped: every plugin enabled in order, with a hook timeout and a longer one for the queue phase', async (t) => {
  const c = loadConfig({});
  t.same(
    c.plugins.plugins.map((p) => p.name),
    ['limits', 'recipient-domains', 'sender-auth', 'seed-placement', 'store'],
  );
  t.ok(
    c.plugins.plugins.every((p, i, all) => i === 0 || p.priority > all[i - 1]!.priority),
    'priorities rise in list order',
  );
  t.equal(c.plugins.hook_timeout_ms, 10000);
  t.equal(c.plugins.phase_timeout_ms.queue, 60000);
  t.ok(c.inbound.sender_auth.timeout_ms < c.plugins.hook_timeout_ms, 'sender checks end before the hook timeout');
  t.match(c.inbound, {
    limits: { max_message_bytes: 26214400, max_recipients: 100, max_line_length: null },
    recipient_domains: { feedback_loop_local_part: 'fbl' },
    store: { max_batch: 100 },
  });
  t.match(c.inbound.server, { socket_timeout_ms: 60000, max_session_ms: 1800000 }, 'idle timeout, and a session time limit above it');
  t.same(
    c.plugins.plugins.map((p) => p.name).filter((name) => !(name in PLUGINS)),
    [],
    'every plugin the configuration enables is in the catalogue',
  );
  t.ok(c.roles.includes('mx'), 'the mx role runs by default');
  t.same(loadConfig({ MAILPATH_ROLES: 'mx' }).roles, ['mx']);
});

t.test('environment overrides: a plugin list, a phase timeout, a limit', async (t) => {
  const c = loadConfig({
    MAILPATH_CONFIG__PLUGINS__PLUGINS: '[{"name":"recipient-domains","priority":1},{"name":"store","priority":2}]',
    MAILPATH_CONFIG__PLUGINS__PHASE_TIMEOUT_MS__RCPT: '500',
    MAILPATH_CONFIG__INBOUND__LIMITS__MAX_LINE_LENGTH: '998',
  });
  t.same(
    c.plugins.plugins.map((p) => p.name),
    ['recipient-domains', 'store'],
  );
  t.equal(c.plugins.phase_timeout_ms.rcpt, 500);
  t.equal(c.inbound.limits.max_line_length, 998);
});

t.test('bad values stop start-up naming the key', async (t) => {
  refused(t, { MAILPATH_CONFIG__PLUGINS__PLUGINS: '[{"name":"open-relay","priority":1}]' }, /config\/plugins\.plugins\.0\.name/);
  refused(
    t,
    { MAILPATH_CONFIG__PLUGINS__PLUGINS: '[{"name":"store","priority":1},{"name":"store","priority":2}]' },
    /config\/plugins\.plugins: a plugin is listed twice/,
  );
  refused(t, { MAILPATH_CONFIG__PLUGINS__PLUGINS: '[{"name":"store"}]' }, /config\/plugins\.plugins\.0\.priority/);
  refused(t, { MAILPATH_CONFIG__PLUGINS__HOOK_TIMEOUT_MS: '0' }, /config\/plugins\.hook_timeout_ms/);
  refused(t, { MAILPATH_CONFIG__PLUGINS__PHASE_TIMEOUT_MS__DELIVER: '100' }, /config\/plugins\.phase_timeout_ms/);
  refused(t, { MAILPATH_CONFIG__INBOUND__LIMITS__MAX_RECIPIENTS: '0' }, /config\/inbound\.limits\.max_recipients/);
  refused(t, { MAILPATH_CONFIG__INBOUND__RECIPIENT_DOMAINS__FEEDBACK_LOOP_LOCAL_PART: 'a@b' }, /config\/inbound\.recipient_domains\.feedback_loop_local_part/);
  refused(t, { MAILPATH_CONFIG__INBOUND__SERVER__BANNER: '"two\\r\\nlines"' }, /config\/inbound\.server\.banner/);
  refused(t, { MAILPATH_CONFIG__INBOUND__SENDER_AUTH__MIN_KEY_BITS: '100' }, /config\/inbound\.sender_auth\.min_key_bits/);
  refused(t, { MAILPATH_CONFIG__INBOUND__SERVER__COLOUR: 'blue' }, /config\/inbound\.server/);
  refused(t, { MAILPATH_CONFIG__INBOUND__SERVER__MAX_SESSION_MS: '10' }, /config\/inbound\.server\.max_session_ms/);
  refused(t, { MAILPATH_ROLES: 'api,mx,relay' }, /MAILPATH_ROLES/);
});
