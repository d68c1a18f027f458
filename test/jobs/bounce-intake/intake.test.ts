// Bounce intake against a real database: every sample DSN and feedback report mapped to its send, and what each leaves behind (events, send status,
// suppressions, attribution).
import t from 'tap';
import { intakeFixture } from './intake-fixture.js';

const f = await intakeFixture(t);

interface DsnCase {
  outcome: string;
  /** The send's status afterwards and its status_detail (a pattern). */
  status: string;
  detail?: RegExp;
  event: Record<string, unknown> | null;
  suppressed: boolean;
}

const DSNS: Record<string, DsnCase> = {
  'dsn-gmail-5.1.1.eml': {
    outcome: 'bounce_hard',
    status: 'bounced',
    detail: /^550 5\.1\.1 The email account that you tried to reach does not exist\./,
    event: {
      type: 'bounce',
      subtype: 'hard',
      detail: { source: 'dsn', action: 'failed', enhanced_code: '5.1.1', smtp_code: 550, reporting_mta: 'googlemail.com', mapped_by: 'verp' },
    },
    suppressed: true,
  },
  'dsn-outlook-5.1.10.eml': {
    outcome: 'bounce_hard',
    status: 'bounced',
    detail: /^550 5\.1\.10 RESOLVER\.ADR\.RecipientNotFound/,
    event: { type: 'bounce', subtype: 'hard', detail: { enhanced_code: '5.1.10' } },
    suppressed: true,
  },
  'dsn-outlook-com-5.5.0.eml': {
    outcome: 'bounce_hard',
    status: 'bounced',
    detail: /^550 5\.5\.0/,
    event: { type: 'bounce', subtype: 'hard' },
    suppressed: true,
  },
  'dsn-postfix-5.1.1.eml': {
    outcome: 'bounce_hard',
    status: 'bounced',
    detail: /Recipient address rejected: User unknown in local recipient table$/,
    event: { type: 'bounce', subtype: 'hard', detail: { remote_host: 'mailstore1.example.org' } },
    suppressed: true,
  },
  'dsn-yahoo-553-policy.eml': {
    outcome: 'bounce_soft',
    status: 'bounced',
    detail: /^553 5\.7\.1 \[BL21\]/,
    event: { type: 'bounce', subtype: 'soft' },
    suppressed: false,
  },
  'dsn-mailbox-full-5.2.2.eml': {
    outcome: 'bounce_soft',
    status: 'bounced',
    detail: /Mailbox full/,
    event: { type: 'bounce', subtype: 'soft', detail: { enhanced_code: '5.2.2' } },
    suppressed: false,
  },
  'bounce-yahoo-554.eml': {
    outcome: 'bounce_hard',
    status: 'bounced',
    detail: /^554: delivery error: dd This user doesn't have a yahoo\.com account/,
    event: { type: 'bounce', subtype: 'hard', detail: { source: 'plain_bounce', smtp_code: 554, enhanced_code: null } },
    suppressed: true,
  },
  'bounce-exim-plain.eml': {
    outcome: 'bounce_hard',
    status: 'bounced',
    detail: /^550 5\.1\.1/,
    event: { type: 'bounce', subtype: 'hard', detail: { source: 'plain_bounce' } },
    suppressed: true,
  },
  // A warning: the remote side still retries, so only a deferred event; the send stays delivered.
  'dsn-delayed-4.4.1.eml': {
    outcome: 'deferred',
    status: 'delivered',
    event: {
      type: 'deferred',
      subtype: null,
      detail: { reason: 'delayed_dsn', action: 'delayed', enhanced_code: '4.4.1', reply: 'connect to mx.example.com[192.0.2.25]:25: Connection timed out' },
    },
    suppressed: false,
  },
  'auto-reply.eml': { outcome: 'unknown', status: 'delivered', event: null, suppressed: false },
};

for (const [name, want] of Object.entries(DSNS)) {
  t.test(`${name} to the send's VERP address`, async (t) => {
    const from = await f.sender();
    const send = await f.delivered(from);
    const rcptId = await f.receive(send.verp, f.sample(name, send), name === 'auto-reply.eml' ? send.to : '');
    t.equal(await f.run(rcptId), want.outcome);
    const after = await f.state(send);
    t.equal(after.status, want.status);
    if (want.detail) t.match(after.status_detail, want.detail, 'status_detail is the diagnostic');
    else t.equal(after.status_detail, 'remote host: 250 2.0.0 Ok', 'status_detail unchanged');
    if (want.event) {
      t.equal(after.events.length, 1, 'one event');
      t.match(after.events[0], want.event);
      t.match(after.events[0]!.detail, { inbound_message_id: String, mapped_by: 'verp' });
    } else t.same(after.events, [], 'no event');
    if (want.suppressed) {
      t.match(after.suppressions, [
        { tenant_id: send.tenantId, email: send.to, reason: 'hard_bounce', source: 'bounce', detail: after.status_detail, message_id: send.id },
      ]);
    } else t.same(after.suppressions, [], 'not suppressed');
    t.match(await f.recipientRow(rcptId), { tenant_id: send.tenantId, outcome: want.outcome, send_id: send.id }, 'attributed and marked handled');
  });
}

const ARFS: Record<string, string> = {
  'arf-yahoo.eml': 'original_mail_from',
  'arf-microsoft-jmrp.eml': 'message_id',
  'arf-aol.eml': 'return_path',
};

for (const [name, mappedBy] of Object.entries(ARFS)) {
  t.test(`${name} to the feedback-loop address maps by ${mappedBy}`, async (t) => {
    const from = await f.sender();
    const send = await f.delivered(from);
    const rcptId = await f.receive(f.fbl, f.sample(name, send));
    t.equal(await f.run(rcptId), 'complaint');
    const after = await f.state(send);
    t.equal(after.status, 'delivered', 'a complaint does not change the status');
    t.match(after.events, [
      { type: 'complaint', subtype: null, detail: { source: 'arf', feedback_type: 'abuse', source_ip: '192.0.2.10', mapped_by: mappedBy } },
    ]);
    t.match(after.suppressions, [
      { tenant_id: send.tenantId, email: send.to, reason: 'complaint', source: 'complaint', detail: /^abuse report from /, message_id: send.id },
    ]);
    t.match(await f.recipientRow(rcptId), { tenant_id: send.tenantId, outcome: 'complaint', send_id: send.id });
  });
}

t.test('a feedback report mailed to the VERP address (providers that answer the envelope sender)', async (t) => {
  const send = await f.delivered(await f.sender());
  t.equal(await f.run(await f.receive(send.verp, f.sample('arf-microsoft-jmrp.eml', send))), 'complaint');
  t.match((await f.state(send)).events, [{ type: 'complaint', detail: { mapped_by: 'verp', user_agent: 'Microsoft Junk Mail Reporting Program' } }]);
});

t.test('a DSN for a send still being retried bounces it; a queued or dropped send was never out', async (t) => {
  const from = await f.sender();
  const deferred = await f.delivered(from, { status: 'deferred' });
  t.equal(await f.run(await f.receive(deferred.verp, f.sample('dsn-postfix-5.1.1.eml', deferred))), 'bounce_hard');
  t.equal((await f.state(deferred)).status, 'bounced');
  for (const status of ['queued', 'dropped']) {
    const send = await f.delivered(from, { status });
    t.equal(await f.run(await f.receive(send.verp, f.sample('dsn-postfix-5.1.1.eml', send))), 'not_sent', status);
    const after = await f.state(send);
    t.equal(after.status, status);
    t.same([after.events, after.suppressions], [[], []]);
  }
});

t.test('an address already suppressed keeps its first entry; the bounce still stands', async (t) => {
  const from = await f.sender();
  const send = await f.delivered(from);
  await f.sql`insert into suppressions (tenant_id, email, reason, source, created_at) values (${send.tenantId}, ${send.to}, 'manual', 'api', now())`;
  t.equal(await f.run(await f.receive(send.verp, f.sample('dsn-gmail-5.1.1.eml', send))), 'bounce_hard');
  const after = await f.state(send);
  t.match(after.events, [{ type: 'bounce', subtype: 'hard' }]);
  t.match(after.suppressions, [{ reason: 'manual', source: 'api' }]);
  t.equal(after.suppressions.length, 1);
});

t.test('a not-spam report is no complaint', async (t) => {
  const send = await f.delivered(await f.sender());
  const raw = f.sample('arf-yahoo.eml', send).toString().replace('Feedback-Type: abuse', 'Feedback-Type: not-spam');
  t.equal(await f.run(await f.receive(f.fbl, Buffer.from(raw))), 'not_a_complaint');
  t.same((await f.state(send)).events, []);
  t.same((await f.state(send)).suppressions, []);
});
