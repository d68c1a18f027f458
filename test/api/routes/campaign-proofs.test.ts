// POST /campaigns/{id}/proof: rendered for the chosen contact, sent to up to five addresses through the send path as proofs, outside the campaign's counters
// and stats; limits, scopes, isolation, quota, test keys, and an unsubscribe link that changes nothing.
import t from 'tap';
import { applyUnsubscribe } from '../../../shared/engagement/tracking/unsubscribe-apply.js';
import { call, createKey } from '../../helpers/app.js';
import { campaignApp, createCampaign, listOf, readCampaign, sender } from '../../helpers/campaigns.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';
import { insertContacts } from '../../helpers/lists.js';

const CONTENT = { subject: 'Hello {{ first_name | default: "friend" }}', body_text: 'Hi {{ first_name | default: "friend" }} ({{ email }}).' };

t.test('a proof rendered for a contact goes to each address as a proof send; the campaign counts none of it', async (t) => {
  const s = await campaignApp(t);
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, ['member@example.test']);
  const [ann] = await insertContacts(s.sql, tenant.tenantId, ['ann@example.test'], { first: 'Ann' });
  const c = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT });

  const res = await call(s.app, 'POST', `/campaigns/${c.id}/proof`, {
    token: tenant.token,
    body: { to: ['boss@example.org', 'Boss@Example.org', 'editor@example.org'], contact_id: ann },
  });
  t.equal(res.status, 202, JSON.stringify(res.body));
  t.same(
    res.body.data.proofs.map((p: { to: string }) => p.to),
    ['boss@example.org', 'editor@example.org'],
    'a repeated address counts once',
  );
  t.ok(res.headers['x-quota-used'], 'the quota headers, as on every send');

  const sends = await s.sql<
    { id: string; source: string; campaign_id: string | null; contact_id: string | null; subject: string; to_email: string; message: Buffer }[]
  >`
    select id, source, campaign_id, contact_id, subject, to_email, message from sends where tenant_id = ${tenant.tenantId} order by to_email`;
  t.equal(sends.length, 2);
  for (const send of sends) {
    t.match(send, { source: 'proof', campaign_id: null, contact_id: null, subject: '[Proof] Hello Ann' });
    const text = send.message.toString('utf8');
    t.match(text, /\r\nSubject: \[Proof\] Hello Ann\r\n/, 'the stored message has the proof subject');
    t.match(text, /Hi Ann \(ann@example\.test\)\./, 'rendered for the chosen contact, sent to the proof address');
    t.match(text, /^DKIM-Signature: /m, 'signed like any send');
  }
  const proofs = await s.sql`select send_id, campaign_id, contact_id from campaign_proofs where campaign_id = ${c.id}`;
  t.equal(proofs.length, 2, 'each proof is tied to its campaign');
  t.ok(proofs.every((p) => p['contact_id'] === ann));

  const view = await readCampaign(s, tenant.token, c.id);
  t.equal(view.status, 'draft', 'a proof starts nothing');
  const [stats] = await s.sql<{ n: number }[]>`select count(*)::int as n from campaign_stats where campaign_id = ${c.id}`;
  t.equal(stats!.n, 0, 'no counter row for the campaign');
  const events = await call(s.app, 'GET', `/campaigns/${c.id}/events`, { token: tenant.token });
  t.same(events.body.data.items, [], "the campaign's events feed has none of it");
  const audit = await s.sql`select metadata from audit_events where resource_id = ${c.id} and action = 'campaign.proof_sent'`;
  t.match(audit[0]?.['metadata'], { to: ['boss@example.org', 'editor@example.org'], contact_id: ann });

  const detail = await call(s.app, 'GET', `/sends/${sends[0]!.id}`, { token: tenant.token });
  t.equal(detail.body.data.source, 'proof', 'GET /sends/{id} marks it as a proof');

  const unsubscribed = await applyUnsubscribe(s.sql, { sendId: sends[0]!.id, method: 'one_click', at: new Date() });
  t.equal(unsubscribed.outcome, 'already', "a proof's unsubscribe link changes nothing");
  const [suppressed] = await s.sql<{ n: number }[]>`select count(*)::int as n from suppressions where tenant_id = ${tenant.tenantId}`;
  t.equal(suppressed!.n, 0, 'no address suppressed');
});

t.test('without a contact it renders as nobody; limits and bad input are 422; the variant follows the A/B test', async (t) => {
  const s = await campaignApp(t);
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, ['member@example.test']);
  const c = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT, subject_b: 'Other {{ email }}', ab_split_pct: 20 });

  const plain = await call(s.app, 'POST', `/campaigns/${c.id}/proof`, { token: tenant.token, body: { to: ['qa@example.org'] } });
  t.equal(plain.status, 202);
  const [first] = await s.sql<{ subject: string }[]>`select subject from sends where id = ${plain.body.data.proofs[0].send_id}`;
  t.equal(first!.subject, '[Proof] Hello friend', 'variant a, rendered as nobody');
  const b = await call(s.app, 'POST', `/campaigns/${c.id}/proof`, { token: tenant.token, body: { to: ['qa@example.org'], variant: 'b' } });
  const [second] = await s.sql<{ subject: string }[]>`select subject from sends where id = ${b.body.data.proofs[0].send_id}`;
  t.equal(second!.subject, '[Proof] Other qa@example.org', 'variant b on request');

  const six = Array.from({ length: 6 }, (_, i) => `p${i}@example.org`);
  const before = await s.sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${tenant.tenantId}`;
  for (const body of [{ to: six }, { to: [] }, { to: ['not an address'] }, { to: ['qa@example.org'], extra: true }]) {
    const res = await call(s.app, 'POST', `/campaigns/${c.id}/proof`, { token: tenant.token, body });
    t.equal(res.status, res.body.error === 'bad_request' ? 400 : 422, `${JSON.stringify(body)} refused: ${res.body.message}`);
  }
  const after = await s.sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${tenant.tenantId}`;
  t.equal(after[0]!.n, before[0]!.n, 'nothing sent for a refused request');

  const plainCampaign = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT });
  const noB = await call(s.app, 'POST', `/campaigns/${plainCampaign.id}/proof`, { token: tenant.token, body: { to: ['qa@example.org'], variant: 'b' } });
  t.match([noB.status, noB.body.message], [422, /variant/]);
  const noSubject = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT, subject: null });
  t.equal(
    (await call(s.app, 'POST', `/campaigns/${noSubject.id}/proof`, { token: tenant.token, body: { to: ['qa@example.org'] } })).status,
    422,
    'unsendable content is refused as a send is',
  );
});

t.test('scopes, isolation, a test key and the quota', async (t) => {
  const s = await campaignApp(t);
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, ['member@example.test']);
  const c = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT });
  const proofOf = (token: string, body: Record<string, unknown> = { to: ['qa@example.org'] }) =>
    call(s.app, 'POST', `/campaigns/${c.id}/proof`, { token, body });

  const campaignsOnly = await createKey(s.app, tenant, { name: 'campaigns', scopes: ['campaigns:write'] });
  t.match(
    [(await proofOf(campaignsOnly.key)).status, (await proofOf(campaignsOnly.key)).body.error],
    [403, 'invalid_scope'],
    'sending mail needs transactional:send too',
  );
  const both = await createKey(s.app, tenant, { name: 'both', scopes: ['campaigns:write', 'transactional:send'] });
  t.equal((await proofOf(both.key)).status, 202);

  const testKey = await createKey(s.app, tenant, { name: 'test', mode: 'test' });
  const simulated = await proofOf(testKey.key);
  t.equal(simulated.body.data.proofs[0].status, 'simulated', "a test key's proof is simulated");

  const { other } = await twoTenants(s.app);
  await assertForeign404(t, s.app, other.token, [{ method: 'POST', url: `/campaigns/${c.id}/proof`, body: { to: ['qa@example.org'] } }]);
  const [foreignContact] = await insertContacts(s.sql, other.tenantId, ['theirs@example.test'], { first: 'Theirs' });
  const foreign = await proofOf(tenant.token, { to: ['qa@example.org'], contact_id: foreignContact });
  t.match([foreign.status, foreign.body.error], [404, 'not_found'], "another tenant's contact is 404");

  await s.sql`update plans set monthly_send_cap = 1 where id = 'campaigns'`;
  const capped = await proofOf(tenant.token, { to: ['a@example.org', 'b@example.org'] });
  t.equal(capped.status, 402, 'at the monthly cap: 402');
  t.equal(capped.body.error, 'quota_exceeded');
  t.equal(capped.headers['x-quota-remaining'], '0');
});
