// The List-Unsubscribe mailto address through a real SMTP session to the MX: accepted for a valid token and stored with its job before the 250, refused at
// RCPT for a bad one, and applied by the unsubscribe intake like the https link (once).
import t from 'tap';
import type { Services } from '../../../main/services.js';
import { startUnsubscribeIntake } from '../../../jobs/unsubscribe-intake/worker.js';
import { INBOUND_UNSUBSCRIBE_JOBS } from '../../../shared/inbound/jobs.js';
import { unsubscribeAddress } from '../../../shared/engagement/tracking/link-tokens.js';
import { runUnsubscribeMail } from '../../../shared/engagement/tracking/unsubscribe-mail.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { campaignSend, campaignStats, engagementEvents, plainSend } from '../../helpers/tracking.js';
import { MX_HOST, startTestMx } from '../../mta/inbound/fixtures.js';

const mx = await startTestMx(t);
// startTestMx builds every service (main/services.ts): the send path too, for the sends unsubscribed here.
const deps = mx.deps as Services;
const { sql } = mx;

/** One SMTP transaction from the reader's mail client; the RCPT reply, and the end-of-DATA reply when RCPT was accepted. */
async function mailTo(to: string, from = 'reader@dest.example'): Promise<{ rcpt: number; rcptText: string; done?: number }> {
  const { client } = await RawSmtpClient.open(mx.port);
  try {
    await client.command('EHLO client.dest.example');
    await client.command(`MAIL FROM:<${from}>`);
    const rcpt = await client.command(`RCPT TO:<${to}>`);
    if (rcpt.code !== 250) return { rcpt: rcpt.code, rcptText: rcpt.text };
    await client.command('DATA');
    const done = await client.command(`From: ${from}\r\nTo: ${to}\r\nSubject: unsubscribe\r\n\r\nunsubscribe\r\n.`);
    return { rcpt: rcpt.code, rcptText: rcpt.text, done: done.code };
  } finally {
    await client.command('QUIT').catch(() => {});
  }
}

const recipientRows = (address: string) =>
  sql<{ id: string; kind: string; tenant_id: string | null }[]>`select id, kind, tenant_id from inbound_recipients where recipient = ${address}`;

t.test('a valid mailto address: stored with its job before the 250, then the contact is unsubscribed by the intake', async (t) => {
  const f = await campaignSend(deps);
  const address = unsubscribeAddress(deps.linkKey, f.sendId, MX_HOST);
  const answer = await mailTo(address, f.email);
  t.same(answer, { rcpt: 250, rcptText: answer.rcptText, done: 250 });
  const [row] = await recipientRows(address);
  t.equal(row!.kind, 'unsubscribe');
  const jobs = await sql`select data from pgboss.job where name = ${INBOUND_UNSUBSCRIBE_JOBS} and data->>'recipient_id' = ${row!.id}`;
  t.equal(jobs.length, 1, 'the job committed with the message');

  const intake = await startUnsubscribeIntake({
    ...deps,
    config: { ...deps.config, delivery: { ...deps.config.delivery, workers: { ...deps.config.delivery.workers, poll_interval_ms: 500 } } },
  });
  t.teardown(() => intake.stop());
  await pollUntil('the contact unsubscribed', async () => {
    const [c] = await sql`select status from contacts where id = ${f.contactId}`;
    return c!['status'] === 'unsubscribed' ? true : undefined;
  });
  const events = await engagementEvents(sql, f.sendId, 'unsubscribe');
  t.equal(events.length, 1);
  t.match(events[0], { campaign_id: f.campaignId, contact_id: f.contactId, detail: { method: 'mailto' } });
  t.match(await campaignStats(sql, f.campaignId!), { unsubscribes: 1 });
  t.equal((await recipientRows(address))[0]!.tenant_id, f.tenantId, "the stored mail is the send's tenant's");

  // The same mail again (a client retrying), and the job run twice: nothing more happens.
  t.equal((await mailTo(address, f.email)).done, 250);
  const rows = await recipientRows(address);
  for (const r of rows) t.equal(await runUnsubscribeMail(deps, r.id), 'already');
  t.equal((await engagementEvents(sql, f.sendId, 'unsubscribe')).length, 1, 'idempotent');
  t.match(await campaignStats(sql, f.campaignId!), { unsubscribes: 1 });
});

t.test('a send without a contact: the address is suppressed, as by the link', async (t) => {
  const f = await plainSend(deps);
  const address = unsubscribeAddress(deps.linkKey, f.sendId, MX_HOST);
  t.equal((await mailTo(address)).done, 250);
  const [row] = await recipientRows(address);
  t.equal(await runUnsubscribeMail(deps, row!.id), 'unsubscribed');
  const suppressions = await sql`select reason, source from suppressions where tenant_id = ${f.tenantId} and email = ${f.email}`;
  t.same(suppressions, [{ reason: 'unsubscribe', source: 'unsubscribe-link' }]);
});

t.test('an invalid token is refused at RCPT and nothing is stored', async (t) => {
  const f = await campaignSend(deps);
  const address = unsubscribeAddress(deps.linkKey, f.sendId, MX_HOST);
  const local = address.split('@')[0]!;
  const bad = [
    `${local.slice(0, -1)}${local.endsWith('A') ? 'B' : 'A'}@${MX_HOST}`,
    `${local.toLowerCase()}@${MX_HOST}`,
    `u-garbage@${MX_HOST}`,
    `${local}@other.example`,
  ];
  for (const to of bad) {
    const answer = await mailTo(to);
    t.not(answer.rcpt, 250, to.slice(0, 30));
    t.equal(answer.done, undefined);
    t.equal((await recipientRows(to)).length, 0);
  }
  // Another last character (one differing only in the MAC's unused low bits is refused too: one spelling per token).
  t.equal((await mailTo(`${local.slice(0, -1)}${local.endsWith('x') ? 'y' : 'x'}@${MX_HOST}`)).rcpt, 550, 'a forged token: 550 no such recipient');
  const [c] = await sql`select status from contacts where id = ${f.contactId}`;
  t.equal(c!['status'], 'active');
});
