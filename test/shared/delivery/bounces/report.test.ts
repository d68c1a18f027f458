// The report parsers over every sample in test/fixtures/bounces (DSNs from Gmail, Exchange Online, outlook.com, Postfix relays, plain-text qmail/Exim
// bounces; ARF from Yahoo, Microsoft JMRP, AOL), and over malformed input.
import t from 'tap';
import { loadConfig } from '../../../../shared/config/index.js';
import { readReport, type Report } from '../../../../shared/delivery/bounces/report.js';
import { failureSubtype } from '../../../../shared/delivery/bounces/effects.js';
import { fixture, fixtureNames, type FixtureValues } from './fixtures.js';

const rules = loadConfig({}).bounceRules;
const V: FixtureValues = {
  VERP: 'b-0123456789abcdef0123456789abcdef-0123456789@mx.mailpath.local',
  MESSAGE_ID: '7f0c2d4e-1111-4a2b-9c3d-5e6f7a8b9c0d@mx.mailpath.local',
  RECIPIENT: 'ann@example.org',
  FBL: 'fbl@mx.mailpath.local',
};
const original = { message_id: V.MESSAGE_ID };

type DsnExpectation = {
  kind: 'dsn';
  standard: boolean;
  entry: Record<string, unknown>;
  subtype?: 'hard' | 'soft';
  original: Record<string, unknown> | null;
  reporting_mta?: string | null;
};
type Expectation = DsnExpectation | { kind: 'arf'; arf: Record<string, unknown> } | { kind: 'unknown' };

const EXPECTED: Record<string, Expectation> = {
  'dsn-gmail-5.1.1.eml': {
    kind: 'dsn',
    standard: true,
    reporting_mta: 'googlemail.com',
    subtype: 'hard',
    original: { ...original, return_path: null, to: [V.RECIPIENT] },
    entry: {
      recipient: V.RECIPIENT,
      action: 'failed',
      status: '5.1.1',
      remote_mta: /^gmail-smtp-in\.l\.google\.com\./,
      // The multi-line reply joined, its repeated "550-5.1.1" prefixes gone.
      diagnostic:
        "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or " +
        'unnecessary spaces. For more information, go to https://support.google.com/mail/?p=NoSuchUser 41be03b00d2f7-b2f0c1a1a2esor1234567a12.48 ' +
        '- gsmtp',
    },
  },
  'dsn-outlook-5.1.10.eml': {
    kind: 'dsn',
    standard: true,
    reporting_mta: 'AM0PR01MB1234.eurprd01.prod.exchangelabs.com',
    subtype: 'hard',
    original: { ...original, return_path: V.VERP },
    entry: {
      recipient: V.RECIPIENT,
      original_recipient: V.RECIPIENT,
      action: 'failed',
      status: '5.1.10',
      diagnostic: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    },
  },
  // config/bounce-rules.yaml judges 5.5.x soft before its "mailbox unavailable" text rule is reached.
  'dsn-outlook-com-5.5.0.eml': {
    kind: 'dsn',
    standard: true,
    subtype: 'hard',
    original,
    entry: { recipient: V.RECIPIENT, action: 'failed', status: '5.5.0', diagnostic: /^550 5\.5\.0 Requested action not taken: mailbox unavailable/ },
  },
  'dsn-postfix-5.1.1.eml': {
    kind: 'dsn',
    standard: true,
    reporting_mta: 'mail.example.org',
    subtype: 'hard',
    original: { ...original, return_path: V.VERP, subject: 'Hello' },
    entry: {
      recipient: V.RECIPIENT,
      action: 'failed',
      status: '5.1.1',
      remote_mta: 'mailstore1.example.org',
      diagnostic: `550 5.1.1 <${V.RECIPIENT}>: Recipient address rejected: User unknown in local recipient table`,
    },
  },
  'dsn-yahoo-553-policy.eml': {
    kind: 'dsn',
    standard: true,
    subtype: 'soft',
    original: { ...original, return_path: V.VERP },
    entry: {
      action: 'failed',
      status: '5.7.1',
      remote_mta: 'mta7.am0.yahoodns.net',
      diagnostic: /^553 5\.7\.1 \[BL21\] Connections will not be accepted from 192\.0\.2\.40, because the ip is in Spamhaus's list/,
    },
  },
  'dsn-delayed-4.4.1.eml': {
    kind: 'dsn',
    standard: true,
    reporting_mta: 'relay.example.net',
    original: { ...original, return_path: V.VERP },
    entry: {
      recipient: V.RECIPIENT,
      action: 'delayed',
      status: '4.4.1',
      remote_mta: null,
      diagnostic: 'connect to mx.example.com[192.0.2.25]:25: Connection timed out',
    },
  },
  'dsn-mailbox-full-5.2.2.eml': {
    kind: 'dsn',
    standard: true,
    subtype: 'soft',
    original,
    entry: {
      recipient: V.RECIPIENT,
      action: 'failed',
      status: '5.2.2',
      remote_mta: 'store.example.com',
      diagnostic: `552 5.2.2 <${V.RECIPIENT}>: Mailbox full: user is over quota`,
    },
  },
  'bounce-yahoo-554.eml': {
    kind: 'dsn',
    standard: false,
    reporting_mta: null,
    subtype: 'hard',
    original: { ...original, return_path: null },
    entry: {
      recipient: V.RECIPIENT,
      action: 'failed',
      status: null,
      diagnostic: `554: delivery error: dd This user doesn't have a yahoo.com account (${V.RECIPIENT}) [0] - mta1273.mail.gq1.yahoo.com`,
    },
  },
  'bounce-exim-plain.eml': {
    kind: 'dsn',
    standard: false,
    subtype: 'hard',
    original: { ...original, return_path: V.VERP },
    entry: {
      recipient: V.RECIPIENT,
      action: 'failed',
      status: '5.1.1',
      remote_mta: 'mx1.example.net [192.0.2.30]',
      diagnostic: `550 5.1.1 <${V.RECIPIENT}>: Recipient address rejected: User unknown`,
    },
  },
  'auto-reply.eml': { kind: 'unknown' },
  'arf-yahoo.eml': {
    kind: 'arf',
    arf: {
      feedback_type: 'abuse',
      user_agent: 'Yahoo!-Mail-Feedback/2.0',
      version: '0.1',
      original_mail_from: V.VERP,
      original_rcpt_to: [V.RECIPIENT],
      arrival_date: 'Tue, 03 Jun 2025 09:13:09 +0000',
      source_ip: '192.0.2.10',
      reported_domain: ['mail.acme.test'],
      original: { message_id: V.MESSAGE_ID, return_path: V.VERP, to: [V.RECIPIENT], subject: 'Hello' },
    },
  },
  'arf-microsoft-jmrp.eml': {
    kind: 'arf',
    arf: {
      feedback_type: 'abuse',
      user_agent: 'Microsoft Junk Mail Reporting Program',
      version: '1.0',
      original_mail_from: null,
      original_rcpt_to: [],
      arrival_date: 'Tue, 03 Jun 2025 02:13:09 -0700',
      source_ip: '192.0.2.10',
      reported_domain: ['mail.acme.test'],
      original: { message_id: V.MESSAGE_ID, return_path: null, to: ['redacted@outlook.com'] },
    },
  },
  'arf-aol.eml': {
    kind: 'arf',
    arf: {
      feedback_type: 'abuse',
      user_agent: 'AOL SComp',
      version: '0.1',
      original_mail_from: null,
      arrival_date: 'Tue, 03 Jun 2025 05:13:09 -0400 (EDT)',
      source_ip: '192.0.2.10',
      original: { message_id: V.MESSAGE_ID, return_path: V.VERP, to: ['redacted@aol.com'] },
    },
  },
};

t.test('every fixture has an expectation', async (t) => {
  t.same(fixtureNames(), Object.keys(EXPECTED).sort());
});

for (const name of fixtureNames()) {
  t.test(name, async (t) => {
    const want = EXPECTED[name]!;
    const report = await readReport(fixture(name, V), { mailFrom: name === 'auto-reply.eml' ? V.RECIPIENT : '' });
    t.equal(report.kind, want.kind, `read as ${want.kind}`);
    if (report.kind === 'dsn' && want.kind === 'dsn') {
      t.equal(report.dsn.standard, want.standard, 'standard (delivery-status part) or plain text');
      if (want.reporting_mta !== undefined) t.equal(report.dsn.reporting_mta, want.reporting_mta);
      t.equal(report.dsn.recipients.length, 1);
      t.match(report.dsn.recipients[0], want.entry);
      if (want.original === null) t.equal(report.dsn.original, null);
      else t.match(report.dsn.original, want.original);
      if (want.subtype) t.equal(failureSubtype(rules, report.dsn.recipients[0]!), want.subtype, 'hard or soft');
    }
    if (report.kind === 'arf' && want.kind === 'arf') t.match(report.arf, want.arf);
  });
}

const dsnOf = async (report: Promise<Report>) => {
  const r = await report;
  if (r.kind !== 'dsn') throw new Error(`expected a DSN, got ${JSON.stringify(r)}`);
  return r.dsn;
};

const mime = (contentType: string, parts: string[]) =>
  Buffer.from(
    [
      `From: MAILER-DAEMON@relay.example.net`,
      `To: ${V.VERP}`,
      `Subject: report`,
      `MIME-Version: 1.0`,
      `Content-Type: ${contentType}; boundary="B"`,
      '',
      ...parts.map((p) => `--B\r\n${p}`),
      '--B--',
      '',
    ].join('\r\n'),
  );

t.test('delivery-status fields: folding, comments, missing groups, implied actions, several recipients', async (t) => {
  const status = [
    'Content-Type: message/delivery-status',
    '',
    'Final-Recipient: rfc822; <Bob@Example.ORG>',
    'Action: failed (bad address)',
    'Status: 5.01.001 (bad destination mailbox)',
    'Diagnostic-Code: smtp; 550 User unknown',
    '',
    'Final-Recipient: rfc822; carol@example.org',
    'Status: 4.2.2',
    '',
    'Final-Recipient: rfc822; dave@example.org',
    'Action: delivered',
    'Status: 2.0.0',
    '',
    'Final-Recipient: rfc822; eve@example.org',
    'Action: bogus',
    '',
  ].join('\r\n');
  const dsn = await dsnOf(
    readReport(mime('multipart/report; report-type=delivery-status', ['Content-Type: text/plain\r\n\r\nReport.\r\n', status]), { mailFrom: '' }),
  );
  t.equal(dsn.reporting_mta, null, 'no per-message group');
  t.same(
    dsn.recipients.map((r) => [r.recipient, r.action, r.status, r.diagnostic]),
    [
      ['bob@example.org', 'failed', '5.1.1', '550 User unknown'],
      ['carol@example.org', 'delayed', '4.2.2', null],
      ['dave@example.org', 'delivered', '2.0.0', null],
    ],
    'an action without status or a known word is dropped',
  );
});

t.test('hard or soft for a failed recipient', async (t) => {
  t.equal(failureSubtype(rules, { status: '4.2.2', diagnostic: '452 4.2.2 Mailbox full' }), 'soft', 'gave up after temporary failures');
  t.equal(failureSubtype(rules, { status: '5.0.0', diagnostic: '550 5.1.1 No such user' }), 'hard', 'a vague status gives way to the diagnostic');
  t.equal(failureSubtype(rules, { status: '5.0.0', diagnostic: 'something went wrong' }), 'soft', '5.0.0 alone says nothing about the address');
  t.equal(failureSubtype(rules, { status: null, diagnostic: '550 no such user here' }), 'hard', 'text rules without a status');
  t.equal(failureSubtype(rules, { status: null, diagnostic: '421 try later' }), 'soft');
  t.equal(failureSubtype(rules, { status: '5.7.1', diagnostic: '550 5.7.1 blocked by policy' }), 'soft');
});

t.test('not reports', async (t) => {
  t.match(await readReport(Buffer.from('\x00\x01 not mail at all'), { mailFrom: '' }), { kind: 'unknown' });
  t.match(await readReport(Buffer.alloc(0), { mailFrom: '' }), { kind: 'unknown' });
  const ooo = Buffer.from(`From: ann@example.org\r\nTo: ${V.VERP}\r\nSubject: Out of office\r\n\r\nBack on Monday. Call 555 0100.\r\n`);
  t.match(await readReport(ooo, { mailFrom: '' }), { kind: 'unknown' }, 'a null sender alone does not make a bounce');
  const daemonWithoutReply = Buffer.from(`From: MAILER-DAEMON@x.example\r\nTo: ${V.VERP}\r\nSubject: Undelivered Mail\r\n\r\nSomething happened.\r\n`);
  t.match(await readReport(daemonWithoutReply, { mailFrom: '' }), { kind: 'unknown' }, 'a bounce that names no SMTP failure');
  const emptyReport = mime('multipart/report; report-type=delivery-status', [
    'Content-Type: text/plain\r\n\r\nHello\r\n',
    'Content-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; x.example\r\n',
  ]);
  t.match(await readReport(emptyReport, { mailFrom: '' }), { kind: 'unknown', reason: /report of type delivery-status/ });
});

t.test('plain-text bounces: qmail status, warnings', async (t) => {
  const qmail = Buffer.from(
    `From: MAILER-DAEMON@mail.example.net\r\nTo: ${V.VERP}\r\nSubject: failure notice\r\n\r\nHi. This is the qmail-send program at mail.example.net.\r\n` +
      `I'm afraid I wasn't able to deliver your message to the following addresses.\r\nThis is a permanent error; I've given up. Sorry it didn't ` +
      `work out.\r\n\r\n` +
      `<bob@example.net>:\r\nSorry, no mailbox here by that name. (#5.1.1)\r\n`,
  );
  t.match((await dsnOf(readReport(qmail, { mailFrom: '' }))).recipients, [
    { recipient: 'bob@example.net', action: 'failed', status: '5.1.1', diagnostic: null },
  ]);
  const warning = Buffer.from(
    `From: Mail Delivery System <Mailer-Daemon@mail.example.net>\r\nTo: ${V.VERP}\r\nSubject: Warning: message 1uMGt2-0004Xy-3k delayed 24 hours\r\n\r\n` +
      `This message was created automatically by mail delivery software.\r\nA message that you sent has not yet been delivered to one or more of its\r\n` +
      `recipients after more than 24 hours on the queue on mail.example.net.\r\n\r\n  bob@example.net\r\n    host mx.example.net [192.0.2.9]\r\n ` +
      `   451 4.3.0 Temporary local problem\r\n\r\nNo action is required on your part.\r\n`,
  );
  t.match((await dsnOf(readReport(warning, { mailFrom: '' }))).recipients, [
    { action: 'delayed', status: '4.3.0', diagnostic: '451 4.3.0 Temporary local problem', remote_mta: 'mx.example.net [192.0.2.9]' },
  ]);
});

t.test('feedback reports: type spellings and missing fields', async (t) => {
  const arf = (fields: string) =>
    readReport(
      mime('multipart/report; report-type=feedback-report', [
        'Content-Type: text/plain\r\n\r\nA report.\r\n',
        `Content-Type: message/feedback-report\r\n\r\n${fields}\r\n`,
      ]),
      { mailFrom: '' },
    );
  t.match(await arf('Feedback-Type: Not-Spam\r\nUser-Agent: x/1\r\nVersion: 1'), {
    kind: 'arf',
    arf: { feedback_type: 'not-spam', original: null, original_rcpt_to: [] },
  });
  t.match(await arf('User-Agent: x/1\r\n\r\nOriginal-Rcpt-To: a@example.org\r\nOriginal-Rcpt-To: <B@example.org>'), {
    kind: 'arf',
    arf: { feedback_type: null, original_rcpt_to: ['a@example.org', 'b@example.org'] },
  });
});
