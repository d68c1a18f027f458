// Fixtures for campaign tests against real `mailpath start` processes: one database, a receiving SMTP sink, the environment, a sending tenant and a campaign
// to a large list, and its progress read from the database.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { generateDkimKey, storeKey } from '../../shared/deliverability/domains/dkim-keys.js';
import { SealedBox } from '../../shared/kernel/secrets/sealed-box.js';
import { createTestDatabase } from './db.js';
import { https } from './mailpath-process.js';
import { startSmtpSink } from './smtp-sink.js';

export interface CampaignWorld {
  sql: postgres.Sql;
  env: Record<string, string>;
}

/** A database and a sink the processes relay to, and the environment every process of the test starts with. */
export async function campaignWorld(
  t: { teardown(fn: () => unknown): void },
  overrides: Record<string, string> = {},
): Promise<CampaignWorld & { masterKey: string }> {
  const db = await createTestDatabase();
  const sql = postgres(db.url, { max: 4, onnotice: () => {} });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const sink = await startSmtpSink(t);
  const masterKey = randomBytes(32).toString('hex');
  const env = {
    DATABASE_URL: db.url,
    MAILPATH_ROLES: 'api,outbound,scheduler',
    MAILPATH_MASTER_KEY: masterKey,
    MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
    MAILPATH_OUTBOUND_RELAY: sink.address,
    MAILPATH_DB_POOL_SIZE: '8',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '1000000',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '1000000',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '1000000',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '1000000',
    MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1000000]',
    MAILPATH_CONFIG__DELIVERY__WORKERS__POLL_INTERVAL_MS: '200',
    MAILPATH_CONFIG__DELIVERY__WORKERS__QUEUE_MAINTENANCE_SECONDS: '1',
    MAILPATH_CONFIG__CAMPAIGNS__FANOUT__BATCH_SIZE: '50',
    MAILPATH_CONFIG__CAMPAIGNS__FANOUT__CLAIM_LEASE_SECONDS: '5',
    MAILPATH_CONFIG__CAMPAIGNS__FANOUT__SLICE_SECONDS: '2',
    MAILPATH_CONFIG__CAMPAIGNS__FANOUT__JOB_EXPIRE_SECONDS: '10',
    MAILPATH_CONFIG__CAMPAIGNS__MATERIALIZE__PAGE_SIZE: '500',
    ...overrides,
  };
  return { sql, env, masterKey };
}

export interface CampaignSetup {
  token: string;
  tenantId: string;
  listId: string;
  campaignId: string;
}

/**
 * Through the API of a running process: a tenant (owner session) with a verified domain and its DKIM key (sealed
 * with the processes' master key), a plan of a million sends, `recipients` contacts in one list, and a draft
 * campaign to it.
 */
export async function setUpCampaign(world: CampaignWorld & { masterKey: string }, httpsPort: number, recipients: number): Promise<CampaignSetup> {
  const { sql } = world;
  const registered = await https(httpsPort, 'POST', '/auth/register', {
    body: { tenant_name: 'Fanout', tenant_slug: `fanout-${Date.now()}`, email: `owner-${Date.now()}@fanout.test`, password: 'Correct-horse-42' },
  });
  if (registered.status !== 201) throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
  const tenantId = registered.body.data.tenant_id as string;
  const token = registered.body.data.token as string;
  await sql`insert into plans (id, name, monthly_send_cap) values ('big', 'Big', 1000000) on conflict (id) do nothing`;
  await sql`update tenants set plan_id = 'big' where id = ${tenantId}`;
  const name = `fanout-${randomBytes(4).toString('hex')}.test`;
  const [domain] = await sql<{ id: string }[]>`
    insert into domains (tenant_id, name, unicode_name, owned_at, verified_at, created_at)
    values (${tenantId}, ${name}, ${name}, now(), now(), now()) returning id`;
  await storeKey(sql, new SealedBox(Buffer.from(world.masterKey, 'hex')), {
    tenantId,
    domainId: domain!.id,
    selector: 's1',
    key: await generateDkimKey(1024),
    state: 'active',
    at: new Date(),
  });
  const [list] = await sql<
    { id: string }[]
  >`insert into lists (tenant_id, name, created_at, updated_at) values (${tenantId}, 'Everyone', now(), now()) returning id`;
  await sql`
    with c as (
      insert into contacts (tenant_id, email, first_name, created_at, updated_at)
      select ${tenantId}, 'r' || n || '@dest.test', 'R' || n, now(), now() from generate_series(1, ${recipients}) n
      returning id)
    insert into list_members (list_id, contact_id, tenant_id, added_at) select ${list!.id}, id, ${tenantId}, now() from c`;
  const created = await https(httpsPort, 'POST', '/campaigns', {
    token,
    body: { name: 'Big one', list_id: list!.id, from_email: `news@${name}`, subject: 'Hello {{ first_name }}', body_text: 'Hi {{ contact.email }}' },
  });
  if (created.status !== 200) throw new Error(`create campaign: ${created.status} ${JSON.stringify(created.body)}`);
  return { token, tenantId, listId: list!.id, campaignId: created.body.data.id };
}

/** The campaign's status and counters, read from the database. */
export async function progressOf(sql: postgres.Sql, campaignId: string): Promise<{ status: string; queued: number; targeted: number }> {
  const [row] = await sql<{ status: string; queued: number; targeted: number }[]>`
    select c.status, coalesce(sum(s.queued), 0)::int as queued, coalesce(sum(s.targeted), 0)::int as targeted
    from campaigns c left join campaign_stats s on s.campaign_id = c.id where c.id = ${campaignId} group by c.status`;
  return row!;
}

/** Sends per recipient and in all: exactly-once means `total` sends over `distinct` recipients, none twice. */
export async function sendCounts(sql: postgres.Sql, campaignId: string): Promise<{ total: number; distinct: number; twice: number }> {
  const [row] = await sql<{ total: number; distinct: number; twice: number }[]>`
    select coalesce(sum(n), 0)::int as total, count(*)::int as distinct, count(*) filter (where n > 1)::int as twice
    from (select to_email, count(*) as n from sends where campaign_id = ${campaignId} group by to_email) per`;
  return row!;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
