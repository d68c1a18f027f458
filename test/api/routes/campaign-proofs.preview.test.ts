// POST /campaigns/{id}/preview: the message a proof would carry, rendered for a chosen contact (or as nobody) and answered,
// not sent: subject, both bodies and the A/B variant, links with their UTM tags but untracked; nothing stored, sent or
// audited; refusals as a proof's; scopes and isolation.
import t from 'tap';
import { TRACKING_PATHS } from '../../../shared/engagement/tracking/link-tokens.js';
import { call, createKey } from '../../helpers/app.js';
import { campaignApp, createCampaign, listOf, sender } from '../../helpers/campaigns.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';
import { insertContacts } from '../../helpers/lists.js';

const CONTENT = {
  subject: 'Hello {{ first_name | default: "friend" }}',
  body_text: 'Hi {{ first_name | default: "friend" }} ({{ email }}).',
  body_html: '<p>Hi {{ first_name | default: "friend" }}, see <a href="https://shop.example.com/sale">the sale</a>.</p>',
  track_opens: true,
  track_clicks: true,
  utm_tagging: true,
  utm_source: 'mailpath',
  utm_campaign: 'winter',
};

async function rowCounts(s: Awaited<ReturnType<typeof campaignApp>>, tenantId: string) {
  const [row] = await s.sql<{ sends: number; proofs: number; audits: number }[]>`
    select (select count(*)::int from sends where tenant_id = ${tenantId}) as sends,
           (select count(*)::int from campaign_proofs) as proofs,
           (select count(*)::int from audit_events where tenant_id = ${tenantId} and action like 'campaign.proof%') as audits`;
  return row!;
}

t.test('a preview renders the campaign for a contact, as its send would, and stores nothing', async (t) => {
  const s = await campaignApp(t);
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, ['member@example.test']);
  const [ann] = await insertContacts(s.sql, tenant.tenantId, ['ann@example.test'], { first: 'Ann' });
  const c = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT });
  const before = await rowCounts(s, tenant.tenantId);

  const res = await call(s.app, 'POST', `/campaigns/${c.id}/preview`, { token: tenant.token, body: { contact_id: ann } });
  t.equal(res.status, 200, JSON.stringify(res.body));
  const p = res.body.data;
  t.match(p, { to: 'ann@example.test', subject: 'Hello Ann', text: /Hi Ann \(ann@example\.test\)\./, variant: null });
  t.match(p.from, /@/, "the campaign's sender");
  const href = /Hi Ann, see <a href="([^"]+)">the sale<\/a>/.exec(p.html)?.[1]?.replaceAll('&amp;', '&') ?? '';
  const landing = new URL(href);
  t.same(
    [landing.origin + landing.pathname, landing.searchParams.get('utm_source'), landing.searchParams.get('utm_campaign')],
    ['https://shop.example.com/sale', 'mailpath', 'winter'],
    'the link goes where a click lands, with its UTM tags',
  );
  t.ok(
    [TRACKING_PATHS.click, TRACKING_PATHS.open].every((path) => !p.html.includes(path)),
    'no tracking redirect or open pixel: a preview names no send',
  );
  t.same(await rowCounts(s, tenant.tenantId), before, 'nothing sent, stored or audited');

  const nobody = await call(s.app, 'POST', `/campaigns/${c.id}/preview`, { token: tenant.token, body: {} });
  t.match(nobody.body.data, { to: 'someone@example.com', subject: 'Hello friend' }, 'as nobody, at the sample address');
});

t.test('the variant follows the A/B test; refusals are a proof’s', async (t) => {
  const s = await campaignApp(t);
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, ['member@example.test']);
  const ab = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT, subject_b: 'Other {{ email }}', ab_split_pct: 20 });
  const previewOf = (id: string, body: Record<string, unknown>) => call(s.app, 'POST', `/campaigns/${id}/preview`, { token: tenant.token, body });
  t.match((await previewOf(ab.id, {})).body.data, { subject: 'Hello friend', variant: 'a' }, 'variant a by default');
  t.match((await previewOf(ab.id, { variant: 'b' })).body.data, { subject: 'Other someone@example.com', variant: 'b' }, 'variant b on request');

  const plain = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT });
  t.match([(await previewOf(plain.id, { variant: 'b' })).status, (await previewOf(plain.id, { variant: 'b' })).body.message], [422, /variant/]);
  t.equal((await previewOf(plain.id, { to: ['qa@example.org'] })).status, 400, 'a preview names no addresses');
  const noSubject = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT, subject: null });
  t.equal((await previewOf(noSubject.id, {})).status, 422, 'unsendable content is refused as a send is');
});

t.test('scopes and isolation', async (t) => {
  const s = await campaignApp(t);
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, ['member@example.test']);
  const c = await createCampaign(s, tenant.token, { list_id: listId, ...CONTENT });
  const previewAs = (token: string, body: Record<string, unknown> = {}) => call(s.app, 'POST', `/campaigns/${c.id}/preview`, { token, body });

  const readOnly = await createKey(s.app, tenant, { name: 'read', scopes: ['campaigns:read'] });
  t.equal((await previewAs(readOnly.key)).status, 200, 'reading campaigns is enough: nothing is sent');
  const contactsOnly = await createKey(s.app, tenant, { name: 'contacts', scopes: ['contacts:read'] });
  t.match([(await previewAs(contactsOnly.key)).status, (await previewAs(contactsOnly.key)).body.error], [403, 'invalid_scope']);

  const { other } = await twoTenants(s.app);
  await assertForeign404(t, s.app, other.token, [{ method: 'POST', url: `/campaigns/${c.id}/preview`, body: {} }]);
  const [foreignContact] = await insertContacts(s.sql, other.tenantId, ['theirs@example.test'], { first: 'Theirs' });
  const foreign = await previewAs(tenant.token, { contact_id: foreignContact });
  t.match([foreign.status, foreign.body.error], [404, 'not_found'], "another tenant's contact is 404");
});
