// Erasure and the send path: an erased person's data leaves contacts, sends and events, the hash keeps them suppressed (also re-added), only a confirmed
// removal lifts it; unsubscribed contacts are never mailed.
import { createHash } from 'node:crypto';
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant, type TestTenant } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { verifiedSendingDomain, type SendingDomain } from '../../helpers/sending-domain.js';

const dns = await startDnsServer(t);
const { app, ctx, sql } = await buildTestApp(t, { env: { MAILPATH_DNS_SERVERS: dns.address } });

interface Sender {
  tenant: TestTenant;
  key: string;
  domain: SendingDomain;
}

async function sender(): Promise<Sender> {
  const tenant = await registerTenant(app);
  const { key } = await createKey(app, tenant, { scopes: ['transactional:send'] });
  return { tenant, key, domain: await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId) };
}

/** One transactional send; answers its id and status (queued, dropped, ...). */
async function send(s: Sender, to: string, subject = 'Your order'): Promise<{ id: string; status: string }> {
  const res = await call(app, 'POST', '/transactional/send', {
    token: s.key,
    body: { to, from_email: `hello@${s.domain.name}`, subject, body_text: `Hi ${to}` },
  });
  if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.message_id, status: res.body.data.status };
}

async function contact(token: string, body: Record<string, unknown>) {
  const res = await call(app, 'POST', '/contacts', { token, body });
  if (res.status !== 201) throw new Error(`create contact: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

t.test('erase: personal data gone from contacts, sends, attempts and events; the hash stays suppressed; lifting needs the address', async (t) => {
  const s = await sender();
  const owner = s.tenant.token;
  const address = 'erin.example@dest.example';
  const hash = sha256(address);
  const placeholder = `erased:${hash.toString('hex').slice(0, 12)}`;
  await call(app, 'POST', '/contact-custom-fields', { token: owner, body: { key: 'shoe_size', label: 'Shoe size', type: 'number' } });
  const made = await contact(owner, {
    email: 'Erin.Example@Dest.example',
    first_name: 'Erin',
    last_name: 'Example',
    phone: '+47 1234',
    city: 'Oslo',
    crm_id: 'X9',
    custom_fields: { shoe_size: 39 },
  });
  const [list] = await sql<
    { id: string }[]
  >`insert into lists (tenant_id, name, created_at, updated_at) values (${s.tenant.tenantId}, 'Newsletter', now(), now()) returning id`;
  await sql`insert into list_members (list_id, contact_id, tenant_id, added_at) values (${list!.id}, ${made.id}, ${s.tenant.tenantId}, now())`;

  const waiting = await send(s, address, 'Your order, Erin');
  const delivered = await send(s, address, 'Your order, Erin');
  const bystander = await send(s, 'keep@dest.example');
  t.equal(waiting.status, 'queued');
  // A delivered send whose remote reply and event quote the address (in another case).
  await sql`update sends set status = 'delivered', status_detail = ${'250 2.0.0 <ERIN.EXAMPLE@dest.example> accepted'} where id = ${delivered.id}`;
  await sql`insert into send_attempts (send_id, attempted_at, outcome, smtp_code, reply, duration_ms)
            values (${delivered.id}, now(), 'delivered', 250, ${'250 2.0.0 Ok: queued for Erin.Example@dest.example'}, 5)`;
  await sql`insert into events (id, tenant_id, type, send_id, message_id, recipient, detail, occurred_at)
            values (gen_random_uuid(), ${s.tenant.tenantId}, 'delivered', ${delivered.id}, ${delivered.id}, ${address},
                    ${sql.json({ reply: `ok for ${address}` })}, now())`;
  const manual = await call(app, 'POST', '/suppressions', { token: owner, body: { email: address, reason: 'complaint' } });
  t.equal(manual.status, 201);

  const res = await call(app, 'POST', `/contacts/${made.id}/erase`, { token: owner });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.same(res.body.data, { status: 'erased' });

  const got = (await call(app, 'GET', `/contacts/${made.id}`, { token: owner })).body.data;
  t.match(got, {
    id: made.id,
    email: null,
    first_name: null,
    last_name: null,
    phone: null,
    city: null,
    crm_id: null,
    status: 'deleted',
    erased_at: String,
    unsubscribed_at: null,
  });
  t.same(got.custom_fields, {});
  const [row] = await sql<{ email_hash: Buffer; custom_fields: object; leftovers: number }[]>`
    select email_hash, custom_fields, num_nonnulls(email, first_name, last_name, phone, company, city, state, country, postal_code, title,
      timezone, mobile_phone, email_format, confirmed_status, mobile_status, crm_id, crm_contact_id, crm_lead_id, best_send_hour,
      unsubscribed_at)::int as leftovers
    from contacts where id = ${made.id}`;
  t.same(row!.custom_fields, {}, 'no stored custom value, orphaned or not');
  t.equal(row!.leftovers, 0, 'every personal column is null');
  t.ok(row!.email_hash.equals(hash), 'the hash is kept');
  t.same(
    (await call(app, 'GET', '/contacts?status=deleted', { token: owner })).body.data.items.map((c: { id: string }) => c.id),
    [made.id],
  );
  const [members] = await sql<{ n: number }[]>`select count(*)::int as n from list_members where contact_id = ${made.id}`;
  t.equal(members!.n, 0, 'out of every list');

  const sends = await sql<{ id: string; to_email: string; message: Buffer | null; subject: string; status: string; status_detail: string | null }[]>`
    select id, to_email, message, subject, status, status_detail from sends where tenant_id = ${s.tenant.tenantId} order by created_at`;
  const byId = new Map(sends.map((x) => [x.id, x]));
  t.match(byId.get(waiting.id), { to_email: placeholder, message: null, subject: '(erased)', status: 'dropped' }, 'a waiting send is dropped');
  t.match(byId.get(delivered.id), { to_email: placeholder, message: null, status: 'delivered', status_detail: `250 2.0.0 <${placeholder}> accepted` });
  t.match(byId.get(bystander.id), { to_email: 'keep@dest.example', status: 'queued' }, 'other recipients untouched');
  t.ok(byId.get(bystander.id)!.message, 'with their message');
  const [attempt] = await sql<{ reply: string }[]>`select reply from send_attempts where send_id = ${delivered.id}`;
  t.equal(attempt!.reply, `250 2.0.0 Ok: queued for ${placeholder}`);
  const [traces] = await sql<{ n: number }[]>`
    select (select count(*) from sends
    where tenant_id = ${s.tenant.tenantId} and (to_email ilike '%erin%' or status_detail ilike '%erin%' or subject ilike '%erin%'))
         + (select count(*) from events where tenant_id = ${s.tenant.tenantId} and (recipient ilike '%erin%' or detail::text ilike '%erin%'))
         + (select count(*) from send_attempts a join sends x on x.id = a.send_id where x.tenant_id = ${s.tenant.tenantId} and a.reply ilike '%erin%')
         + (select count(*) from contacts where tenant_id = ${s.tenant.tenantId} and email ilike '%erin%')
         + (select count(*) from suppressions where tenant_id = ${s.tenant.tenantId} and email ilike '%erin%') as n`;
  t.equal(Number(traces!.n), 0, "the address appears nowhere in the tenant's contacts, sends, attempts, events or suppressions");
  const events = await sql<{ recipient: string }[]>`select recipient from events where send_id in (${waiting.id}, ${delivered.id})`;
  t.ok(events.length >= 3 && events.every((e) => e.recipient === placeholder), 'events carry the placeholder');

  const audit = await sql<
    { resource_id: string; metadata: object }[]
  >`select resource_id, metadata from audit_events where tenant_id = ${s.tenant.tenantId} and action = 'contact.erased'`;
  t.same(
    audit.map((a) => [a.resource_id, a.metadata]),
    [[made.id, {}]],
    'audited with the contact id only',
  );

  const suppressions = await sql<{ email: string | null; email_hash: Buffer; reason: string; source: string; detail: string | null }[]>`
    select email, email_hash, reason, source, detail from suppressions where tenant_id = ${s.tenant.tenantId}`;
  t.equal(suppressions.length, 1, 'the complaint entry became hash-only');
  t.match(suppressions[0], { email: null, reason: 'erased', source: 'erasure', detail: null });
  t.ok(suppressions[0]!.email_hash.equals(hash));
  const listed = await call(app, 'GET', '/suppressions', { token: owner });
  t.equal(listed.status, 200);
  t.match(listed.body.data, [{ email: null, reason: 'erased', source: 'erasure' }]);
  const entry = listed.body.data[0].id as string;
  t.match((await call(app, 'GET', `/suppressions/${entry}`, { token: owner })).body.data, { id: entry, email: null, reason: 'erased' });
  t.same(
    (await call(app, 'GET', `/suppressions?q=${encodeURIComponent('Erin.Example@dest.example')}`, { token: owner })).body.data.map((x: { id: string }) => x.id),
    [entry],
    'found by its full address',
  );
  t.equal((await call(app, 'GET', '/suppressions?q=erin', { token: owner })).body.total, 0, 'not by a part of it');
  t.equal((await call(app, 'GET', '/suppressions?reason=erased', { token: owner })).body.total, 1);
  const again = await call(app, 'POST', '/suppressions', { token: owner, body: { email: address } });
  t.equal(again.status, 409, 'the address is already suppressed');

  t.equal((await send(s, 'ERIN.example@dest.example')).status, 'dropped', 'a later send to the address is dropped as suppressed');
  t.equal((await call(app, 'POST', `/contacts/${made.id}/erase`, { token: owner })).status, 200, 'erasing twice is fine');
  t.equal((await call(app, 'GET', `/contacts/${made.id}`, { token: owner })).body.data.erased_at, got.erased_at, 'and keeps the first erasure time');

  const back = await call(app, 'POST', '/contacts', { token: owner, body: { email: address, first_name: 'Erin' } });
  t.equal(back.status, 201, 'the address can be added again');
  t.match(back.body.data, { id: made.id, email: address, first_name: 'Erin', status: 'active', erased_at: null, created: true });
  t.equal((await send(s, address)).status, 'dropped', 'and stays suppressed');

  const refused = await call(app, 'DELETE', `/suppressions/${entry}`, { token: owner });
  t.equal(refused.status, 409, 'an erasure is not lifted by accident');
  t.match(refused.body.message, /\?email=/);
  const wrong = await call(app, 'DELETE', `/suppressions/${entry}?email=${encodeURIComponent('someone@dest.example')}`, { token: owner });
  t.equal(wrong.status, 422);
  t.match(wrong.body.message, /^email: /);
  const lifted = await call(app, 'DELETE', `/suppressions/${entry}?email=${encodeURIComponent('Erin.Example@DEST.example')}`, { token: owner });
  t.equal(lifted.status, 200);
  t.equal((await send(s, address)).status, 'queued', 'mail flows again once lifted with the address');
});

t.test('erasing an address without a suppression adds a hash-only one; other tenants keep theirs', async (t) => {
  const [a, b] = [await sender(), await sender()];
  const address = 'shared.person@dest.example';
  const mine = await contact(a.tenant.token, { email: address });
  await contact(b.tenant.token, { email: address, first_name: 'Kept' });
  const theirs = await send(b, address);
  t.equal((await call(app, 'POST', `/contacts/${mine.id}/erase`, { token: a.tenant.token })).status, 200);
  const [entry] = await sql<{ email: string | null; reason: string; ok: boolean }[]>`
    select email, reason, email_hash = sha256(convert_to(${address}::text, 'UTF8')) as ok from suppressions where tenant_id = ${a.tenant.tenantId}`;
  t.match(entry, { email: null, reason: 'erased', ok: true });
  t.equal((await send(a, address)).status, 'dropped');
  t.equal((await send(b, address)).status, 'queued', 'another tenant still mails the address');
  const [other] = await sql<{ to_email: string }[]>`select to_email from sends where id = ${theirs.id}`;
  t.equal(other!.to_email, address, "another tenant's log is untouched");
  t.match((await call(app, 'GET', '/contacts', { token: b.tenant.token })).body.data.items, [{ email: address, first_name: 'Kept' }]);
});

t.test('an unsubscribed contact is never mailed (transactional included), also once deleted; re-subscribed, it is', async (t) => {
  const [s, other] = [await sender(), await sender()];
  const made = await contact(s.tenant.token, { email: 'Quiet@Dest.example', status: 'unsubscribed' });
  await contact(other.tenant.token, { email: 'loud@dest.example', status: 'unsubscribed' });
  t.equal((await send(s, 'quiet@dest.example')).status, 'dropped');
  t.equal((await send(s, 'loud@dest.example')).status, 'queued', "another tenant's unsubscribed contact does not count");
  const [decision] = await sql<{ status_detail: string | null; gates: { gate: string; outcome: string; reason?: string }[] }[]>`
    select status_detail, gate_decisions as gates from sends where tenant_id = ${s.tenant.tenantId} and to_email = 'quiet@dest.example'`;
  t.match(
    decision!.gates.find((g) => g.gate === 'suppression'),
    { outcome: 'drop', reason: 'suppressed' },
  );
  const resubscribed = await call(app, 'POST', `/contacts/${made.id}/resubscribe`, { token: s.tenant.token, body: { reason: 'asked by e-mail' } });
  t.equal(resubscribed.status, 200);
  t.equal((await send(s, 'quiet@dest.example')).status, 'queued');
  await call(app, 'PATCH', `/contacts/${made.id}`, { token: s.tenant.token, body: { status: 'unsubscribed' } });
  t.equal((await send(s, 'quiet@dest.example')).status, 'dropped');
  await call(app, 'DELETE', `/contacts/${made.id}`, { token: s.tenant.token });
  t.equal((await send(s, 'quiet@dest.example')).status, 'dropped', 'deleting an unsubscribed contact keeps the unsubscribe');
  t.match((await call(app, 'GET', '/suppressions', { token: s.tenant.token })).body.data, [{ email: 'quiet@dest.example', reason: 'unsubscribe' }]);
  const restored = await call(app, 'POST', '/contacts', { token: s.tenant.token, body: { email: 'quiet@dest.example' } });
  t.match(restored.body.data, { id: made.id, status: 'active' });
  t.equal((await send(s, 'quiet@dest.example')).status, 'dropped', 'and adding it again does not undo it');

  const plain = await contact(s.tenant.token, { email: 'plain@dest.example' });
  await call(app, 'DELETE', `/contacts/${plain.id}`, { token: s.tenant.token });
  t.equal((await send(s, 'plain@dest.example')).status, 'queued', 'a deleted active contact is still mailed (transactional)');
});
