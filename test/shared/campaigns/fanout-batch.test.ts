// The fan-out's batch rules against a store in memory (no PostgreSQL): batches over the positions, each recipient sent once however often its batch is
// claimed, the per-recipient decisions (send, skip and why, hold at the warm-up cap), the A/B variants, a batch taken over once its lease ran out. The
// claims and completions as SQL, and the whole fan-out: fanout.test.ts, lifecycle.test.ts, test/scenarios/campaigns/crash.test.ts.
import t from 'tap';
import { loadConfig } from '../../../shared/config/index.js';
import { prepareContent } from '../../../shared/campaigns/content.js';
import { sendBatch, type BatchContext } from '../../../shared/campaigns/fanout-batch.js';
import type { CampaignRow } from '../../../shared/campaigns/queries.js';
import type { SendingDeps } from '../../../shared/sending/deps.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { systemClock } from '../../../shared/kernel/clock.js';
import { inlineRenderer } from '../../helpers/inline-renderer.js';
import { MemoryFanoutStore } from '../../helpers/memory-fanout-store.js';

const CAMPAIGN = 'c0000000-0000-4000-8000-000000000001';
const deps = {
  config: loadConfig({}),
  renderer: inlineRenderer,
  linkKey: Buffer.alloc(32, 7),
  log: createLogger('silent'),
  clock: systemClock,
} as unknown as SendingDeps;
const now = new Date('2026-03-01T10:00:00Z');
const LEASE_MS = 60_000;

function contextOf(over: Partial<CampaignRow> = {}): BatchContext {
  const campaign = {
    id: CAMPAIGN,
    name: 'Spring',
    tenant_id: 't0000000-0000-4000-8000-000000000001',
    status: 'sending',
    ab_winner: null,
    track_opens: false,
    track_clicks: false,
    utm_tagging: false,
    utm_source: null,
    utm_medium: null,
    utm_campaign: null,
    ...over,
  } as CampaignRow;
  const content = prepareContent({ subject: 'Subject A', subject_b: 'Subject B', preheader_text: null, body_html: null, body_text: 'Hello' }, true);
  return {
    campaign,
    sender: { from_email: 'news@example.test', from_name: null, reply_to: null },
    content,
    tenant: { id: campaign.tenant_id, status: 'active', is_sandbox: false },
    mode: 'live',
    catalog: [],
  };
}

/** Claims and sends batches of `size` at `at` until none is left, as the fan-out's loop does; the batches' sizes. */
async function drain(store: MemoryFanoutStore, ctx: BatchContext, size: number, at = now): Promise<number[]> {
  const sizes: number[] = [];
  for (;;) {
    const batch = await store.claimBatch(CAMPAIGN, size, at, new Date(at.getTime() + LEASE_MS));
    if (!batch) return sizes;
    sizes.push(batch.lastSeq - batch.firstSeq + 1);
    const result = await sendBatch(deps, store, ctx, batch);
    if (result.released > 0) return sizes;
  }
}

t.test('recipients go out in batches of positions, each exactly once; nothing is left to claim after', async (t) => {
  const store = new MemoryFanoutStore(CAMPAIGN);
  for (let i = 0; i < 5; i++) store.addRecipient({ email: `r${i}@example.org` });
  t.same(await drain(store, contextOf(), 2), [2, 2, 1]);
  t.same([...store.sendsPerAddress().values()], [1, 1, 1, 1, 1]);
  t.equal(store.counters.queued, 5, 'each counted once, as queued');
  t.equal(store.batches.size, 0, 'every batch completed');
  t.same(await store.fanoutLeft(CAMPAIGN, now), { unclaimed: false, claimedUntil: null, orphaned: false, held: false });
});

t.test('a batch claimed twice sends once: its worker died after the sends, the lease ran out, another takes it over', async (t) => {
  const store = new MemoryFanoutStore(CAMPAIGN);
  for (let i = 0; i < 3; i++) store.addRecipient({ email: `r${i}@example.org` });
  const ctx = contextOf();
  const first = (await store.claimBatch(CAMPAIGN, 3, now, new Date(now.getTime() + LEASE_MS)))!;
  // The worker dies between its sends and the batch's completion.
  const finish = store.finishBatch.bind(store);
  store.finishBatch = async () => {
    throw new Error('killed');
  };
  await t.rejects(sendBatch(deps, store, ctx, first), /killed/);
  store.finishBatch = finish;
  t.equal(store.sends.size, 3, 'the sends were stored');
  t.equal(await store.claimBatch(CAMPAIGN, 3, now, new Date(now.getTime() + LEASE_MS)), undefined, 'nothing to claim while the lease lasts');

  const later = new Date(now.getTime() + LEASE_MS + 1);
  const again = (await store.claimBatch(CAMPAIGN, 3, later, new Date(later.getTime() + LEASE_MS)))!;
  t.same([again.firstSeq, again.lastSeq], [first.firstSeq, first.lastSeq], 'the same batch, taken over once its lease ran out');
  const result = await sendBatch(deps, store, ctx, again);
  t.match(result, { queued: 3, skipped: 0, released: 0 });
  t.equal(store.sendCalls.length, 3, 'the second run sent nobody again');
  t.same([...store.sendsPerAddress().values()], [1, 1, 1]);
  t.equal(store.counters.queued, 3, 'counted once');
  t.notOk(await finish(first, { skipped: [], sent: [], complete: true }), 'the first worker, back, ends nothing: its claim is gone');
});

t.test('a slow worker whose batch was taken over reports none of it: the worker that took it over counts it', async (t) => {
  const store = new MemoryFanoutStore(CAMPAIGN);
  for (let i = 0; i < 3; i++) store.addRecipient({ email: `r${i}@example.org` });
  const ctx = contextOf();
  const slow = (await store.claimBatch(CAMPAIGN, 3, now, new Date(now.getTime() + LEASE_MS)))!;
  const later = new Date(now.getTime() + LEASE_MS + 1);
  const taker = (await store.claimBatch(CAMPAIGN, 3, later, new Date(later.getTime() + LEASE_MS)))!;
  t.match(await sendBatch(deps, store, ctx, slow), { queued: 0, skipped: 0 }, 'the slow worker, its claim gone, reports nothing');
  t.match(await sendBatch(deps, store, ctx, taker), { queued: 3, skipped: 0, released: 0 }, 'the taker reports the batch');
  t.same([...store.sendsPerAddress().values()], [1, 1, 1], 'each recipient sent once');
  t.equal(store.counters.queued, 3, 'counted once');
});

t.test('per recipient: sent, or skipped as deleted, unsubscribed, suppressed or invalid', async (t) => {
  const store = new MemoryFanoutStore(CAMPAIGN);
  const ok = store.addRecipient({ email: 'ok@example.org' });
  store.addRecipient({ email: 'left@example.org', contact: { status: 'unsubscribed' } });
  store.addRecipient({ email: 'gone@example.org', contact: { status: 'deleted' } });
  const erased = store.addRecipient({ email: 'erased@example.org' });
  store.contacts.delete(erased.contactId);
  store.addRecipient({ email: 'blocked@example.org' });
  store.suppressed.add('blocked@example.org');
  store.addRecipient({ email: 'not an address' });
  t.same(await drain(store, contextOf(), 10), [6]);
  t.same([...store.sends.keys()].sort(), [ok.sendId, store.recipients[4]!.sendId].sort(), 'the suppressed send is stored (dropped) by the send use-case');
  t.same(Object.fromEntries(store.counters.skipped), { unsubscribed: 1, deleted: 2, suppressed: 1, invalid: 1 });
  t.equal(store.counters.queued, 1);
  t.same(
    store.recipients.map((r) => r.skipReason),
    [null, 'unsubscribed', 'deleted', 'deleted', 'suppressed', 'invalid'],
  );
});

t.test('at the warm-up cap the rest are held: the batch is given back and its sent ones counted; the next window sends only the held', async (t) => {
  const store = new MemoryFanoutStore(CAMPAIGN);
  for (let i = 0; i < 4; i++) store.addRecipient({ email: `r${i}@example.org` });
  store.warmupRoom = 3;
  const ctx = contextOf();
  const batch = (await store.claimBatch(CAMPAIGN, 4, now, new Date(now.getTime() + LEASE_MS)))!;
  const result = await sendBatch(deps, store, ctx, batch);
  t.match(result, { queued: 3, released: 1, heldUntil: store.warmupOpensAt });
  t.equal(store.batches.get(batch.firstSeq)?.claimedUntil, null, 'given back, unfinished');
  t.equal(store.counters.queued, 3, 'its sent recipients counted while the campaign waits');

  store.warmupRoom = Number.POSITIVE_INFINITY;
  const next = store.warmupOpensAt;
  t.same(await drain(store, ctx, 4, next), [4], 'the given-back batch again');
  t.equal(store.sendCalls.length, 5, 'of it only the held one was sent this time');
  t.equal(store.counters.queued, 4);
  t.same([...store.sendsPerAddress().values()], [1, 1, 1, 1]);
});

t.test("A/B: each variant's recipients get its subject; the held remainder waits, then gets the winner's", async (t) => {
  const store = new MemoryFanoutStore(CAMPAIGN);
  store.addRecipient({ email: 'a1@example.org', variant: 'a' });
  store.addRecipient({ email: 'b1@example.org', variant: 'b' });
  store.addRecipient({ email: 'a2@example.org', variant: 'a' });
  for (let i = 0; i < 3; i++) store.addRecipient({ email: `held${i}@example.org`, held: true });
  const bySubject = () => {
    const out: Record<string, number> = {};
    for (const { input } of store.sends.values()) {
      const key = `${input.content.kind === 'compose' ? input.content.subject : '?'}/${input.campaign?.variant ?? null}`;
      out[key] = (out[key] ?? 0) + 1;
    }
    return out;
  };
  t.same(await drain(store, contextOf(), 2), [2, 1]);
  t.same(bySubject(), { 'Subject A/a': 2, 'Subject B/b': 1 });
  t.match(await store.fanoutLeft(CAMPAIGN, now), { unclaimed: false, held: true }, 'the remainder is held for the winner');

  t.equal(await store.releaseHeld(CAMPAIGN, 100), 3);
  t.same(await drain(store, contextOf({ ab_winner: 'b' }), 2), [2, 1]);
  t.same(bySubject(), { 'Subject A/a': 2, 'Subject B/b': 1, 'Subject B/null': 3 });
  t.ok([...store.sendsPerAddress().values()].every((n) => n === 1));
});
