// What a report means for its send, decided without a database: which recipient entry counts, test-mode and never-sent sends, repeats, and feedback types.
import t from 'tap';
import { decideEffect } from '../../../../shared/delivery/bounces/effects.js';
import type { ArfReport } from '../../../../shared/delivery/bounces/arf.js';
import type { Dsn, DsnRecipient } from '../../../../shared/delivery/bounces/dsn.js';
import type { ReportSend } from '../../../../shared/delivery/bounces/queries.js';
import { loadConfig } from '../../../../shared/config/index.js';

const rules = loadConfig({}).bounceRules;
const send: ReportSend = { id: 's', tenant_id: 't', mode: 'live', status: 'delivered', to_email: 'ann@example.org', message_id: 'm@x' };
const entry = (over: Partial<DsnRecipient>): DsnRecipient => ({
  recipient: 'ann@example.org',
  original_recipient: null,
  action: 'failed',
  status: '5.1.1',
  diagnostic: '550 5.1.1 no such user',
  remote_mta: null,
  ...over,
});
const dsn = (...recipients: DsnRecipient[]) => ({
  kind: 'dsn' as const,
  dsn: { standard: true, reporting_mta: null, arrival_date: null, recipients, original: null } satisfies Dsn,
});
const arf = (feedback_type: string | null) => ({
  kind: 'arf' as const,
  arf: {
    feedback_type,
    user_agent: null,
    version: null,
    original_mail_from: null,
    original_rcpt_to: [],
    arrival_date: null,
    source_ip: null,
    reported_domain: [],
    original: null,
  } satisfies ArfReport,
});
const decide = (report: Parameters<typeof decideEffect>[1], over: Partial<ReportSend> = {}, complainedBefore = false) =>
  decideEffect(rules, report, { ...send, ...over }, { complainedBefore });

t.test('the entry about the send recipient decides; without one, any entry does', async (t) => {
  t.match(
    decide(dsn(entry({ recipient: 'bob@example.org' }), entry({ action: 'delivered', status: '2.0.0' }))),
    { effect: 'none', outcome: 'no_failure' },
    'another address failed',
  );
  t.match(
    decide(dsn(entry({ recipient: 'fwd@elsewhere.example', original_recipient: 'ann@example.org', status: '5.2.2', diagnostic: '552 5.2.2 full' }))),
    { effect: 'bounce', subtype: 'soft' },
    'matched by Original-Recipient',
  );
  t.match(
    decide(dsn(entry({ recipient: 'forwarded@elsewhere.example' }))),
    { effect: 'bounce', subtype: 'hard', reply: '550 5.1.1 no such user' },
    'forwarded: the one entry there is',
  );
  t.match(decide(dsn(entry({ action: 'delayed', status: '4.4.1' }), entry({ recipient: 'bob@example.org' }))), { effect: 'deferred' });
  t.match(decide(dsn(entry({ action: 'delayed', status: '4.4.1' }), entry({ status: '5.1.1' }))), { effect: 'bounce' }, 'a failure wins over a delay');
  for (const action of ['delivered', 'relayed', 'expanded'] as const)
    t.match(decide(dsn(entry({ action, status: '2.0.0' }))), { effect: 'none', outcome: 'no_failure' }, action);
  t.match(decide(dsn(entry({ diagnostic: null, status: null }))), { effect: 'bounce', reply: 'reported as failed, no diagnostic given' });
  t.match(decide(dsn(entry({ diagnostic: null, status: '5.1.1' }))), { effect: 'bounce', subtype: 'hard', reply: 'status 5.1.1' });
});

t.test('sends a report cannot be about', async (t) => {
  t.match(decide(dsn(entry({})), { mode: 'test', status: 'simulated' }), { effect: 'none', outcome: 'test_send' });
  t.match(decide(arf('abuse'), { mode: 'test', status: 'delivered' }), { effect: 'none', outcome: 'test_send' }, 'test mode, whatever the status says');
  for (const status of ['queued', 'dropped', 'simulated', 'failed'] as const)
    t.match(decide(dsn(entry({})), { status }), { effect: 'none', outcome: 'not_sent' }, status);
  for (const status of ['deferred', 'sending'] as const)
    t.match(decide(dsn(entry({})), { status }), { effect: 'bounce' }, `${status}: an earlier attempt may have got through`);
});

t.test('repeats', async (t) => {
  t.match(decide(dsn(entry({})), { status: 'bounced' }), { effect: 'none', outcome: 'already_bounced' });
  t.match(decide(dsn(entry({ action: 'delayed', status: '4.4.1' })), { status: 'bounced' }), { effect: 'none', outcome: 'already_bounced' });
  t.match(decide(arf('abuse'), { status: 'bounced' }), { effect: 'complaint' }, 'a complaint about a bounced send still counts');
  t.match(decide(arf('abuse'), {}, true), { effect: 'none', outcome: 'already_complained' });
});

t.test('feedback types', async (t) => {
  for (const type of ['abuse', 'fraud', 'virus', 'other']) t.match(decide(arf(type)), { effect: 'complaint' }, type);
  for (const type of ['not-spam', 'auth-failure', 'opt-out', null]) t.match(decide(arf(type)), { effect: 'none', outcome: 'not_a_complaint' }, String(type));
});
