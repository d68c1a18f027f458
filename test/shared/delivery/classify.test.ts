// Bounce classification: enhanced-code parsing, code patterns, the shipped rules in order, and what counts as temporary.
import t from 'tap';
import { bounceClass, classify, codeMatches, parseEnhancedCode } from '../../../shared/delivery/classify.js';
import { loadConfig, type BounceRulesConfig } from '../../../shared/config/index.js';

const shipped = loadConfig({}).bounceRules;
const reply = (code: number, text: string) => classify(shipped, { kind: 'reply', code, text });

t.test('the enhanced code is read after the basic code, on any reply line, only when the classes agree', async (t) => {
  t.equal(parseEnhancedCode('550 5.1.1 <a@b.example>: Recipient address rejected', 550), '5.1.1');
  t.equal(parseEnhancedCode('550-5.7.1 [192.0.2.1] Our system has detected\n550-5.7.1 unsolicited mail', 550), '5.7.1');
  t.equal(parseEnhancedCode('5.1.10 null MX'), '5.1.10');
  t.equal(parseEnhancedCode('452 4.2.2 Mailbox full', 452), '4.2.2');
  t.equal(parseEnhancedCode('550 Requested action not taken: mailbox unavailable', 550), null);
  t.equal(parseEnhancedCode('550 4.2.2 inconsistent', 550), null, 'a 4.x.x code on a 5xx reply is not trusted');
  t.equal(parseEnhancedCode('550 see https://x.example/5.1.1', 550), null, 'only where an enhanced code stands, not anywhere in the text');
  t.equal(parseEnhancedCode('550 5.01.001 padded', 550), '5.1.1');
});

t.test('code patterns match field by field, x matching any number', async (t) => {
  t.ok(codeMatches('5.1.1', '5.1.1'));
  t.notOk(codeMatches('5.1.1', '5.1.10'));
  t.ok(codeMatches('5.7.x', '5.7.26'));
  t.ok(codeMatches('5.X.x', '5.4.4'));
  t.notOk(codeMatches('5.7.x', '5.1.7'));
  t.notOk(codeMatches('4.7.x', '5.7.1'));
});

t.test('the shipped rules: unknown mailboxes are hard, policy and mailbox-status refusals soft', async (t) => {
  t.same(reply(550, '550 5.1.1 User unknown').verdict, { result: 'bounce', subtype: 'hard' });
  t.same(reply(550, '550 5.1.10 Recipient domain has a null MX').verdict, { result: 'bounce', subtype: 'hard' });
  t.same(reply(550, '550 5.7.1 Message rejected as spam').verdict, { result: 'bounce', subtype: 'soft' });
  t.same(reply(552, '552 5.2.2 Mailbox full').verdict, { result: 'bounce', subtype: 'soft' });
  t.same(reply(550, '550 5.4.4 Unable to route').verdict, { result: 'bounce', subtype: 'hard' }, 'the exact rule comes before 5.4.x');
  t.same(
    reply(550, '550 5.5.0 Requested action not taken: mailbox unavailable').verdict,
    { result: 'bounce', subtype: 'hard' },
    'outlook.com: an unknown recipient under 5.5.0',
  );
  t.same(reply(550, '550 5.5.0 Syntax error').verdict, { result: 'bounce', subtype: 'soft' }, 'other 5.5.0 replies stay protocol errors');
  t.same(reply(554, '554 5.7.1 User unknown').verdict, { result: 'bounce', subtype: 'soft' }, 'first match wins: the code rule precedes the text rule');
  t.same(reply(550, '550 No such user here').verdict, { result: 'bounce', subtype: 'hard' }, 'text rule, case-insensitive');
  t.same(reply(550, '550 Message blocked by policy').verdict, { result: 'bounce', subtype: 'soft' });
  t.same(reply(550, '550 Go away').verdict, { result: 'bounce', subtype: 'hard' }, 'nothing matched: default');
  const c = reply(550, '550 5.1.1 <x@y.example>: Recipient address rejected');
  t.same(
    { code: c.smtpCode, enhanced: c.enhancedCode, reply: c.reply },
    { code: 550, enhanced: '5.1.1', reply: '550 5.1.1 <x@y.example>: Recipient address rejected' },
  );
});

t.test('a rule with code and text needs both; a code rule never matches a reply without a code', async (t) => {
  const rules: BounceRulesConfig = {
    rules: [
      { code: '5.7.x', text: 'mailbox', class: 'hard' },
      { code: '5.x.x', class: 'soft' },
    ],
    default: 'hard',
  };
  t.equal(bounceClass(rules, '550 5.7.1 mailbox disabled by policy', '5.7.1'), 'hard');
  t.equal(bounceClass(rules, '550 5.7.1 spam', '5.7.1'), 'soft');
  t.equal(bounceClass(rules, '550 mailbox gone', null), 'hard', 'no code: only the default is left');
  t.equal(bounceClass({ rules: [], default: 'soft' }, '550 5.1.1 gone', '5.1.1'), 'soft');
});

t.test('2xx is delivered; 4xx, network and DNS failures are temporary; unroutable domains bounce', async (t) => {
  t.same(reply(250, '250 2.0.0 Ok: queued as 12345').verdict, { result: 'delivered' });
  t.same(reply(451, '451 4.7.1 Greylisted, try again later').verdict, { result: 'temporary' });
  t.same(reply(421, '421 4.3.2 Service shutting down').verdict, { result: 'temporary' });
  t.equal(reply(451, '451 4.7.1 Greylisted').enhancedCode, '4.7.1');
  const network = classify(shipped, { kind: 'network', text: 'ETIMEDOUT: Timeout' });
  t.same(network, { verdict: { result: 'temporary' }, smtpCode: null, enhancedCode: null, reply: 'ETIMEDOUT: Timeout' });
  t.same(classify(shipped, { kind: 'dns', text: 'SERVFAIL' }).verdict, { result: 'temporary' });
  const nullMx = classify(shipped, { kind: 'unroutable', enhanced: '5.1.10', text: '5.1.10 no mail here' });
  t.same(nullMx.verdict, { result: 'bounce', subtype: 'hard' });
  t.equal(nullMx.enhancedCode, '5.1.10');
});

t.test('the shipped rules: a sender-side or undefined 5xx never suppresses the recipient', async (t) => {
  const { loadConfig } = await import('../../../shared/config/index.js');
  const { bounceClass } = await import('../../../shared/delivery/classify.js');
  const rules = loadConfig({}).bounceRules;
  t.equal(bounceClass(rules, '553 5.1.7 sender address rejected', '5.1.7'), 'soft');
  t.equal(bounceClass(rules, '550 5.1.8 bad sender domain', '5.1.8'), 'soft');
  t.equal(bounceClass(rules, '550 5.0.0 rejected', '5.0.0'), 'soft');
  t.equal(bounceClass(rules, '550 5.1.1 user unknown', '5.1.1'), 'hard');
});
