// The delivery outcome's rules against a store in memory (no PostgreSQL): what a 2xx, a 5xx and a 4xx on the retry curve write, and what a drop gives back.
// The same rules against PostgreSQL: test/mta/outbound/deliver/worker.outcomes.test.ts.
import t from 'tap';
import { loadConfig } from '../../../shared/config/index.js';
import { classify, type SmtpOutcome } from '../../../shared/delivery/classify.js';
import { recordAttempt, recordDrop, type RecordDeps } from '../../../shared/delivery/record.js';
import type { DeliverySend } from '../../../shared/sending/outbound-log/delivery-queries.js';
import { MemoryOutcomeStore } from '../../helpers/memory-outcome-store.js';

const config = loadConfig({});
const curve = config.delivery.retry;
const MIN = 60_000;
const HOUR = 60 * MIN;
const accepted = new Date('2026-03-01T10:00:00Z');

let sends = 0;
function sendOf(over: Partial<DeliverySend> = {}): DeliverySend {
  sends++;
  return {
    id: `send-${sends}`,
    tenant_id: 'tenant-1',
    domain_id: 'domain-1',
    mode: 'live',
    status: 'queued',
    to_email: `Reader-${sends}@example.org`,
    envelope_from: 'bounces@mx.test',
    message_id: `m-${sends}@mx.test`,
    defer_until: null,
    created_at: accepted,
    updated_at: accepted,
    tenant_status: 'active',
    tenant_is_sandbox: false,
    attempts: 0,
    first_attempt_at: null,
    campaign_id: 'campaign-1',
    contact_id: 'contact-1',
    ...over,
  };
}

function world() {
  const store = new MemoryOutcomeStore();
  const deps: RecordDeps = { outcomes: store, config };
  /** One attempt of `send` at `at` that the remote host answered with `reply` (its code first). */
  const attempt = (send: DeliverySend, reply: string, at: Date) => {
    store.enqueue(send.id, at);
    const outcome: SmtpOutcome = { kind: 'reply', code: Number(reply.slice(0, 3)), text: reply };
    return recordAttempt(deps, send, {
      result: { outcome, remoteHost: 'mx1.example.org [192.0.2.1]' },
      classification: classify(config.bounceRules, outcome),
      at,
      durationMs: 12,
    });
  };
  return { store, deps, attempt };
}

t.test('a 2xx: delivered, its attempt and delivered event written, out of the queue, nothing suppressed', async (t) => {
  const { store, attempt } = world();
  const send = sendOf();
  t.same(await attempt(send, '250 2.0.0 ok queued', accepted), { outcome: 'delivered' });
  t.match(store.statuses.get(send.id), { status: 'delivered', detail: 'mx1.example.org [192.0.2.1]: 250 2.0.0 ok queued' });
  t.match(store.attempts, [{ send_id: send.id, outcome: 'delivered', smtp_code: 250, enhanced_code: '2.0.0', duration_ms: 12 }]);
  t.match(store.events, [{ type: 'delivered', send_id: send.id, campaign_id: 'campaign-1', contact_id: 'contact-1', detail: { attempt: 1 } }]);
  t.notOk(store.queue.has(send.id), 'its delivery has ended');
  t.equal(store.refusals.length, 0, 'a delivery is no refusal');
  t.equal(store.suppressions.size, 0);
});

t.test('a 5xx hard bounce: bounced, its event, the recipient suppressed for its tenant, out of the queue', async (t) => {
  const { store, attempt } = world();
  const send = sendOf();
  t.same(await attempt(send, '550 5.1.1 no such user', accepted), { outcome: 'bounced', bounce: 'hard' });
  t.match(store.statuses.get(send.id), { status: 'bounced', detail: '550 5.1.1 no such user' });
  t.match(store.attempts, [{ outcome: 'bounced', smtp_code: 550, enhanced_code: '5.1.1' }]);
  t.match(store.events, [{ type: 'bounce', subtype: 'hard', recipient: send.to_email, detail: { smtp_code: 550, enhanced_code: '5.1.1' } }]);
  t.ok(store.isSuppressed('tenant-1', send.to_email), 'the recipient is suppressed');
  t.equal(store.suppressions.get('tenant-1')?.get(send.to_email.toLowerCase()), send.id, 'naming the send that caused it');
  t.notOk(store.isSuppressed('tenant-2', send.to_email), "another tenant's list is untouched");
  t.notOk(store.queue.has(send.id));
  t.match(store.refusals, [{ verdict: 'bounce', smtpCode: 550 }], 'the refusal counts toward the provider suppressions');
});

t.test('a 5xx soft bounce (mailbox full) bounces without suppressing', async (t) => {
  const { store, attempt } = world();
  const send = sendOf();
  t.same(await attempt(send, '552 5.2.2 mailbox full', accepted), { outcome: 'bounced', bounce: 'soft' });
  t.match(store.events, [{ type: 'bounce', subtype: 'soft' }]);
  t.notOk(store.isSuppressed('tenant-1', send.to_email));
});

t.test('a 4xx defers on the retry curve, then bounces soft once the age limit is reached', async (t) => {
  const { store, attempt } = world();
  const send = sendOf();
  const first = await attempt(send, '451 4.7.1 try again later', accepted);
  const due = new Date(accepted.getTime() + curve.first_retry_minutes * MIN);
  t.same(first, { outcome: 'deferred', nextRetry: due }, 'the first wait of the curve');
  t.match(store.statuses.get(send.id), { status: 'deferred', deferUntil: due });
  t.same(store.queue.get(send.id), due, 'due again then, still in the queue');
  t.match(store.events, [{ type: 'deferred', detail: { reason: 'temporary_failure', next_retry: due.toISOString(), attempt: 1 } }]);

  // The third attempt: the wait grows by the factor.
  const third = new Date(accepted.getTime() + HOUR);
  const again = await attempt({ ...send, attempts: 2, first_attempt_at: accepted }, '451 4.7.1 try again later', third);
  t.same(again, { outcome: 'deferred', nextRetry: new Date(third.getTime() + curve.first_retry_minutes * curve.factor ** 2 * MIN) });

  // At the age limit, counted from the first attempt: given up on, a soft bounce, nothing suppressed.
  const last = new Date(accepted.getTime() + curve.max_age_hours * HOUR);
  const end = await attempt({ ...send, attempts: 9, first_attempt_at: accepted }, '451 4.7.1 try again later', last);
  t.same(end, { outcome: 'bounced', bounce: 'soft' });
  t.match(store.statuses.get(send.id), { status: 'bounced', detail: /^gave up after 10 attempts over \d+ h; last reply: 451/ });
  t.match(store.events.at(-1), { type: 'bounce', subtype: 'soft', detail: { reason: /^gave up after 10 attempts/ } });
  t.match(store.attempts.at(-1), { outcome: 'bounced' });
  t.notOk(store.queue.has(send.id), 'its delivery has ended');
  t.notOk(store.isSuppressed('tenant-1', send.to_email), 'a soft bounce suppresses nobody');
});

t.test('a drop before delivery: dropped with its event, its quota given back, out of the queue', async (t) => {
  const { store, deps } = world();
  const send = sendOf();
  store.enqueue(send.id, accepted);
  await recordDrop(deps, send, { at: accepted, reason: 'suppressed', gate: 'suppression', detail: 'dropped before delivery: the recipient is suppressed' });
  t.match(store.statuses.get(send.id), { status: 'dropped' });
  t.match(store.events, [{ type: 'dropped', detail: { reason: 'suppressed', gate: 'suppression', at_wake_up: true } }]);
  t.equal(store.quotaReleased.get('tenant-1'), 1);
  t.notOk(store.queue.has(send.id));
  t.equal(store.attempts.length, 0, 'no attempt was made');
});
