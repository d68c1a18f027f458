// The IP watchdog's block rules as shipped in config/ip-watchdog.yaml: real providers' block replies match their rule, ordinary refusals match none; and the
// two config files refuse what cannot work.
import t from 'tap';
import { blockRuleFor } from '../../../../shared/delivery/ip-pools/block-rules.js';
import { ConfigError, loadConfig } from '../../../../shared/config/index.js';

const { ipWatchdog } = loadConfig({});
const enhancedOf = (text: string) => /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})/.exec(text)?.[1] ?? null;
const reply = (code: number, text: string) => ({ code, text: `${code} ${text}`, enhanced: enhancedOf(`${code} ${text}`) });

t.test('block replies meet the rule that names them', async (t) => {
  const cases: [number, string, string][] = [
    [554, '5.7.1 Service unavailable; Client host [203.0.113.10] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/203.0.113.10', 'dnsbl'],
    [550, '5.7.1 Mail from 203.0.113.10 refused: listed at b.barracudacentral.org', 'dnsbl'],
    [
      554,
      "Your access to this mail system has been rejected due to the sending MTA's poor reputation. If you believe that this failure is in error, " +
        'please contact the intended recipient via alternate means. (RBL)',
      'dnsbl',
    ],
    [
      550,
      '5.7.606 Access denied, banned sending IP [203.0.113.10]. To request removal from this list please visit https://sender.office.com/',
      'microsoft-banned-ip',
    ],
    [550, '5.7.649 Access denied, banned sending IP [203.0.113.10]', 'microsoft-banned-ip'],
    [
      550,
      "SC-001 (BAY0-MC1-F21) Unfortunately, messages from 203.0.113.10 weren't sent. Part of their network is on our block list (S3150).",
      'microsoft-network-block',
    ],
    [
      421,
      '4.7.0 [203.0.113.10] Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from ' +
        'spam, mail sent from your IP address has been temporarily rate limited.',
      'gmail-ip-reputation',
    ],
    [421, '4.7.0 [TSS04] Messages from 203.0.113.10 temporarily deferred due to unexpected volume or user complaints', 'yahoo-ip-block'],
    [553, "5.7.1 [BL21] Connections will not be accepted from 203.0.113.10, because the ip is in Spamhaus's list", 'yahoo-ip-block'],
  ];
  for (const [code, text, rule] of cases) t.equal(blockRuleFor(ipWatchdog, reply(code, text)), rule, `${code} ${text.slice(0, 50)}`);
});

t.test('refusals about the recipient or the message, and acceptances, are not blocks', async (t) => {
  const cases: [number, string][] = [
    [550, '5.1.1 The email account that you tried to reach does not exist'],
    [552, '5.2.2 Mailbox full'],
    [554, '5.7.1 Message rejected as spam by Content Filtering'],
    [550, '5.7.650 Access denied, this is not a banned-IP code'],
    [550, '5.7.605 below the range'],
    [450, '4.2.1 The user you are trying to contact is receiving mail too quickly'],
    [421, '4.7.0 Try again later, closing connection'],
    [250, '2.0.0 OK listed at nothing, spamhaus says hello'],
  ];
  for (const [code, text] of cases) t.equal(blockRuleFor(ipWatchdog, reply(code, text)), null, `${code} ${text}`);
});

t.test('a DNSBL text in a temporary reply is not the dnsbl rule (it asks for 5xx)', async (t) => {
  t.equal(blockRuleFor(ipWatchdog, reply(451, '4.7.1 Client host blocked using zen.spamhaus.org, try later')), null);
});

t.test('config: pools must exist where they are named, addresses must be addresses, rules need enhanced or text', async (t) => {
  const bad = (env: Record<string, string>, pattern: RegExp) => {
    t.throws(() => loadConfig(env), ConfigError);
    try {
      loadConfig(env);
    } catch (err) {
      t.match((err as Error).message, pattern);
    }
  };
  bad({ MAILPATH_CONFIG__IP_POOLS__DEFAULT_POOL: 'nope' }, /config\/ip-pools\.default_pool: no pool named nope/);
  bad({ MAILPATH_CONFIG__IP_POOLS__POOLS: '{"a":["not-an-ip"]}' }, /ip-pools\.pools\.a\.0: expected an IPv4 or IPv6 address/);
  bad({ MAILPATH_CONFIG__IP_POOLS__POOLS: '{"a":["127.0.0.2","127.0.0.2"]}' }, /ip-pools\.pools\.a: an address is listed twice/);
  bad({ MAILPATH_CONFIG__IP_POOLS__DOMAINS: '{"mail.acme.test":"b"}' }, /ip-pools\.domains\.mail\.acme\.test: no pool named b/);
  bad({ MAILPATH_CONFIG__IP_WATCHDOG__RULES: '[{"name":"x","reply":"5xx"}]' }, /ip-watchdog\.rules\.0: a rule needs enhanced, text or both/);
  bad({ MAILPATH_CONFIG__IP_WATCHDOG__RULES: '[{"name":"x","enhanced":"5.7.606-5.8.649"}]' }, /ip-watchdog\.rules\.0\.enhanced/);
  const ok = loadConfig({ MAILPATH_CONFIG__IP_POOLS__POOLS: '{"main":["127.0.0.2","::1"]}', MAILPATH_CONFIG__IP_POOLS__DEFAULT_POOL: 'main' });
  t.same(ok.ipPools.pools, { main: ['127.0.0.2', '::1'] });
  t.same(loadConfig({}).ipPools, { pools: {}, default_pool: null, tenants: {}, domains: {} }, 'no pools by default');
});
