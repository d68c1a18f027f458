// What delivery outcomes leave behind, against a real SMTP sink and an injected clock: the retry curve and its age limit, hard and soft bounces with suppression, warm-up deferrals re-checked at wake-up.
import t from 'tap';
import { acceptSend, type AcceptInput } from '../../../../mta/outbound/accept.js';
import { startOutbound } from '../../../../mta/outbound/deliver/start.js';
import { DELIVERY_QUEUE } from '../../../../mta/outbound/queue.js';
import { ManualClock } from '../../../../shared/clock.js';
import { monthlyUsage } from '../../../../shared/quota/usage.js';
import { listAttempts } from '../../../../shared/sends/queries.js';
import { suppress } from '../../../../shared/suppressions/service.js';
import { dailyCount } from '../../../../shared/warmup/queries.js';
import { nextUtcMidnight, utcDay } from '../../../../shared/warmup/tiers.js';
import { buildTestApp, type TestLike } from '../../../helpers/app.js';
import { verifiedSendingDomain, type SendingDomain } from '../../../helpers/sending-domain.js';
import { pollUntil, startSmtpSink } from '../../../helpers/smtp-sink.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const MIN = 60_000;
const sink = await startSmtpSink(t);
const clock = new ManualClock(new Date());
const { ctx, sql } = await buildTestApp(t, {
  clock,
  env: {
    MAILPATH_OUTBOUND_RELAY: sink.address,
    MAILPATH_CONFIG__DELIVERY__DESTINATION__IDLE_CLOSE_MS: '300',
  },
});
const deps = ctx.outbound;

interface SendState {
  status: string;
  status_detail: string | null;
  defer_until: Date | null;
  message: Buffer | null;
}
const sendRow = async (id: string) => (await sql<SendState[]>`select status, status_detail, defer_until, message from sends where id = ${id}`)[0]!;
const settled = (id: string, statuses: string[]) =>
  pollUntil(`send ${id} to be ${statuses.join(' or ')}`, async () => {
    const row = await sendRow(id);
    return statuses.includes(row.status) ? row : undefined;
  });
const jobs = (id: string) => sql<{ id: string; state: string; start_after: Date }[]>`
  select id, state, start_after from pgboss.job where name = ${DELIVERY_QUEUE} and data->>'send_id' = ${id} order by created_on`;
/** Lets a job scheduled for later (by the injected clock) run now. */
const release = (id: string) => sql`update pgboss.job set start_after = now() where name = ${DELIVERY_QUEUE} and data->>'send_id' = ${id} and state = 'created'`;
const events = (id: string) => sql<{ type: string; subtype: string | null; detail: Record<string, unknown> }[]>`
  select type, subtype, detail from events where send_id = ${id} order by occurred_at, type`;

async function sender(): Promise<{ tenant: AcceptInput['tenant']; domain: SendingDomain }> {
  const tenantId = await insertTenant(sql);
  const domain = await verifiedSendingDomain(sql, ctx.domains.vault, tenantId);
  return { tenant: { id: tenantId, status: 'active', is_sandbox: false }, domain };
}

let counter = 0;
/** A fresh recipient, so the sink can be scripted before the worker can see the send. */
const recipient = () => `rcpt${++counter}@dest.example`;
async function send(from: { tenant: AcceptInput['tenant']; domain: SendingDomain }, over: Partial<AcceptInput> = {}): Promise<{ id: string; to: string }> {
  const to = over.to ?? recipient();
  const result = await acceptSend(deps, {
    tenant: from.tenant,
    mode: 'live',
    apiKeyId: null,
    source: 'api',
    from: { address: `news@${from.domain.name}` },
    to,
    content: { kind: 'compose', subject: 'Hello', text: 'Hi there' },
    ...over,
  });
  return { id: result.send.id, to };
}

/** The outbound role for one test, stopped (gracefully) when it ends. */
async function outbound(t: TestLike): Promise<void> {
  const running = await startOutbound(deps);
  t.teardown(() => running.stop());
}

t.beforeEach(async () => {
  sink.reset();
  // Each test counts its own connections: the previous test's pool has closed by now.
  await pollUntil('idle connections to close', async () => (sink.stats().open === 0 ? true : undefined));
  sink.reset();
});

t.test('a 4xx defers on the retry curve, and the retry delivers', async (t) => {
  const from = await sender();
  await outbound(t);
  const to = recipient();
  sink.answerFor(to, { code: 451, text: '4.7.1 Greylisted, try again later' });
  const attemptAt = clock.now();
  const { id } = await send(from, { to });
  const deferred = await settled(id, ['deferred']);
  const retryAt = new Date(attemptAt.getTime() + 5 * MIN);
  t.same(deferred.defer_until, retryAt, 'first retry after first_retry_minutes');
  const pending = (await jobs(id)).filter((j) => j.state === 'created');
  t.equal(pending.length, 1);
  t.same(pending[0]!.start_after, retryAt);
  const [event] = (await events(id)).filter((e) => e.type === 'deferred');
  t.match(event!.detail, { reason: 'temporary_failure', attempt: 1, smtp_code: 451, enhanced_code: '4.7.1', next_retry: retryAt.toISOString() });
  t.match(event!.detail['reply'], /^451 4\.7\.1 Greylisted/);

  clock.advance(5 * MIN);
  await release(id);
  await settled(id, ['delivered']);
  t.same((await listAttempts(sql, id)).map((a) => a.outcome), ['deferred', 'delivered']);
  t.equal(sink.messages.length, 1);
});

t.test('a temporary failure once the message is max_age_hours old becomes a soft bounce', async (t) => {
  const from = await sender();
  await outbound(t);
  const to = recipient();
  sink.answerFor(to, { code: 451, text: '4.3.0 Try later' }, { code: 452, text: '4.2.2 Mailbox full' });
  const { id } = await send(from, { to });
  await settled(id, ['deferred']);
  clock.advance(73 * 60 * MIN);
  await release(id);
  const row = await settled(id, ['bounced']);
  t.match(row.status_detail, /^gave up after 2 attempts over 73 h; last reply: 452 4\.2\.2 Mailbox full/);
  const bounce = (await events(id)).find((e) => e.type === 'bounce');
  t.equal(bounce?.subtype, 'soft');
  t.match(bounce?.detail, { reason: 'gave up after 2 attempts over 73 h', attempt: 2 });
  t.equal((await jobs(id)).filter((j) => j.state === 'created').length, 0, 'no further retry');
  t.equal((await sql`select 1 from suppressions where tenant_id = ${from.tenant.id}`).length, 0);
});

t.test('5.1.1 is a hard bounce that suppresses the recipient; 5.7.1 is soft and does not', async (t) => {
  const from = await sender();
  await outbound(t);
  const [hardTo, softTo] = [recipient(), recipient()];
  sink.answerFor(hardTo, { code: 550, text: '5.1.1 <nobody>: Recipient address rejected: User unknown' });
  sink.answerFor(softTo, { code: 550, text: '5.7.1 Message rejected as spam', at: 'data' });
  const hard = await send(from, { to: hardTo });
  const soft = await send(from, { to: softTo });
  const hardRow = await settled(hard.id, ["bounced"]);
  t.equal(hardRow.status_detail, '550 5.1.1 <nobody>: Recipient address rejected: User unknown');
  const hardEvent = (await events(hard.id)).find((e) => e.type === 'bounce');
  t.match(hardEvent, { subtype: 'hard', detail: { smtp_code: 550, enhanced_code: '5.1.1' } });
  const [suppression] = await sql`select email, reason, source, detail, message_id from suppressions where tenant_id = ${from.tenant.id}`;
  t.match(suppression, { email: hard.to, reason: 'hard_bounce', source: 'bounce', detail: /5\.1\.1/, message_id: hard.id });

  await settled(soft.id, ['bounced']);
  t.match((await events(soft.id)).find((e) => e.type === 'bounce'), { subtype: 'soft', detail: { enhanced_code: '5.7.1' } });
  t.equal((await sql`select 1 from suppressions where tenant_id = ${from.tenant.id} and email = ${soft.to}`).length, 0);
  t.equal(sink.messages.length, 0);
  t.same((await listAttempts(sql, hard.id)).map((a) => a.outcome), ['bounced']);
});

t.test('a warm-up deferral is re-checked at wake-up: over the cap again, suppressed meanwhile, then allowed', async (t) => {
  const from = await sender();
  const cap = deps.config.warmup.tier_caps[0]!;
  const today = utcDay(clock.now());
  await sql`insert into warmup_daily_counters (tenant_id, domain_id, day, sent) values (${from.tenant.id}, ${from.domain.id}, ${today}, ${cap})`;
  const a = await send(from);
  const b = await send(from);
  const midnight = nextUtcMidnight(clock.now());
  t.same((await sendRow(a.id)).defer_until, midnight);
  await suppress(sql, from.tenant.id, { email: b.to, reason: 'manual', source: 'api', at: clock.now() });
  await outbound(t);

  // Woken early (still today, still over the cap): deferred again to midnight; the suppressed one is dropped.
  await release(a.id);
  await release(b.id);
  const dropped = await settled(b.id, ['dropped']);
  t.equal(dropped.message, null, 'a dropped send keeps no message');
  t.match((await events(b.id)).find((e) => e.type === 'dropped')?.detail, { reason: 'suppressed' });
  await pollUntil('a new job for a', async () => ((await jobs(a.id)).filter((j) => j.state === 'created').length === 1 ? true : undefined));
  const again = await sendRow(a.id);
  t.equal(again.status, 'deferred');
  t.same(again.defer_until, midnight);
  t.same((await jobs(a.id)).find((j) => j.state === 'created')?.start_after, midnight);
  t.equal((await events(a.id)).filter((e) => e.type === 'deferred').length, 2);

  // At midnight the new day's allowance takes it.
  clock.set(new Date(midnight.getTime() + MIN));
  await release(a.id);
  await settled(a.id, ['delivered']);
  t.equal(await dailyCount(sql, from.tenant.id, from.domain.id, utcDay(clock.now())), 1, 'counted on the new day');
  t.equal((await monthlyUsage(sql, from.tenant.id, new Date(`${today}T12:00:00Z`))).used, 2, 'the quota was counted once, at acceptance');
  t.same(sink.rcpts.map((r) => r.to), [a.to]);
});
