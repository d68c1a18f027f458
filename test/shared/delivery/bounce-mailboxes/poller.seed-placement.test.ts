// Seed copies fetched over POP3 from a real dovecot on loopback: a seed naming a bounce mailbox has its copies' placement recorded by the poller (inbox, or
// spam by a folder marker), once, matched by Message-ID.
import t from 'tap';
import { pollMailbox, type PollerDeps } from '../../../../shared/delivery/bounce-mailboxes/poller.js';
import { createBounceMailbox } from '../../../../shared/delivery/bounce-mailboxes/service.js';
import { findBounceMailbox } from '../../../../shared/delivery/bounce-mailboxes/queries.js';
import { createSeed, seedHits } from '../../../../shared/deliverability/seed-mailboxes/service.js';
import { buildTestApp } from '../../../helpers/app.js';
import { startDovecot } from '../../../helpers/dovecot.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';
import { seedCopy, sentCampaign } from '../../../helpers/seed-mailboxes.js';

const actor = { type: 'system' as const, id: null };

t.test("copies in the seed's POP3 mailbox: inbox, spam by its folder marker, each recorded once; other mail changes nothing", async (t) => {
  const s = await buildTestApp(t, {
    env: { MAILPATH_CONFIG__BOUNCE_MAILBOXES__ALLOW_PRIVATE_ADDRESSES: 'true', MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1000000]' },
  });
  const pop = await startDovecot(t, { 'seeds@isp.test': 'pop-secret-1' });
  const owner = await insertTenant(s.sql);
  const box = await createBounceMailbox(s.ctx, owner, actor, {
    name: 'Seed inbox at the ISP',
    host: '127.0.0.1',
    port: pop.port,
    username: 'seeds@isp.test',
    password: 'pop-secret-1',
    use_tls_implicit: false,
  });
  const seed = await createSeed(s.ctx, actor, { email: 'mp-seed@gmail.com', provider: 'gmail', bounce_mailbox_id: box.id });
  t.equal(seed.bounce_mailbox_id, box.id);

  const first = await sentCampaign(s.ctx, { contacts: 2, name: 'Inbox one' });
  const second = await sentCampaign(s.ctx, { contacts: 2, name: 'Spam one' });
  const inInbox = await seedCopy(s.sql, first.campaignId, 'mp-seed@gmail.com');
  const inSpam = await seedCopy(s.sql, second.campaignId, 'mp-seed@gmail.com');
  // What the provider's POP export (or a forwarding rule) gives: the spam folder's copy carries a folder marker.
  // A forwarding rule on the way replaced the Message-ID: the copy is matched by the campaign of its Feedback-ID.
  pop.deliver(
    'seeds@isp.test',
    Buffer.from(inInbox.message.toString('latin1').replace(/^Message-ID: <[^>]+>/im, 'Message-ID: <fwd-1@relay.example>'), 'latin1'),
  );
  pop.deliver('seeds@isp.test', Buffer.concat([Buffer.from('X-Folder: [Gmail]/Spam\r\n'), inSpam.message]));
  pop.deliver('seeds@isp.test', 'From: a@b.example\r\nTo: seeds@isp.test\r\nSubject: hello\r\nMessage-ID: <not-ours@b.example>\r\n\r\nhi\r\n');

  const deps: PollerDeps = { sql: s.sql, boss: s.boss, clock: s.ctx.clock, log: s.ctx.log, openMailbox: s.ctx.openMailbox, config: s.config };
  const row = (await findBounceMailbox(s.sql, owner, box.id))!;
  const result = await pollMailbox(deps, row);
  t.match(result, { fetched: 3, error: null });
  const hits = await s.sql`select campaign_id, placement, placement_source from seed_hits where seed_id = ${seed.id} order by placement`;
  t.same(
    hits.map((h) => [h['campaign_id'], h['placement'], h['placement_source']]),
    [
      [first.campaignId, 'inbox', 'pop3'],
      [second.campaignId, 'spam', 'pop3'],
    ],
  );

  // A second poll (UIDLs remembered) fetches nothing and changes nothing.
  const [before] = await s.sql`select max(observed_at) as at from seed_hits where seed_id = ${seed.id}`;
  t.match(await pollMailbox(deps, (await findBounceMailbox(s.sql, owner, box.id))!), { fetched: 0, already_fetched: 3 });
  t.same((await s.sql`select max(observed_at) as at from seed_hits where seed_id = ${seed.id}`)[0], before);

  const view = await seedHits(s.ctx, seed.id, { limit: 25, offset: 0 });
  t.same(
    view.items.map((i) => [i.hit.campaign_name, i.expected, i.observed]),
    [
      ['Spam one', 'inbox', 'spam'],
      ['Inbox one', 'inbox', 'inbox'],
    ],
    'expected versus observed, newest first',
  );
});
