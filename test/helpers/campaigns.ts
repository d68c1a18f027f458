// Fixtures for the campaign tests: an app, a tenant that may send (verified domain, a plan with room), a list of contacts, campaigns made through the API,
// and the fan-out run to its end in-process.
import type { Sql } from '../../shared/db/connection.js';
import type { Env } from '../../shared/config/index.js';
import type { Clock } from '../../shared/kernel/clock.js';
import { runFanout, type FanoutOutcome } from '../../shared/campaigns/fanout.js';
import { buildTestApp, call, registerTenant, type TestApp, type TestLike, type TestTenant } from './app.js';
import { addresses, insertContacts } from './lists.js';
import { verifiedSendingDomain, type SendingDomain } from './sending-domain.js';

/** Small batches, so a handful of recipients already takes several; generous write limits. */
export const CAMPAIGN_ENV: Env = {
  MAILPATH_CONFIG__CAMPAIGNS__FANOUT__BATCH_SIZE: '5',
  MAILPATH_CONFIG__CAMPAIGNS__MATERIALIZE__PAGE_SIZE: '7',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__BULK: '100000',
  MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1000000]',
};

export async function campaignApp(t: TestLike, options: { env?: Env; clock?: Clock } = {}): Promise<TestApp> {
  return buildTestApp(t, { env: { ...CAMPAIGN_ENV, ...options.env }, ...(options.clock ? { clock: options.clock } : {}) });
}

export interface Sender {
  tenant: TestTenant;
  domain: SendingDomain;
  from: string;
}

/** A registered tenant with a verified sending domain and a plan of a million sends a month. */
export async function sender(s: TestApp): Promise<Sender> {
  const tenant = await registerTenant(s.app);
  await s.sql`insert into plans (id, name, monthly_send_cap) values ('campaigns', 'Campaigns', 1000000) on conflict (id) do nothing`;
  await s.sql`update tenants set plan_id = 'campaigns' where id = ${tenant.tenantId}`;
  const domain = await verifiedSendingDomain(s.sql, s.ctx.vault, tenant.tenantId);
  return { tenant, domain, from: `news@${domain.name}` };
}

/** A list of `emails` contacts (inserted in SQL) of the tenant; returns the list id and the contact ids. */
export async function listOf(sql: Sql, tenantId: string, emails: string[], extra: { first?: string } = {}): Promise<{ listId: string; contactIds: string[] }> {
  const contactIds = await insertContacts(sql, tenantId, emails, extra);
  const [list] = await sql<{ id: string }[]>`
    insert into lists (tenant_id, name, created_at, updated_at)
    values (${tenantId}, ${`List ${Math.random().toString(36).slice(2)}`}, now(), now()) returning id`;
  // Added one microsecond apart: list order is added_at.
  await sql`
    insert into list_members (list_id, contact_id, tenant_id, added_at)
    select ${list!.id}, c, ${tenantId}, now() + (n * interval '1 microsecond') from unnest(${contactIds}::uuid[]) with ordinality as q(c, n)`;
  return { listId: list!.id, contactIds };
}

export { addresses };

/** Creates a campaign through the API (fails the test on anything but 200). */
export async function createCampaign(s: TestApp, token: string, body: Record<string, unknown>): Promise<any> {
  const res = await call(s.app, 'POST', '/campaigns', { token, body: { name: 'Newsletter', subject: 'Hello', body_text: 'Hi', ...body } });
  if (res.status !== 200) throw new Error(`create campaign: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Sends it through the API (202 expected). */
export async function sendNow(s: TestApp, token: string, campaignId: string): Promise<void> {
  const res = await call(s.app, 'POST', `/campaigns/${campaignId}/send`, { token });
  if (res.status !== 202) throw new Error(`send campaign: ${res.status} ${JSON.stringify(res.body)}`);
}

/**
 * Runs the campaign's fan-out in this process, slot 0, job after job, while a run says it continues (bounded):
 * what the outbound role's workers would do. Returns the last outcome.
 */
export async function drain(s: TestApp, campaignId: string, maxRuns = 200): Promise<FanoutOutcome> {
  let outcome: FanoutOutcome = 'nothing';
  for (let i = 0; i < maxRuns; i++) {
    outcome = await runFanout(s.ctx, { campaign_id: campaignId, slot: 0 });
    if (outcome !== 'continued') return outcome;
  }
  throw new Error(`the fan-out of ${campaignId} still continued after ${maxRuns} runs`);
}

/** The campaign as GET /campaigns/{id} shows it. */
export async function readCampaign(s: TestApp, token: string, campaignId: string): Promise<any> {
  const res = await call(s.app, 'GET', `/campaigns/${campaignId}`, { token });
  if (res.status !== 200) throw new Error(`read campaign: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Sends per recipient address of a campaign (exactly-once checks). */
export async function sendsPerRecipient(sql: Sql, campaignId: string): Promise<Map<string, number>> {
  const rows = await sql<{ to_email: string; n: number }[]>`select to_email, count(*)::int as n from sends where campaign_id = ${campaignId} group by to_email`;
  return new Map(rows.map((r) => [r.to_email, r.n]));
}
