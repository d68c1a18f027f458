// The tenant's default sender: a campaign shaped like the spec's (no from_email) sends from it; derived from the oldest verified domain until one is set
// with PUT /settings/sender; 422 naming every fix when there is neither; per tenant; warm-up dispatches.
import t from 'tap';
import { call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';
import { addresses, campaignApp, drain, listOf, readCampaign, sender, sendNow } from '../../helpers/campaigns.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';

const s = await campaignApp(t);
const { sql } = s;

/** A campaign exactly as the spec writes one: no from_email, from_name or reply_to. */
async function specCampaign(token: string, listId: string): Promise<string> {
  const res = await call(s.app, 'POST', '/campaigns', {
    token,
    body: { name: 'Spec-shaped', subject: 'Hello', body_html: '<p>Hi</p>', body_text: 'Hi', list_id: listId },
  });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

const messagesOf = async (campaignId: string) =>
  (await sql<{ message: Buffer; from_email: string }[]>`select message, from_email from sends where campaign_id = ${campaignId} order by to_email`).map(
    (r) => ({
      text: r.message.toString('latin1'),
      from: r.from_email,
    }),
  );

const tenantName = async (tenantId: string) => (await sql<{ name: string }[]>`select name from tenants where id = ${tenantId}`)[0]!.name;

t.test('no sender set: a spec-shaped campaign is created, scheduled and sent from no-reply@ the oldest verified domain, named after the tenant', async (t) => {
  const a = await sender(s);
  // A second verified domain, made older: the oldest is the one derived from, whatever the insertion order.
  const older = await verifiedSendingDomain(sql, s.ctx.vault, a.tenant.tenantId);
  await sql`update domains set created_at = now() - interval '1 day' where id = ${older.id}`;
  const name = await tenantName(a.tenant.tenantId);

  const settings = await call(s.app, 'GET', '/settings/sender', { token: a.tenant.token });
  t.same(settings.body.data, { from_email: `no-reply@${older.name}`, from_name: name, reply_to: null, source: 'derived', updated_at: null });

  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('spec', 3));
  const id = await specCampaign(a.tenant.token, listId);
  t.equal((await readCampaign(s, a.tenant.token, id)).from_email, null, 'the campaign itself names no sender');
  const scheduled = await call(s.app, 'POST', `/campaigns/${id}/schedule`, {
    token: a.tenant.token,
    body: { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() },
  });
  t.same([scheduled.status, scheduled.body.data?.status], [200, 'scheduled'], JSON.stringify(scheduled.body));
  // Its time comes: the fan-out checks it again and starts it.
  await sql`update campaigns set scheduled_at = now() - interval '1 second' where id = ${id}`;
  t.equal(await drain(s, id), 'completed');
  t.equal((await readCampaign(s, a.tenant.token, id)).status, 'sent');
  const messages = await messagesOf(id);
  t.equal(messages.length, 3);
  for (const m of messages) {
    t.equal(m.from, `no-reply@${older.name}`);
    t.match(m.text, new RegExp(`^From: "?${name}"? <no-reply@${older.name.replace(/\./g, '\\.')}>`, 'm'));
    t.notMatch(m.text, /^Reply-To:/m, 'a derived default has no Reply-To');
  }

  // Sent at once too, without a schedule.
  const now = await specCampaign(a.tenant.token, listId);
  await sendNow(s, a.tenant.token, now);
  t.equal(await drain(s, now), 'completed');
  t.same(
    (await messagesOf(now)).map((m) => m.from),
    Array(3).fill(`no-reply@${older.name}`),
  );
});

t.test('PUT /settings/sender: validated, audited, and used by campaigns that leave the sender (or a part of it) empty', async (t) => {
  const a = await sender(s);
  const unverified = `unverified-${Date.now()}.example`;
  await sql`insert into domains (tenant_id, name, unicode_name, created_at) values (${a.tenant.tenantId}, ${unverified}, ${unverified}, now())`;
  const put = (body: unknown) => call(s.app, 'PUT', '/settings/sender', { token: a.tenant.token, body });
  for (const [body, message] of [
    [
      { from_email: 'news@elsewhere.example' },
      new RegExp(`^from_email: its domain elsewhere\\.example is not a verified sending domain of this tenant \\(verified: ${a.domain.name}\\)`),
    ],
    [{ from_email: `news@${unverified}` }, /^from_email: its domain .* is not a verified sending domain/],
    [{ from_email: 'not an address' }, /^from_email: /],
    [{ from_email: a.from, reply_to: 'nope' }, /^reply_to: /],
    [{ from_email: a.from, from_name: 'Two\nlines' }, /^from_name: must be one line/],
  ] as const) {
    const res = await put(body);
    t.same([res.status, res.body.error], [422, 'validation_error'], JSON.stringify(body));
    t.match(res.body.message, message, res.body.message);
  }
  const missing = await call(s.app, 'PUT', '/settings/sender', { token: a.tenant.token, body: {} });
  t.same([missing.status, missing.body.message], [422, 'from_email: is required']);

  const ok = await put({ from_email: `Hello@${a.domain.name.toUpperCase()}`, from_name: 'The Desk', reply_to: 'help@support.example' });
  t.equal(ok.status, 200, JSON.stringify(ok.body));
  t.match(ok.body.data, { from_email: `hello@${a.domain.name}`, from_name: 'The Desk', reply_to: 'help@support.example', source: 'settings' });
  t.ok(ok.body.data.updated_at);
  t.same((await call(s.app, 'GET', '/settings/sender', { token: a.tenant.token })).body.data, ok.body.data, 'GET shows it');
  const [audit] = await sql<
    { metadata: Record<string, unknown> }[]
  >`select metadata from audit_events where tenant_id = ${a.tenant.tenantId} and action = 'sender.default_set'`;
  t.same(audit!.metadata, { from_email: `hello@${a.domain.name}`, from_name: 'The Desk', reply_to: 'help@support.example' });

  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('dflt', 2));
  const id = await specCampaign(a.tenant.token, listId);
  await sendNow(s, a.tenant.token, id);
  t.equal(await drain(s, id), 'completed');
  for (const m of await messagesOf(id)) {
    t.match(m.text, /^From: "?The Desk"? <hello@/m);
    t.match(m.text, /^Reply-To: help@support\.example/m);
  }

  // A campaign with its own address keeps it; the parts it leaves empty come from the stored default.
  const own = (
    await call(s.app, 'POST', '/campaigns', { token: a.tenant.token, body: { name: 'Own', subject: 'S', body_text: 'B', list_id: listId, from_email: a.from } })
  ).body.data.id;
  await sendNow(s, a.tenant.token, own);
  t.equal(await drain(s, own), 'completed');
  for (const m of await messagesOf(own)) {
    t.equal(m.from, a.from);
    t.match(m.text, /^From: "?The Desk"? <news@/m);
    t.match(m.text, /^Reply-To: help@support\.example/m);
  }

  // The default's domain stops verifying: a campaign relying on it is refused, naming the default sender.
  await sql`update domains set verified_at = null, drifted_at = now() where id = ${a.domain.id}`;
  const other = await verifiedSendingDomain(sql, s.ctx.vault, a.tenant.tenantId);
  const stale = await specCampaign(a.tenant.token, listId);
  const refused = await call(s.app, 'POST', `/campaigns/${stale}/send`, { token: a.tenant.token });
  t.same([refused.status, refused.body.error], [422, 'validation_error']);
  t.match(refused.body.message, /^from_email: the default sender's domain .* is not a verified sending domain of this tenant \(PUT \/settings\/sender/);

  // Cleared: the derived default applies again; a second clear is 404.
  t.equal((await call(s.app, 'DELETE', '/settings/sender', { token: a.tenant.token })).status, 200);
  t.match((await call(s.app, 'GET', '/settings/sender', { token: a.tenant.token })).body.data, { from_email: `no-reply@${other.name}`, source: 'derived' });
  t.equal((await call(s.app, 'POST', `/campaigns/${stale}/send`, { token: a.tenant.token })).status, 202);
  t.equal((await call(s.app, 'DELETE', '/settings/sender', { token: a.tenant.token })).status, 404);
  t.equal((await sql`select 1 from audit_events where tenant_id = ${a.tenant.tenantId} and action = 'sender.default_cleared'`).length, 1);
});

t.test('neither a sender nor a verified domain: 422 naming both ways to fix it, at schedule and at send', async (t) => {
  const bare = await registerTenant(s.app);
  t.same((await call(s.app, 'GET', '/settings/sender', { token: bare.token })).body.data, {
    from_email: null,
    from_name: null,
    reply_to: null,
    source: null,
    updated_at: null,
  });
  const { listId } = await listOf(sql, bare.tenantId, ['b@example.test']);
  const id = await specCampaign(bare.token, listId);
  for (const [what, res] of [
    ['send', await call(s.app, 'POST', `/campaigns/${id}/send`, { token: bare.token })],
    [
      'schedule',
      await call(s.app, 'POST', `/campaigns/${id}/schedule`, { token: bare.token, body: { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() } }),
    ],
  ] as const) {
    t.same([res.status, res.body.error], [422, 'validation_error'], what);
    t.match(
      res.body.message,
      /^from_email: is required to send .*set from_email on the campaign.*PUT \/settings\/sender.*verify a sending domain under \/domains/,
      res.body.message,
    );
  }
  t.equal(
    (await call(s.app, 'PUT', '/settings/sender', { token: bare.token, body: { from_email: 'me@example.test' } })).body.message,
    'from_email: its domain example.test is not a verified sending domain of this tenant (none is verified yet; verify one under /domains)',
  );
  const [row] = await sql<{ status: string }[]>`select status from campaigns where id = ${id}`;
  t.equal(row!.status, 'draft');
});

t.test('per tenant: another tenant neither sees nor sets it, and its campaigns keep their own default', async (t) => {
  const a = await sender(s);
  const b = await sender(s);
  t.equal((await call(s.app, 'PUT', '/settings/sender', { token: a.tenant.token, body: { from_email: a.from, from_name: 'A' } })).status, 200);
  t.match((await call(s.app, 'GET', '/settings/sender', { token: b.tenant.token })).body.data, { from_email: `no-reply@${b.domain.name}`, source: 'derived' });
  const foreign = await call(s.app, 'PUT', '/settings/sender', { token: b.tenant.token, body: { from_email: a.from } });
  t.same([foreign.status, foreign.body.error], [422, 'validation_error'], "another tenant's domain is not B's to send from");
  t.match(await call(s.app, 'DELETE', '/settings/sender', { token: b.tenant.token }), { status: 404 }, "B's clear does not touch A's");
  t.match((await call(s.app, 'GET', '/settings/sender', { token: a.tenant.token })).body.data, { from_email: a.from, from_name: 'A', source: 'settings' });

  const { listId } = await listOf(sql, b.tenant.tenantId, ['bb@example.test']);
  const id = await specCampaign(b.tenant.token, listId);
  await sendNow(s, b.tenant.token, id);
  t.equal(await drain(s, id), 'completed');
  t.same(
    (await messagesOf(id)).map((m) => m.from),
    [`no-reply@${b.domain.name}`],
  );
});

t.test('scopes: campaigns:read reads it, campaigns:write sets it', async (t) => {
  const a = await sender(s);
  const reader = (await createKey(s.app, a.tenant, { scopes: ['campaigns:read'] })).key;
  const writer = (await createKey(s.app, a.tenant, { scopes: ['campaigns:write'] })).key;
  t.equal((await call(s.app, 'GET', '/settings/sender', { token: reader })).status, 200);
  const denied = await call(s.app, 'PUT', '/settings/sender', { token: reader, body: { from_email: a.from } });
  t.same([denied.status, denied.body.error], [403, 'invalid_scope']);
  t.equal((await call(s.app, 'PUT', '/settings/sender', { token: writer, body: { from_email: a.from } })).status, 200);
});

t.test('a warm-up dispatch sends from the stored default when it is at the domain warmed up, else hello@ it', async (t) => {
  const admin = await superAdminToken(s.app);
  const a = await sender(s);
  const path = `/admin/tenants/${a.tenant.tenantId}/warmup-schedule`;
  const tpl = await call(s.app, 'POST', '/templates', { token: a.tenant.token, body: { name: 'Warm', subject: 'Hello', body_text: 'Hi' } });
  t.equal(tpl.status, 201);
  await listOf(sql, a.tenant.tenantId, ['warm@dest.example']);
  t.equal(
    (await call(s.app, 'POST', `${path}/generate`, { token: admin, body: { strategy: 'standard', total_target_recipients: 1000, domain_id: a.domain.id } }))
      .status,
    200,
  );
  await call(s.app, 'PATCH', `${path}/0`, { token: admin, body: { daily_target_recipients: 1, template_slug: 'Warm' } });
  await call(s.app, 'PUT', '/settings/sender', {
    token: a.tenant.token,
    body: { from_email: `desk@${a.domain.name}`, from_name: 'Desk', reply_to: 'r@support.example' },
  });
  const res = await call(s.app, 'POST', `${path}/dispatch-now`, { token: admin });
  t.match(res.body.data, { send_status: 'sent', result: { accepted: 1, from_email: `desk@${a.domain.name}` } }, JSON.stringify(res.body));
  const [send] = await sql<{ message: Buffer }[]>`select message from sends where tenant_id = ${a.tenant.tenantId}`;
  t.match(send!.message.toString('latin1'), /^From: "?Desk"? <desk@/m);
  t.match(send!.message.toString('latin1'), /^Reply-To: r@support\.example/m);

  // A default at another domain does not send the warm-up of this one.
  const b = await sender(s);
  const other = await verifiedSendingDomain(sql, s.ctx.vault, b.tenant.tenantId);
  const bPath = `/admin/tenants/${b.tenant.tenantId}/warmup-schedule`;
  await call(s.app, 'POST', '/templates', { token: b.tenant.token, body: { name: 'Warm', subject: 'Hello', body_text: 'Hi' } });
  await listOf(sql, b.tenant.tenantId, ['warm2@dest.example']);
  await call(s.app, 'POST', `${bPath}/generate`, { token: admin, body: { strategy: 'standard', total_target_recipients: 1000, domain_id: b.domain.id } });
  await call(s.app, 'PATCH', `${bPath}/0`, { token: admin, body: { daily_target_recipients: 1, template_slug: 'Warm' } });
  await call(s.app, 'PUT', '/settings/sender', { token: b.tenant.token, body: { from_email: `desk@${other.name}` } });
  const bRes = await call(s.app, 'POST', `${bPath}/dispatch-now`, { token: admin });
  t.match(bRes.body.data, { send_status: 'sent', result: { from_email: `hello@${b.domain.name}` } }, JSON.stringify(bRes.body));
});

t.test('a test key derives the default from any domain the tenant added, as its sends may use one', async (t) => {
  const tenant = await registerTenant(s.app);
  const added = await verifiedSendingDomain(sql, s.ctx.vault, tenant.tenantId);
  await sql`update domains set verified_at = null where id = ${added.id}`;
  const testKey = (await createKey(s.app, tenant, { mode: 'test', scopes: ['campaigns:read', 'campaigns:write'] })).key;
  t.match((await call(s.app, 'GET', '/settings/sender', { token: testKey })).body.data, { from_email: null, source: null }, 'no default for live sends');
  const { listId } = await listOf(sql, tenant.tenantId, ['t@example.test']);
  const live = await specCampaign(tenant.token, listId);
  t.equal((await call(s.app, 'POST', `/campaigns/${live}/send`, { token: tenant.token })).status, 422, 'a live send has neither');
  await sendNow(s, testKey, live);
  t.equal(await drain(s, live), 'completed');
  const rows = await sql<{ from_email: string; status: string }[]>`select from_email, status from sends where campaign_id = ${live}`;
  t.same(rows, [{ from_email: `no-reply@${added.name}`, status: 'simulated' }]);
});
