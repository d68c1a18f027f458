// A campaign whose segment runs past the materialisation deadline fails, saying why, instead of being retried hot; the page's transaction is rolled back and
// its connection clean.
import t from 'tap';
import { call } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, drain, readCampaign, sender, sendNow } from '../../helpers/campaigns.js';
import { insertContacts } from '../../helpers/lists.js';

t.test('a segment past its deadline fails the campaign with a readable reason', async (t) => {
  const s = await campaignApp(t, { env: { MAILPATH_CONFIG__QUERIES__DEADLINES_MS__SEGMENT_MATERIALIZE: '200' } });
  const a = await sender(s);
  await insertContacts(s.sql, a.tenant.tenantId, addresses('slow', 5));
  const seg = await call(s.app, 'POST', '/segments', {
    token: a.tenant.token,
    body: { name: 'Everyone', definition: { op: 'AND', rules: [{ type: 'field', field: 'email', operator: 'exists' }] } },
  });
  t.equal(seg.status, 201);
  const c = await createCampaign(s, a.tenant.token, { segment_id: seg.body.data.id, from_email: a.from });
  await sendNow(s, a.tenant.token, c.id);

  // Another transaction holds the contacts: the page's select waits, and the wait runs into the deadline.
  const holder = await s.sql.reserve();
  await holder`begin`;
  await holder`lock table contacts in access exclusive mode`;
  let outcome;
  try {
    // Bounded: without a deadline the page would wait for the lock for ever.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the fan-out did not stop within 10 s')), 10_000)));
    outcome = await Promise.race([drain(s, c.id), late]).finally(() => clearTimeout(timer));
  } finally {
    await holder`commit`;
    holder.release();
  }
  t.equal(outcome, 'failed', 'the run stops instead of continuing or throwing for a retry');
  const view = await readCampaign(s, a.tenant.token, c.id);
  t.equal(view.status, 'failed');
  t.match(view.failure_reason, /^its segment's rule set is too expensive: selecting one page of its recipients ran past the 200 ms deadline/);
  const [page] = await s.sql<{ n: number; cursor: string | null }[]>`
    select (select count(*)::int from campaign_recipients where campaign_id = ${c.id}) as n, target_cursor as cursor from campaigns where id = ${c.id}`;
  t.same(page, { n: 0, cursor: null }, 'nothing of the cancelled page was kept');
  const [open] = await s.sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and state in ('idle in transaction', 'idle in transaction (aborted)')`;
  t.equal(open!.n, 0, 'no transaction was left open');
});
