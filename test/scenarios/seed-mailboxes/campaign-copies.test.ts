// Seed copies of campaign sends end to end: the fan-out adds the active seeds through the send path (outside the audience and its stats, once), and a copy
// reaching a seed hosted here through the MX socket records inbox, or spam with a spam marker.
import t from 'tap';
import type { Services } from '../../../main/services.js';
import { tenantFeedbackTag } from '../../../shared/campaigns/feedback-id.js';
import { createSeed, placementOf, seedHits } from '../../../shared/deliverability/seed-mailboxes/service.js';
import { MX_HOST, startTestMx, tenantDomain } from '../../mta/inbound/fixtures.js';
import { deliverTo, seedCopy, sentCampaign } from '../../helpers/seed-mailboxes.js';

const mx = await startTestMx(t, { env: { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1000000]' } });
const deps = mx.deps as Services;
const { sql } = mx;
const actor = { type: 'system' as const, id: null };

// A seed hosted here (a workspace mailbox of a tenant whose MX points at Mailpath), one at a provider, one paused.
const hosted = await tenantDomain(sql, { mailboxes: ['seed'], webhook: 'none' });
const hostedAddress = `seed@${hosted.name}`;
const here = await createSeed(deps, actor, { email: hostedAddress, provider: 'custom', label: 'hosted here' });
const away = await createSeed(deps, actor, { email: 'mp-seed@gmail.com', provider: 'gmail' });
const paused = await createSeed(deps, actor, { email: 'mp-seed@yahoo.com', provider: 'yahoo' });
await sql`update seed_mailboxes set active = false where id = ${paused.id}`;

t.test('the fan-out sends each active seed one copy through the send path, outside the audience and its counters', async (t) => {
  const { campaignId, tenantId, outcome } = await sentCampaign(deps, { contacts: 3 });
  t.equal(outcome, 'completed');
  const hits = await sql`select seed_id, email, send_state, sent_at, placement from seed_hits where campaign_id = ${campaignId} order by email`;
  t.same(
    hits.map((h) => [h['email'], h['send_state']]),
    [
      ['mp-seed@gmail.com', 'sent'],
      [hostedAddress, 'sent'],
    ],
    'active seeds only, each sent',
  );
  t.ok(
    hits.every((h) => h['sent_at'] !== null && h['placement'] === null),
    'placement pending',
  );

  const sends = await sql`select to_email, campaign_id, contact_id, source, status, tenant_id from sends where tenant_id = ${tenantId} order by to_email`;
  t.equal(sends.length, 5, 'three contacts and two seeds');
  const seedSends = sends.filter((s) => s['to_email'] === hostedAddress || s['to_email'] === 'mp-seed@gmail.com');
  t.equal(seedSends.length, 2);
  t.ok(
    seedSends.every((s) => s['campaign_id'] === null && s['contact_id'] === null && s['source'] === 'campaign' && s['status'] === 'queued'),
    'seed copies are queued campaign-source sends without campaign or contact',
  );
  const [stats] =
    await sql`select sum(targeted)::int as targeted, sum(queued)::int as queued, sum(sent)::int as sent from campaign_stats where campaign_id = ${campaignId}`;
  t.same(stats, { targeted: 3, queued: 3, sent: 3 }, "the campaign's stats count its contacts only");
  const [recipients] = await sql`select count(*)::int as n from campaign_recipients where campaign_id = ${campaignId}`;
  t.equal(recipients!['n'], 3, 'seeds are not recipients');

  // A copy carries what every recipient's message carries: the campaign's bulk headers, its own Message-ID.
  const copy = await seedCopy(sql, campaignId, hostedAddress);
  const head = copy.message
    .toString('utf8')
    .split('\r\n\r\n')[0]!
    .replace(/\r\n[ \t]+/g, ' ');
  t.match(head, new RegExp(`Message-ID: <${copy.sendId}@${MX_HOST.replace(/\./g, '\\.')}>`, 'i'));
  t.match(head, new RegExp(`Feedback-ID: ${campaignId}:${tenantFeedbackTag(deps.linkKey, tenantId)}:campaign:mailpath`));
  t.notMatch(head, tenantId, "the tenant's id is in no header (the Feedback-ID carries an opaque tag)");
  t.match(head, /List-Unsubscribe:/);

  // A rerun (a continuation job, another slot) sends nothing twice.
  const { runFanout } = await import('../../../shared/campaigns/fanout.js');
  await runFanout(deps, { campaign_id: campaignId, slot: 1 });
  const [again] = await sql`select count(*)::int as n from sends where tenant_id = ${tenantId}`;
  t.equal(again!['n'], 5);

  const view = await seedHits(deps, away.id, { limit: 25, offset: 0 });
  t.match(view.items[0], { expected: 'inbox', observed: 'pending', hit: { campaign_id: campaignId, campaign_name: 'Spring', send_status: 'queued' } });
  const later = new Date(Date.now() + 25 * 3_600_000);
  t.same(placementOf(view.items[0]!.hit, later, 24), { expected: 'inbox', observed: 'missing' }, 'unseen 24 hours after it left: missing');
});

t.test('a copy reaching a seed hosted here through the MX records inbox; the first observation stands', async (t) => {
  const { campaignId } = await sentCampaign(deps, { contacts: 1, name: 'Autumn' });
  const copy = await seedCopy(sql, campaignId, hostedAddress);
  t.equal(await deliverTo(mx.port, hostedAddress, copy.message), 250);
  const [hit] = await sql`select placement, placement_source, observed_at from seed_hits where send_id = ${copy.sendId}`;
  t.match(hit, { placement: 'inbox', placement_source: 'mx' });
  t.ok(hit!['observed_at']);
  // Stored in the seed's mailbox like any mail to it.
  const [stored] = await sql`select count(*)::int as n from mailbox_messages where mailbox_id = ${hosted.mailboxIds['seed']!}`;
  t.ok(stored!['n'] >= 1, "the copy is in the seed's workspace mailbox");

  // The same copy again with a spam verdict (a client's retry): the first observation stands.
  t.equal(await deliverTo(mx.port, hostedAddress, Buffer.concat([Buffer.from('X-Spam-Flag: YES\r\n'), copy.message])), 250);
  const [still] = await sql`select placement from seed_hits where send_id = ${copy.sendId}`;
  t.equal(still!['placement'], 'inbox');

  const view = await seedHits(deps, here.id, { limit: 25, offset: 0 });
  t.match(
    view.items.find((i) => i.hit.campaign_id === campaignId),
    { expected: 'inbox', observed: 'inbox' },
  );
});

t.test(
  'spam markers: X-Spam-Flag / X-Spam-Status from a filter on the way; at the MX a copy is matched by its Message-ID only (a Feedback-ID could be ' +
    'forged by any recipient)',
  async (t) => {
    const { campaignId } = await sentCampaign(deps, { contacts: 1, name: 'Winter' });
    const copy = await seedCopy(sql, campaignId, hostedAddress);
    const flagged = Buffer.concat([Buffer.from('X-Spam-Status: Yes, score=7.1 required=5.0\r\n'), copy.message]);
    t.equal(await deliverTo(mx.port, hostedAddress, flagged), 250);
    t.match((await sql`select placement, placement_source from seed_hits where send_id = ${copy.sendId}`)[0], { placement: 'spam', placement_source: 'mx' });

    const second = await sentCampaign(deps, { contacts: 1, name: 'Summer' });
    const other = await seedCopy(sql, second.campaignId, hostedAddress);
    const forwarded = Buffer.from(other.message.toString('latin1').replace(/^Message-ID: <[^>]+>/im, 'Message-ID: <forwarded-1@relay.example>'), 'latin1');
    t.equal(await deliverTo(mx.port, hostedAddress, forwarded), 250);
    t.match(
      (await sql`select placement from seed_hits where send_id = ${other.sendId}`)[0],
      { placement: null },
      'a Feedback-ID alone records nothing at the MX',
    );
    t.equal(await deliverTo(mx.port, hostedAddress, other.message), 250);
    t.match(
      (await sql`select placement from seed_hits where send_id = ${other.sendId}`)[0],
      { placement: 'inbox' },
      'the real copy (its own Message-ID) is recorded',
    );

    // Mail to the seed that is no copy (no Message-ID or Feedback-ID of ours) records nothing.
    const before = await sql`select count(*)::int as n from seed_hits where placement is not null`;
    t.equal(
      await deliverTo(mx.port, hostedAddress, Buffer.from('From: a@b.example\r\nTo: x\r\nSubject: hi\r\nMessage-ID: <x@b.example>\r\n\r\nhello\r\n')),
      250,
    );
    t.same(await sql`select count(*)::int as n from seed_hits where placement is not null`, before);
  },
);

t.test('a paused seed gets no copy', async (t) => {
  const { campaignId } = await sentCampaign(deps, { contacts: 1, name: 'Paused' });
  t.equal((await sql`select count(*)::int as n from seed_hits where campaign_id = ${campaignId} and seed_id = ${paused.id}`)[0]!['n'], 0);
  t.equal((await sql`select count(*)::int as n from seed_hits where campaign_id = ${campaignId}`)[0]!['n'], 2);
});
