// Machine opens and scanner clicks by the shipped config/tracking.yaml rules, and client addresses truncated to /24 and /48.
import t from 'tap';
import { loadConfig } from '../../../../shared/config/index.js';
import { truncateIp } from '../../../../shared/engagement/tracking/ip.js';
import { TrafficRules } from '../../../../shared/engagement/tracking/traffic-rules.js';

const rules = new TrafficRules(loadConfig({}).tracking);
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const APPLE_MAIL = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const GOOGLE_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const later = 3600;

t.test('opens', async (t) => {
  t.same(rules.open({ userAgent: CHROME, secondsSinceDelivery: later }), { flagged: false, reasons: [] }, 'a browser');
  t.same(rules.open({ userAgent: APPLE_MAIL, secondsSinceDelivery: 2 }), { flagged: false, reasons: [] }, 'Apple Mail itself, even at once');
  t.same(rules.open({ userAgent: 'Mozilla/5.0', secondsSinceDelivery: later }), { flagged: true, reasons: ['machine_user_agent'] }, "Apple MPP's proxy");
  t.same(rules.open({ userAgent: GOOGLE_PROXY, secondsSinceDelivery: 5 }), { flagged: true, reasons: ['proxy_prefetch'] }, 'a proxy right after delivery');
  t.same(rules.open({ userAgent: GOOGLE_PROXY, secondsSinceDelivery: later }), { flagged: false, reasons: [] }, 'a proxy fetching when the person opens');
  t.same(rules.open({ userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html', secondsSinceDelivery: 30 }).reasons, [
    'proxy_prefetch',
  ]);
  t.same(rules.open({ userAgent: 'curl/8.5.0', secondsSinceDelivery: later }).reasons, ['bot']);
  t.same(rules.open({ userAgent: ' ', secondsSinceDelivery: later }).reasons, ['no_user_agent']);
});

t.test('clicks', async (t) => {
  t.same(rules.click({ userAgent: CHROME, secondsSinceDelivery: later }), { flagged: false, reasons: [] });
  t.same(rules.click({ userAgent: CHROME, secondsSinceDelivery: 3 }).reasons, ['soon_after_delivery'], 'within 10 s of delivery');
  t.same(rules.click({ userAgent: 'Mozilla/5.0 (compatible; Mimecast)', secondsSinceDelivery: later }).reasons, ['scanner_user_agent']);
  t.same(rules.click({ userAgent: 'Barracuda Sentinel (EE)', secondsSinceDelivery: 1 }).reasons, ['scanner_user_agent', 'soon_after_delivery']);
  t.same(rules.click({ userAgent: 'python-requests/2.31', secondsSinceDelivery: later }).reasons, ['bot']);
  t.same(rules.click({ userAgent: '', secondsSinceDelivery: null }).reasons, ['no_user_agent']);
  t.same(rules.allLinks, { windowMs: 5000, min: 2 });
});

t.test('the rules are configuration', async (t) => {
  const config = loadConfig({
    MAILPATH_CONFIG__TRACKING__SCANNER_CLICKS__USER_AGENTS: '["^AcmeScan/"]',
    MAILPATH_CONFIG__TRACKING__SCANNER_CLICKS__BOTS: 'false',
    MAILPATH_CONFIG__TRACKING__MACHINE_OPENS__PROXY_WINDOW_SECONDS: '0',
  }).tracking;
  const custom = new TrafficRules(config);
  t.same(custom.click({ userAgent: 'AcmeScan/2.0', secondsSinceDelivery: later }).reasons, ['scanner_user_agent']);
  t.same(custom.click({ userAgent: 'curl/8.5.0', secondsSinceDelivery: later }).reasons, [], 'isbot off');
  t.same(custom.open({ userAgent: GOOGLE_PROXY, secondsSinceDelivery: 5 }).reasons, []);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__TRACKING__SCANNER_CLICKS__USER_AGENTS: '["(unclosed"]' }), /tracking\.scanner_clicks\.user_agents\.0/);
});

t.test('truncated addresses', async (t) => {
  t.equal(truncateIp('203.0.113.77'), '203.0.113.0');
  t.equal(truncateIp('::ffff:203.0.113.77'), '203.0.113.0', 'IPv4-mapped');
  t.equal(truncateIp('::FFFF:203.0.113.77'), '203.0.113.0', 'IPv4-mapped, upper case (the general path)');
  t.equal(truncateIp('0:0:0:0:0:ffff:cb00:714d'), '203.0.113.0', 'IPv4-mapped in hex groups');
  t.equal(truncateIp('::ffff:203.0.113'), null, 'not a whole IPv4 tail');
  t.equal(truncateIp('::ffff:1:203.0.113.77'), '0:0:0::', 'not mapped: an IPv6 address with a dotted tail');
  t.equal(truncateIp('2001:db8:85a3:1234:5678:8a2e:370:7334'), '2001:db8:85a3::');
  t.equal(truncateIp('2001:db8::1'), '2001:db8:0::');
  t.equal(truncateIp('::1'), '0:0:0::');
  t.equal(truncateIp('fe80::1%eth0'), 'fe80:0:0::');
  t.equal(truncateIp('not an address'), null);
  t.equal(truncateIp(undefined), null);
});
