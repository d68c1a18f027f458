// SQL for a tenant's campaigns: create, read, search, change, delete, and the guarded status changes of the lifecycle. Every query is scoped to its tenant.
import type { Queryable } from '../db/connection.js';
import type { CampaignStatus, WaitingReason } from './statuses.js';

/** The fields a sender sets (create, PATCH, duplicate). */
export interface CampaignContent {
  name: string;
  subject: string | null;
  subject_b: string | null;
  preheader_text: string | null;
  body_html: string | null;
  body_text: string | null;
  from_email: string | null;
  from_name: string | null;
  reply_to: string | null;
  list_id: string | null;
  segment_id: string | null;
  template_id: string | null;
  ab_split_pct: number | null;
  ab_metric: 'open' | 'click';
  send_time_optimization: boolean;
  utm_tagging: boolean;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  track_opens: boolean;
  track_clicks: boolean;
}

export const CONTENT_FIELDS = [
  'name',
  'subject',
  'subject_b',
  'preheader_text',
  'body_html',
  'body_text',
  'from_email',
  'from_name',
  'reply_to',
  'list_id',
  'segment_id',
  'template_id',
  'ab_split_pct',
  'ab_metric',
  'send_time_optimization',
  'utm_tagging',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'track_opens',
  'track_clicks',
] as const satisfies readonly (keyof CampaignContent)[];

export interface CampaignRow extends CampaignContent {
  id: string;
  tenant_id: string;
  status: CampaignStatus;
  md5_list_id: string | null;
  ab_winner: 'a' | 'b' | null;
  ab_winner_declared_at: Date | null;
  scheduled_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  paused_at: Date | null;
  cancelled_at: Date | null;
  waiting_reason: WaitingReason | null;
  waiting_until: Date | null;
  failure_reason: string | null;
  /** Why the fan-out paused it, in words (its renders exceeded the render budget); null once resumed. */
  paused_reason: string | null;
  target_cursor: string | null;
  targeted_at: Date | null;
  send_mode: 'live' | 'test' | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'status',
  ...CONTENT_FIELDS,
  'md5_list_id',
  'ab_winner',
  'ab_winner_declared_at',
  'scheduled_at',
  'started_at',
  'finished_at',
  'paused_at',
  'cancelled_at',
  'waiting_reason',
  'waiting_until',
  'failure_reason',
  'paused_reason',
  'target_cursor',
  'targeted_at',
  'send_mode',
  'created_at',
  'updated_at',
];
const columns = (db: Queryable) => db(COLUMNS);

/** A list entry: the bodies stay in the database (a page of 200 could otherwise weigh hundreds of megabytes). */
export type CampaignSummaryRow = Omit<CampaignRow, 'body_html' | 'body_text'> & { has_body_html: boolean; has_body_text: boolean };
const summaryColumns = (db: Queryable) =>
  db`${db(COLUMNS.filter((c) => c !== 'body_html' && c !== 'body_text'))}, body_html is not null as has_body_html, body_text is not null as has_body_text`;

export async function insertCampaign(db: Queryable, tenantId: string, c: CampaignContent, at: Date): Promise<CampaignRow> {
  const [row] = await db<CampaignRow[]>`
    insert into campaigns ${db({ tenant_id: tenantId, ...c, created_at: at, updated_at: at })}
    returning ${columns(db)}`;
  return row!;
}

/** One campaign of a tenant; `lock` holds it until the transaction ends (status changes, PATCH). */
export async function findCampaign(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<CampaignRow | undefined> {
  const [row] = options.lock
    ? await db<CampaignRow[]>`select ${columns(db)} from campaigns where tenant_id = ${tenantId} and id = ${id} for update`
    : await db<CampaignRow[]>`select ${columns(db)} from campaigns where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** A campaign by id alone: for the fan-out worker, whose job names only the campaign. */
export async function findCampaignById(db: Queryable, id: string, options: { lock?: boolean } = {}): Promise<CampaignRow | undefined> {
  const [row] = options.lock
    ? await db<CampaignRow[]>`select ${columns(db)} from campaigns where id = ${id} for update`
    : await db<CampaignRow[]>`select ${columns(db)} from campaigns where id = ${id}`;
  return row;
}

/** What the fan-out checks between batches: a few columns, never the bodies. */
export type CampaignState = Pick<CampaignRow, 'status' | 'waiting_reason' | 'ab_winner'>;

export async function campaignState(db: Queryable, id: string): Promise<CampaignState | undefined> {
  const [row] = await db<CampaignState[]>`select status, waiting_reason, ab_winner from campaigns where id = ${id}`;
  return row;
}

/** `q` (a LIKE pattern, already escaped) over name or subject, without case; newest first. */
export async function listCampaigns(
  db: Queryable,
  tenantId: string,
  f: { like: string | undefined; limit: number; offset: number },
): Promise<CampaignSummaryRow[]> {
  return db<CampaignSummaryRow[]>`
    select ${summaryColumns(db)} from campaigns
    where tenant_id = ${tenantId} ${f.like === undefined ? db`` : db`and (name ilike ${f.like} or subject ilike ${f.like})`}
    order by created_at desc, id desc
    limit ${f.limit} offset ${f.offset}`;
}

export async function countCampaigns(db: Queryable, tenantId: string, like: string | undefined): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from campaigns
    where tenant_id = ${tenantId} ${like === undefined ? db`` : db`and (name ilike ${like} or subject ilike ${like})`}`;
  return row!.n;
}

/** Writes the given content fields (a PATCH or the md5 list). */
export async function updateCampaign(
  db: Queryable,
  tenantId: string,
  id: string,
  changes: Partial<CampaignContent> & { md5_list_id?: string | null },
  at: Date,
): Promise<CampaignRow | undefined> {
  const [row] = await db<CampaignRow[]>`
    update campaigns set ${db({ ...changes, updated_at: at })}
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

export async function deleteCampaign(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db`delete from campaigns where tenant_id = ${tenantId} and id = ${id} and status = 'draft' returning id`;
  return rows.length > 0;
}

/** The lifecycle columns a transition writes. */
export type StatusChange = Partial<
  Pick<
    CampaignRow,
    | 'scheduled_at'
    | 'started_at'
    | 'finished_at'
    | 'paused_at'
    | 'cancelled_at'
    | 'waiting_reason'
    | 'waiting_until'
    | 'failure_reason'
    | 'paused_reason'
    | 'send_mode'
    | 'target_cursor'
    | 'targeted_at'
  >
>;

/**
 * Moves a campaign to `to` only while its status is one of `from` (by id: API and worker alike), so two
 * concurrent transitions never both apply. Returns the row after the change, or undefined when it did not apply.
 */
export async function transition(
  db: Queryable,
  id: string,
  from: readonly CampaignStatus[],
  to: CampaignStatus,
  change: StatusChange,
  at: Date,
): Promise<CampaignRow | undefined> {
  const [row] = await db<CampaignRow[]>`
    update campaigns set ${db({ ...change, status: to, updated_at: at } as Record<string, unknown>)}
    where id = ${id} and status = any(${db.array([...from])}::text[])
    returning ${columns(db)}`;
  return row;
}

/** Records why a sending campaign waits (or, with nulls, that it no longer does); only while it is sending. */
export async function setWaiting(db: Queryable, id: string, reason: WaitingReason | null, until: Date | null, at: Date): Promise<void> {
  await db`
    update campaigns set waiting_reason = ${reason}, waiting_until = ${until}, updated_at = ${at}
    where id = ${id} and status = 'sending'
      and (waiting_reason is distinct from ${reason} or waiting_until is distinct from ${until})`;
}

/** The last recipient position given out so far (the next page's positions follow it). */
export async function recipientSeq(db: Queryable, id: string): Promise<number> {
  const [row] = await db<{ recipient_seq: string }[]>`select recipient_seq from campaigns where id = ${id}`;
  return Number(row?.recipient_seq ?? 0);
}

/**
 * Saves how far materializing the target got (and, at the end, when it finished) and the last position given out,
 * under the campaign's row lock.
 */
export async function saveTargetPosition(
  db: Queryable,
  id: string,
  p: { cursor: string | null; done: boolean; recipientSeq: number },
  at: Date,
): Promise<void> {
  await db`
    update campaigns set target_cursor = ${p.cursor}, targeted_at = ${p.done ? at : null}, recipient_seq = ${p.recipientSeq}, updated_at = ${at}
    where id = ${id}`;
}

/**
 * Campaigns whose fan-out should be running (after a restart: sending ones, scheduled ones already due, and those
 * paused at the quota that go on at the month's reset).
 */
export async function campaignsToResume(db: Queryable, now: Date): Promise<{ id: string; waiting_until: Date | null }[]> {
  return db<{ id: string; waiting_until: Date | null }[]>`
    select id, waiting_until from campaigns
    where (status = 'sending' and waiting_reason is distinct from 'ab_winner') or (status = 'scheduled' and scheduled_at <= ${now})
      or (status = 'paused' and waiting_reason = 'quota_exceeded' and waiting_until is not null)`;
}

// ---- look-ups of the things a campaign names ----

/** Which of the tenant's records exist: a list, a segment, a template, an MD5 list. */
export async function tenantOwns(db: Queryable, tenantId: string, table: 'lists' | 'segments' | 'templates' | 'md5_lists', id: string): Promise<boolean> {
  const rows = await db`select 1 from ${db(table)} where tenant_id = ${tenantId} and id = ${id}`;
  return rows.length > 0;
}

/** Ties a proof's send to its campaign (and the contact it was rendered for), in the send's transaction. */
export async function insertProof(
  db: Queryable,
  p: { sendId: string; campaignId: string; tenantId: string; contactId: string | null; at: Date },
): Promise<void> {
  await db`
    insert into campaign_proofs (send_id, campaign_id, tenant_id, contact_id, created_at)
    values (${p.sendId}, ${p.campaignId}, ${p.tenantId}, ${p.contactId}, ${p.at})`;
}
