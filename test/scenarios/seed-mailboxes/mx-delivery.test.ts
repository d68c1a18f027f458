// The whole loop on real sockets: a campaign's seed copy leaves through the outbound delivery workers (relayed to our own MX) and, reaching a seed hosted
// here, records its placement with the MX's own verdict.
import t from 'tap';
import type { Services } from '../../../main/services.js';
import { startOutbound } from '../../../mta/outbound/deliver/start.js';
import { createSeed, seedHits } from '../../../shared/deliverability/seed-mailboxes/service.js';
import { freePort } from '../../helpers/net.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { startTestMx, tenantDomain } from '../../mta/inbound/fixtures.js';
import { sentCampaign } from '../../helpers/seed-mailboxes.js';

t.test("a copy delivered by the outbound workers to the MX lands in the seed's mailbox as inbox", async (t) => {
  const port = await freePort();
  // Every delivery is relayed to our MX: the seed's copy is taken; the contacts' (foreign domains) are refused there.
  const mx = await startTestMx(t, {
    env: { MAILPATH_MX_PORT: String(port), MAILPATH_OUTBOUND_RELAY: `127.0.0.1:${port}`, MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1000000]' },
  });
  const deps = mx.deps as Services;
  const outbound = await startOutbound(deps);
  t.teardown(() => outbound.stop());

  const hosted = await tenantDomain(mx.sql, { mailboxes: ['inbox-watch'], webhook: 'none' });
  const address = `inbox-watch@${hosted.name}`;
  const seed = await createSeed(deps, { type: 'system', id: null }, { email: address, provider: 'custom' });
  const { campaignId } = await sentCampaign(deps, { contacts: 1 });

  const hit = await pollUntil(
    'the copy observed at the MX',
    async () => (await mx.sql`select placement, placement_source, send_id from seed_hits where seed_id = ${seed.id} and placement is not null`)[0],
    30_000,
  );
  t.match(hit, { placement: 'inbox', placement_source: 'mx' });
  // Placement is recorded before the MX's 250; the send is marked delivered once the worker has that reply.
  const status = await pollUntil('the copy delivered', async () => {
    const [send] = await mx.sql`select status from sends where id = ${hit['send_id']}`;
    return send!['status'] === 'queued' || send!['status'] === 'sending' ? undefined : send!['status'];
  });
  t.equal(status, 'delivered', 'the copy went out through the delivery workers');
  const [stored] = await mx.sql`
    select m.raw from mailbox_messages b join inbound_messages m on m.id = b.inbound_message_id where b.mailbox_id = ${hosted.mailboxIds['inbox-watch']!}`;
  t.match(stored!['raw'].toString('utf8'), /Authentication-Results: /, "stored with the MX's own verdict on top");
  const view = await seedHits(deps, seed.id, { limit: 25, offset: 0 });
  t.match(view.items, [{ expected: 'inbox', observed: 'inbox', hit: { campaign_id: campaignId, placement_source: 'mx' } }]);
});
