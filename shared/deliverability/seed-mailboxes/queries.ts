// SQL of the seed mailboxes: the seed list itself (one row, bulk insert), the seed copies a campaign sends (made, claimed, settled) and their observed
// placement.
import type { Queryable } from '../../db/connection.js';
import type { SeedProvider } from './providers.js';

export interface SeedRow {
  id: string;
  email: string;
  provider: SeedProvider;
  label: string | null;
  active: boolean;
  bounce_mailbox_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const seedColumns = (db: Queryable) => db`id, email, provider, label, active, bounce_mailbox_id, created_at, updated_at`;

export async function listSeeds(db: Queryable): Promise<SeedRow[]> {
  return db<SeedRow[]>`select ${seedColumns(db)} from seed_mailboxes order by created_at, id`;
}

export async function findSeed(db: Queryable, id: string): Promise<SeedRow | undefined> {
  const [row] = await db<SeedRow[]>`select ${seedColumns(db)} from seed_mailboxes where id = ${id}`;
  return row;
}

export type NewSeed = Pick<SeedRow, 'email' | 'provider' | 'label' | 'bounce_mailbox_id'>;

/** Inserts one seed; a duplicate email raises the unique violation seed_mailboxes_email_key. */
export async function insertSeed(db: Queryable, seed: NewSeed, at: Date): Promise<SeedRow> {
  const [row] = await db<SeedRow[]>`
    insert into seed_mailboxes ${db({ ...seed, active: true, created_at: at, updated_at: at })}
    returning ${seedColumns(db)}`;
  return row!;
}

/**
 * Inserts many seeds in one statement; an address already listed (or twice in `seeds`) is left out. Returns the
 * rows inserted, so the caller can tell inserted from duplicate by email.
 */
export async function insertSeeds(db: Queryable, seeds: readonly NewSeed[], at: Date): Promise<SeedRow[]> {
  if (seeds.length === 0) return [];
  return db<SeedRow[]>`
    insert into seed_mailboxes (email, provider, label, bounce_mailbox_id, active, created_at, updated_at)
    select email, provider, label, bounce_mailbox_id, true, ${at}, ${at}
    from unnest(${db.array(seeds.map((s) => s.email))}::text[], ${db.array(seeds.map((s) => s.provider))}::text[],
                ${db.array(seeds.map((s) => s.label) as string[])}::text[], ${db.array(seeds.map((s) => s.bounce_mailbox_id) as string[])}::uuid[])
      with ordinality as r(email, provider, label, bounce_mailbox_id, n)
    order by n
    on conflict (email) do nothing
    returning ${seedColumns(db)}`;
}

export type SeedChange = Partial<Pick<SeedRow, 'label' | 'active' | 'bounce_mailbox_id'>>;

export async function updateSeed(db: Queryable, id: string, change: SeedChange, at: Date): Promise<SeedRow | undefined> {
  const [row] = await db<SeedRow[]>`
    update seed_mailboxes set ${db({ ...change, updated_at: at })} where id = ${id} returning ${seedColumns(db)}`;
  return row;
}

export async function deleteSeed(db: Queryable, id: string): Promise<SeedRow | undefined> {
  const [row] = await db<SeedRow[]>`delete from seed_mailboxes where id = ${id} returning ${seedColumns(db)}`;
  return row;
}

/** True when the bounce mailbox exists (any tenant's: the seed list is the platform's). */
export async function bounceMailboxExists(db: Queryable, id: string): Promise<boolean> {
  const [row] = await db`select 1 from bounce_mailboxes where id = ${id}`;
  return row !== undefined;
}

/** Those of `ids` that name a bounce mailbox. */
export async function existingBounceMailboxes(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`select id from bounce_mailboxes where id = any(${db.array([...ids])}::uuid[])`;
  return new Set(rows.map((r) => r.id));
}

/** The seed copies of a campaign: one per active seed, made when its target is fixed (a rerun adds none twice). */
export async function makeSeedHits(db: Queryable, campaignId: string, tenantId: string, at: Date): Promise<void> {
  await db`
    insert into seed_hits (seed_id, campaign_id, tenant_id, email, send_id, created_at)
    select id, ${campaignId}, ${tenantId}, email, gen_random_uuid(), ${at} from seed_mailboxes where active
    on conflict (campaign_id, seed_id) do nothing`;
}

export interface ClaimedSeedHit {
  id: string;
  email: string;
  send_id: string;
}

/** Claims up to `limit` unsent copies no live claim holds, as claimRecipients does for recipients. */
export async function claimSeedHits(db: Queryable, campaignId: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedSeedHit[]> {
  return db<ClaimedSeedHit[]>`
    with picked as materialized (
      select id from seed_hits
      where campaign_id = ${campaignId} and send_state = 'pending' and (claimed_until is null or claimed_until < ${now})
      order by id limit ${limit}
      for update skip locked
    )
    update seed_hits h set claimed_until = ${leaseUntil} from picked where h.id = picked.id
    returning h.id, h.email, h.send_id`;
}

export type SeedSettlement = { id: string } & ({ state: 'sent' | 'not_sent' } | { state: 'pending' });

/** Settles claimed copies in one statement: sent (with the instant), not sent, or released for a later run. */
export async function settleSeedHits(db: Queryable, settlements: readonly SeedSettlement[], at: Date): Promise<void> {
  if (settlements.length === 0) return;
  await db`
    update seed_hits h set send_state = o.state, claimed_until = null,
      sent_at = case when o.state = 'sent' then ${at}::timestamptz end
    from unnest(${db.array(settlements.map((s) => s.id))}::uuid[], ${db.array(settlements.map((s) => s.state))}::text[]) as o(id, state)
    where h.id = o.id and h.send_state = 'pending'`;
}

export type Placement = 'inbox' | 'spam';

/**
 * Records where a copy was seen, for the copy among `seedIds` that `match` names: its send id (from the Message-ID)
 * or, failing that, its campaign (from the Feedback-ID). The first observation stands: a copy seen again (a
 * client's retry, a second fetch) changes nothing. Returns the hit ids recorded.
 */
export async function recordPlacement(
  db: Queryable,
  o: { seedIds: readonly string[]; sendId: string | null; campaignId: string | null; placement: Placement; source: 'mx' | 'pop3'; at: Date },
): Promise<string[]> {
  if (o.seedIds.length === 0 || (o.sendId === null && o.campaignId === null)) return [];
  const rows = await db<{ id: string }[]>`
    update seed_hits set placement = ${o.placement}, placement_source = ${o.source}, observed_at = ${o.at}
    where seed_id = any(${db.array([...o.seedIds])}::uuid[]) and placement is null
      and (send_id = ${o.sendId}::uuid or (${o.sendId}::uuid is null and campaign_id = ${o.campaignId}::uuid))
    returning id`;
  return rows.map((r) => r.id);
}

/** Every active seed's address, for the MX's cache. */
export async function activeSeedEmails(db: Queryable): Promise<string[]> {
  const rows = await db<{ email: string }[]>`select email from seed_mailboxes where active`;
  return rows.map((r) => r.email);
}

/** Active seeds among addresses (lower-cased), for the MX. */
export async function activeSeedsByEmail(db: Queryable, emails: readonly string[]): Promise<{ id: string; email: string }[]> {
  if (emails.length === 0) return [];
  return db<{ id: string; email: string }[]>`select id, email from seed_mailboxes where active and email = any(${db.array([...emails])}::text[])`;
}

/** Seeds whose copies are fetched from this POP3 mailbox (active or not: a copy sent before a pause still counts). */
export async function seedsOfMailbox(db: Queryable, mailboxId: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from seed_mailboxes where bounce_mailbox_id = ${mailboxId}`;
  return rows.map((r) => r.id);
}

export interface SeedHitRow {
  id: string;
  campaign_id: string;
  campaign_name: string;
  tenant_id: string;
  email: string;
  send_id: string;
  send_state: 'pending' | 'sent' | 'not_sent';
  send_status: string | null;
  sent_at: Date | null;
  placement: Placement | null;
  placement_source: 'mx' | 'pop3' | null;
  observed_at: Date | null;
  created_at: Date;
}

/** A seed's copies, newest first, with their campaign's name and their send's status; and how many there are. */
export async function listSeedHits(db: Queryable, seedId: string, page: { limit: number; offset: number }): Promise<{ items: SeedHitRow[]; total: number }> {
  const items = await db<SeedHitRow[]>`
    select h.id, h.campaign_id, c.name as campaign_name, h.tenant_id, h.email, h.send_id, h.send_state, s.status as send_status,
           h.sent_at, h.placement, h.placement_source, h.observed_at, h.created_at
    from seed_hits h join campaigns c on c.id = h.campaign_id left join sends s on s.id = h.send_id
    where h.seed_id = ${seedId}
    order by h.created_at desc, h.id desc
    limit ${page.limit} offset ${page.offset}`;
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from seed_hits where seed_id = ${seedId}`;
  return { items, total: count!.n };
}
