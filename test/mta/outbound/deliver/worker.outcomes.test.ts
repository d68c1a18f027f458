// What delivery outcomes leave behind, against a real SMTP sink and an injected clock: the retry curve and its age limit, hard and soft bounces with
// suppression, warm-up deferrals re-checked at wake-up.
import t from 'tap';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { monthlyUsage } from '../../../../shared/limits/quota/usage.js';
import { listAttempts } from '../../../../shared/sending/outbound-log/queries.js';
import { suppress } from '../../../../shared/audiences/suppressions/service.js';
import { dailyCount } from '../../../../shared/deliverability/warmup/queries.js';
import { nextUtcMidnight, utcDay } from '../../../../shared/deliverability/warmup/tiers.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { pollUntil, startSmtpSink } from '../../../helpers/smtp-sink.js';

const MIN = 60_000;
const sink = await startSmtpSink(t);
const clock = new ManualClock(new Date());
const { sql, deps, sender, recipient, send, sendRow, settled, queued, events, outbound } = await deliveryFixture(t, {
  clock,
  env: { MAILPATH_OUTBOUND_RELAY: sink.address },
});
/** Makes a send scheduled for later (by the injected clock) due now. */
const release = (id: string) => sql`update delivery_queue set due_at = ${clock.now()} where send_id = ${id}`;

t.beforeEach(() => quietSink(sink));

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
  t.same((await queued(id))?.due_at, retryAt, 'due again at the retry');
  const [event] = (await events(id)).filter((e) => e.type === 'deferred');
  t.match(event!.detail, { reason: 'temporary_failure', attempt: 1, smtp_code: 451, enhanced_code: '4.7.1', next_retry: retryAt.toISOString() });
  t.match(event!.detail['reply'], /^451 4\.7\.1 Greylisted/);

  clock.advance(5 * MIN);
  await release(id);
  await settled(id, ['delivered']);
  t.same(
    (await listAttempts(sql, id)).map((a) => a.outcome),
    ['deferred', 'delivered'],
  );
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
  t.equal(await queued(id), undefined, 'no further retry: out of the queue');
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
  const hardRow = await settled(hard.id, ['bounced']);
  t.equal(hardRow.status_detail, '550 5.1.1 <nobody>: Recipient address rejected: User unknown');
  const hardEvent = (await events(hard.id)).find((e) => e.type === 'bounce');
  t.match(hardEvent, { subtype: 'hard', detail: { smtp_code: 550, enhanced_code: '5.1.1' } });
  const [suppression] = await sql`select email, reason, source, detail, message_id from suppressions where tenant_id = ${from.tenant.id}`;
  t.match(suppression, { email: hard.to, reason: 'hard_bounce', source: 'bounce', detail: /5\.1\.1/, message_id: hard.id });

  await settled(soft.id, ['bounced']);
  t.match(
    (await events(soft.id)).find((e) => e.type === 'bounce'),
    { subtype: 'soft', detail: { enhanced_code: '5.7.1' } },
  );
  t.equal((await sql`select 1 from suppressions where tenant_id = ${from.tenant.id} and email = ${soft.to}`).length, 0);
  t.equal(sink.messages.length, 0);
  t.same(
    (await listAttempts(sql, hard.id)).map((a) => a.outcome),
    ['bounced'],
  );
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
  await pollUntil('a due at midnight again', async () => ((await queued(a.id))?.due_at.getTime() === midnight.getTime() ? true : undefined));
  const again = await sendRow(a.id);
  t.equal(again.status, 'deferred');
  t.same(again.defer_until, midnight);
  t.equal((await queued(a.id))?.claimed_at, null, 'no worker holds it');
  t.equal((await events(a.id)).filter((e) => e.type === 'deferred').length, 2);

  // At midnight the new day's allowance takes it.
  clock.set(new Date(midnight.getTime() + MIN));
  await release(a.id);
  await settled(a.id, ['delivered']);
  t.equal(await dailyCount(sql, from.tenant.id, from.domain.id, utcDay(clock.now())), 1, 'counted on the new day');
  t.equal(
    (await monthlyUsage(sql, from.tenant.id, new Date(`${today}T12:00:00Z`))).used,
    1,
    'the quota counts the delivered send once (at acceptance); the dropped one was given back',
  );
  t.same(
    sink.rcpts.map((r) => r.to),
    [a.to],
  );
});
