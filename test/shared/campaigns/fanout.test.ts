// The fan-out in one process: who is skipped and counted why, Liquid per recipient, the A/B split, test keys, segments evaluated at send time, a crash
// between send and settle, two workers on one campaign.
import t from 'tap';
import { runFanout } from '../../../shared/campaigns/fanout.js';
import { batchRecipients, claimBatch } from '../../../shared/campaigns/batch-queries.js';
import { releaseHeld } from '../../../shared/campaigns/stats-queries.js';
import { acceptSend } from '../../../shared/sending/accept.js';
import { call, createKey } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, drain, listOf, readCampaign, sender, sendNow, sendsPerRecipient } from '../../helpers/campaigns.js';
import { insertContacts } from '../../helpers/lists.js';

const s = await campaignApp(t);
const { sql } = s;

t.test('deleted, unsubscribed, suppressed, MD5-listed and invalid recipients are skipped and counted; the rest get exactly one send', async (t) => {
  const a = await sender(s);
  const tenantId = a.tenant.tenantId;
  const { listId } = await listOf(sql, tenantId, addresses('ok', 5));
  const add = async (emails: string[], status = 'active') => {
    const ids = await insertContacts(sql, tenantId, emails, { status });
    await sql`insert into list_members (list_id, contact_id, tenant_id, added_at) select ${listId}, c, ${tenantId}, now() from unnest(${ids}::uuid[]) c`;
  };
  await add(['gone1@example.test', 'gone2@example.test'], 'deleted');
  await add(['unsub@example.test'], 'unsubscribed');
  await add(['supp1@example.test', 'supp2@example.test']);
  await sql`insert into suppressions (tenant_id, email, reason, source, created_at) values
    (${tenantId}, 'supp1@example.test', 'manual', 'api', now()), (${tenantId}, 'supp2@example.test', 'hard_bounce', 'bounce', now())`;
  await add(['md5@example.test']);
  const [md5] = await sql<
    { id: string }[]
  >`insert into md5_lists (tenant_id, name, created_at, updated_at) values (${tenantId}, 'Advertiser', now(), now()) returning id`;
  await sql`insert into md5_list_entries (list_id, hash) values (${md5!.id}, decode(md5('md5@example.test'), 'hex'))`;
  await add(['not-an-address']);
  // Another tenant's suppression of an address of this list changes nothing.
  const b = await sender(s);
  await sql`insert into suppressions (tenant_id, email, reason, source, created_at) values (${b.tenant.tenantId}, 'ok0@example.test', 'manual', 'api', now())`;

  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from });
  t.equal((await call(s.app, 'PATCH', `/campaigns/${c.id}/md5-list`, { token: a.tenant.token, body: { list_id: md5!.id } })).status, 200);
  await sendNow(s, a.tenant.token, c.id);
  t.equal(await drain(s, c.id), 'completed');

  const view = await readCampaign(s, a.tenant.token, c.id);
  t.equal(view.status, 'sent');
  t.ok(view.finished_at);
  t.same(view.progress.skipped, { unsubscribed: 1, deleted: 2, suppressed: 2, md5_listed: 1, invalid: 1, cancelled: 0 });
  t.equal(view.progress.targeted, 12);
  t.equal(view.progress.queued, 5);
  t.equal(view.progress.remaining, 0);
  const sends = await sendsPerRecipient(sql, c.id);
  t.same([...sends.keys()].sort(), addresses('ok', 5).sort(), 'only the five deliverable recipients have sends');
  t.ok(
    [...sends.values()].every((n) => n === 1),
    'one send each',
  );
  const rows = await sql<{ status: string; skip_reason: string | null; n: number }[]>`
    select status, skip_reason, count(*)::int as n from campaign_recipients where campaign_id = ${c.id} group by 1, 2 order by 1, 2`;
  t.same(rows, [
    { status: 'pending', skip_reason: null, n: 5 },
    { status: 'skipped', skip_reason: 'deleted', n: 2 },
    { status: 'skipped', skip_reason: 'invalid', n: 1 },
    { status: 'skipped', skip_reason: 'md5_listed', n: 1 },
    { status: 'skipped', skip_reason: 'suppressed', n: 2 },
    { status: 'skipped', skip_reason: 'unsubscribed', n: 1 },
  ]);
});

t.test('each recipient is rendered with its own contact; sends carry the campaign, contact and source', async (t) => {
  const a = await sender(s);
  const { listId, contactIds } = await listOf(sql, a.tenant.tenantId, ['x1@example.test', 'x2@example.test', 'x3@example.test']);
  await sql`update contacts set first_name = 'Zoe', country = 'DE', custom_fields = '{"plan":"pro"}' where id = ${contactIds[0]!}`;
  await sql`update contacts set first_name = null, country = 'FR' where id = ${contactIds[1]!}`;
  await sql`insert into contact_custom_fields (tenant_id, key, label, type, created_at, updated_at)
            values (${a.tenant.tenantId}, 'plan', 'Plan', 'text', now(), now())`;
  const c = await createCampaign(s, a.tenant.token, {
    list_id: listId,
    from_email: a.from,
    from_name: 'The News',
    reply_to: 'desk@example.test',
    subject: 'Hi {{ first_name | default: "friend" }}',
    body_text: '{% if contact.country == "FR" %}Salut{% else %}Hello{% endif %} {{ contact.email }} ({{ custom_fields.plan | default: "free" }})',
  });
  await sendNow(s, a.tenant.token, c.id);
  t.equal(await drain(s, c.id), 'completed');
  const sends = await sql<{ to_email: string; subject: string; message: Buffer; source: string; contact_id: string; campaign_variant: string | null }[]>`
    select to_email, subject, message, source, contact_id, campaign_variant from sends where campaign_id = ${c.id} order by to_email`;
  t.same(
    sends.map((r) => r.subject),
    ['Hi Zoe', 'Hi friend', 'Hi friend'],
  );
  const text = sends.map((r) => r.message.toString('latin1'));
  t.match(text[0], /Hello x1@example\.test \(pro\)/);
  t.match(text[1], /Salut x2@example\.test \(free\)/);
  t.match(text[0], /^From: The News <news@/m);
  t.match(text[0], /^Reply-To: desk@example\.test/m);
  t.same(
    sends.map((r) => r.source),
    ['campaign', 'campaign', 'campaign'],
  );
  t.same(
    sends.map((r) => r.contact_id),
    contactIds,
  );
  t.same(
    sends.map((r) => r.campaign_variant),
    [null, null, null],
  );
  const events = await sql<{ n: number }[]>`select count(*)::int as n from events where campaign_id = ${c.id} and type = 'send'`;
  t.equal(events[0]!.n, 3, 'the send events name the campaign');

  // Erasing a contact takes its address out of the campaign's recipients too.
  t.equal((await call(s.app, 'POST', `/contacts/${contactIds[0]!}/erase`, { token: a.tenant.token })).status, 200);
  const recipients = await sql<{ contact_id: string; email: string }[]>`select contact_id, email from campaign_recipients where campaign_id = ${c.id}`;
  const erased = recipients.find((r) => r.contact_id === contactIds[0])!;
  t.match(erased.email, /^erased:[0-9a-f]{12}$/);
  t.equal(recipients.filter((r) => r.email.startsWith('erased:')).length, 1, 'only that one');
});

t.test("an A/B test: the split share goes half to a, half to b, the rest is held until a winner; then the remainder gets the winner's subject", async (t) => {
  const a = await sender(s);
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('ab', 20));
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, subject: 'Subject A', subject_b: 'Subject B', ab_split_pct: 40 });
  await sendNow(s, a.tenant.token, c.id);
  t.equal(await drain(s, c.id), 'waiting');
  let view = await readCampaign(s, a.tenant.token, c.id);
  t.equal(view.status, 'sending');
  t.equal(view.waiting_reason, 'ab_winner');
  t.equal(view.progress.queued, 8);
  t.equal(view.progress.remaining, 12);
  const bySubject = async () =>
    Object.fromEntries(
      (
        await sql<{ subject: string; v: string | null; n: number }[]>`
      select subject, campaign_variant as v, count(*)::int as n from sends where campaign_id = ${c.id} group by 1, 2`
      ).map((r) => [`${r.subject}/${r.v}`, r.n]),
    );
  t.same(await bySubject(), { 'Subject A/a': 4, 'Subject B/b': 4 });
  const stats = await sql<{ variant: string; targeted: number; queued: number }[]>`
    select variant, targeted::int, queued::int from campaign_stats where campaign_id = ${c.id} order by variant`;
  t.same(stats, [
    { variant: '', targeted: 12, queued: 0 },
    { variant: 'a', targeted: 4, queued: 4 },
    { variant: 'b', targeted: 4, queued: 4 },
  ]);

  // What POST /ab/finalize does (the stats helper's): the winner, the held rows released, the fan-out queued.
  await sql`update campaigns set ab_winner = 'b', ab_winner_declared_at = now() where id = ${c.id}`;
  t.equal(await releaseHeld(sql, c.id, 100), 12);
  t.equal(await drain(s, c.id), 'completed');
  view = await readCampaign(s, a.tenant.token, c.id);
  t.equal(view.status, 'sent');
  t.equal(view.waiting_reason, null);
  t.same(await bySubject(), { 'Subject A/a': 4, 'Subject B/b': 4, 'Subject B/null': 12 });
  t.ok([...(await sendsPerRecipient(sql, c.id)).values()].every((n) => n === 1));
});

t.test('a campaign sent with a test key is simulated throughout', async (t) => {
  const a = await sender(s);
  const { key } = await createKey(s.app, a.tenant, { name: 'test', mode: 'test' });
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('sim', 3));
  const c = await createCampaign(s, key, { list_id: listId, from_email: a.from });
  await sendNow(s, key, c.id);
  t.equal(await drain(s, c.id), 'completed');
  const statuses = await sql<{ status: string }[]>`select distinct status from sends where campaign_id = ${c.id}`;
  t.same(
    statuses.map((r) => r.status),
    ['simulated'],
  );
  t.equal((await readCampaign(s, key, c.id)).send_mode, 'test');
});

t.test('a segment is evaluated when sending starts: contacts added after the campaign was made are in', async (t) => {
  const a = await sender(s);
  const seg = await call(s.app, 'POST', '/segments', {
    token: a.tenant.token,
    body: { name: 'French', definition: { op: 'AND', rules: [{ type: 'field', field: 'country', operator: 'eq', value: 'FR' }] } },
  });
  t.equal(seg.status, 201, JSON.stringify(seg.body));
  const c = await createCampaign(s, a.tenant.token, { segment_id: seg.body.data.id, from_email: a.from });
  const ids = await insertContacts(sql, a.tenant.tenantId, addresses('seg', 9));
  await sql`update contacts set country = 'FR' where id = any(${ids.slice(0, 6)}::uuid[])`;
  await sendNow(s, a.tenant.token, c.id);
  t.equal(await drain(s, c.id), 'completed');
  t.same([...(await sendsPerRecipient(sql, c.id)).keys()].sort(), addresses('seg', 6).sort());
});

t.test('a recipient whose send was stored before its worker died is counted from that send, never sent again', async (t) => {
  const a = await sender(s);
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('crash', 4));
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from });
  await sendNow(s, a.tenant.token, c.id);
  // The target fixed, then a worker claims a batch and stores one send before dying.
  const { materializeNextPage } = await import('../../../shared/campaigns/materialize.js');
  t.equal(await materializeNextPage(s.ctx, c.id), 'done');
  const now = new Date();
  const batch = await claimBatch(sql, c.id, 1, now, new Date(now.getTime() + 60_000));
  const [first] = await batchRecipients(sql, batch!, a.tenant.tenantId);
  const tenant = { id: a.tenant.tenantId, status: 'active' as const, is_sandbox: false };
  await acceptSend(s.ctx, {
    tenant,
    mode: 'live',
    apiKeyId: null,
    source: 'campaign',
    sendId: first!.send_id,
    campaign: { id: c.id, variant: null, contactId: first!.contact_id },
    from: { address: a.from },
    to: first!.email,
    content: { kind: 'compose', subject: 'Hello', text: 'Hi' },
  });
  // Its claim runs out.
  await sql`update campaign_batches set claimed_until = now() - interval '1 second' where campaign_id = ${c.id}`;
  t.equal(await drain(s, c.id), 'completed');
  const sends = await sendsPerRecipient(sql, c.id);
  t.equal(sends.size, 4);
  t.ok(
    [...sends.values()].every((n) => n === 1),
    'nobody twice',
  );
  t.equal((await readCampaign(s, a.tenant.token, c.id)).progress.queued, 4, 'counted once');
});

t.test('two workers on one campaign share it: every recipient once, both did work', async (t) => {
  const a = await sender(s);
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('pair', 60));
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from });
  await sendNow(s, a.tenant.token, c.id);
  const counts = [0, 0];
  /** A logger that adds up each slot's "campaign batch" lines (the slot comes from the child's bindings). */
  const counting = (bindings: { slot?: number }): typeof s.ctx.log =>
    ({
      child: (more: { slot?: number }) => counting({ ...bindings, ...more }),
      info: (obj: { queued?: number }) => {
        if (typeof obj?.queued === 'number' && bindings.slot !== undefined) counts[bindings.slot]! += obj.queued;
      },
      warn: () => {},
      error: () => {},
      debug: () => {},
    }) as unknown as typeof s.ctx.log;
  const log = counting({});
  const deps = { ...s.ctx, log };
  const worker = async (slot: number) => {
    for (let i = 0; i < 100; i++) {
      const outcome = await runFanout(deps, { campaign_id: c.id, slot });
      if (outcome !== 'continued') return outcome;
    }
    return 'continued';
  };
  const outcomes = await Promise.all([worker(0), worker(1)]);
  t.ok(outcomes.includes('completed'), JSON.stringify(outcomes));
  const sends = await sendsPerRecipient(sql, c.id);
  t.equal(sends.size, 60);
  t.ok([...sends.values()].every((n) => n === 1));
  t.equal(counts[0]! + counts[1]!, 60);
  t.ok(counts[0]! > 0 && counts[1]! > 0, `both workers sent: ${counts.join(' + ')}`);
  t.equal((await readCampaign(s, a.tenant.token, c.id)).status, 'sent');
});

t.test('a batch is ended only by the worker whose claim stands: one that outlived its claim counts nothing', async (t) => {
  const a = await sender(s);
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('lease', 3));
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from });
  await sendNow(s, a.tenant.token, c.id);
  const { materializeNextPage } = await import('../../../shared/campaigns/materialize.js');
  t.equal(await materializeNextPage(s.ctx, c.id), 'done');
  const { finishBatch } = await import('../../../shared/campaigns/batch-queries.js');
  const now = new Date();
  const mine = (await claimBatch(sql, c.id, 3, now, new Date(now.getTime() + 60_000)))!;
  t.same([mine.firstSeq, mine.lastSeq], [1, 3], 'the first three positions');
  t.equal(await claimBatch(sql, c.id, 3, now, new Date(now.getTime() + 60_000)), undefined, 'nothing else to claim while the claim lasts');
  // The claim runs out and another worker takes the batch over.
  const later = new Date(now.getTime() + 61_000);
  const theirs = (await claimBatch(sql, c.id, 3, later, new Date(later.getTime() + 60_000)))!;
  t.equal(theirs.firstSeq, 1, 'the batch left behind is taken first');
  const [first] = await batchRecipients(sql, mine, a.tenant.tenantId);
  t.equal(
    await finishBatch(sql, mine, { skipped: [{ contactId: first!.contact_id, reason: 'invalid' }], sent: [], complete: true }),
    false,
    'the old claim ends nothing',
  );
  t.same((await readCampaign(s, a.tenant.token, c.id)).progress.skipped.invalid, 0, 'and counts nothing');
  t.equal(
    await finishBatch(sql, theirs, { skipped: [{ contactId: first!.contact_id, reason: 'invalid' }], sent: [], complete: false }),
    true,
    'the standing claim does',
  );
  t.same((await readCampaign(s, a.tenant.token, c.id)).progress.skipped.invalid, 1);
  const [row] = await sql<{ claimed_until: Date | null }[]>`select claimed_until from campaign_batches where campaign_id = ${c.id}`;
  t.equal(row?.claimed_until, null, 'an unfinished batch is given back for a later run');
  t.equal(await drain(s, c.id), 'completed');
  t.equal((await sendsPerRecipient(sql, c.id)).size, 2, 'the other two sent');
  t.equal((await readCampaign(s, a.tenant.token, c.id)).progress.queued, 2);
});
