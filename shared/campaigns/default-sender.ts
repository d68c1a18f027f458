// The tenant's default sender: the From address, name and Reply-To a campaign (or a warm-up dispatch) uses when it names none.
// Stored with PUT /settings/sender; until then derived from the tenant's oldest verified sending domain.
import { writeAudit, type AuditActor } from '../operations/audit/log.js';
import type { Clock } from '../kernel/clock.js';
import type { Queryable, Sql } from '../db/connection.js';
import { tenantDomainsOf } from '../deliverability/domains/queries.js';
import { normalizeEmail } from '../kernel/email.js';
import { notFound, validationError } from '../kernel/errors.js';
import { deleteStoredSender, putStoredSender, senderSources } from './default-sender-queries.js';
import { MAX_SHORT_TEXT, oneLineText } from './fields.js';

/** The local part of a derived default: no-reply@<the tenant's oldest verified sending domain>. */
export const DERIVED_LOCAL_PART = 'no-reply';

export interface Sender {
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
}

/** A campaign's own sender fields, any of them unset. */
export type NullableSender = { [K in keyof Sender]: Sender[K] | null };

/** Where the default comes from: stored with PUT /settings/sender, or derived from a verified sending domain. */
export type SenderSource = 'settings' | 'derived';

export interface DefaultSender extends Sender {
  source: SenderSource;
  updated_at: Date | null;
}

/** What a client without a sender is told: every way to give it one. */
export const NO_SENDER =
  'is required to send and the tenant has no default sender: set from_email on the campaign, set a default sender ' +
  `with PUT /settings/sender, or verify a sending domain under /domains (${DERIVED_LOCAL_PART}@ it then becomes the default)`;

/** The tenant's name as a display name: one line, at most MAX_SHORT_TEXT characters (null when nothing is left). */
function displayName(tenantName: string): string | null {
  const line = tenantName
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .trim()
    .slice(0, MAX_SHORT_TEXT)
    .trim();
  return line || null;
}

/**
 * The tenant's default sender for a send in `mode`: the stored one, else no-reply@ the oldest domain that may send
 * (a test-mode send, which may use any domain the tenant added: else the oldest added), named after the tenant;
 * undefined when there is neither. A stored sender is returned even if its domain stopped verifying: the send
 * path's domain check then names the problem instead of silently sending from another address.
 */
export async function defaultSender(db: Queryable, tenantId: string, mode: 'live' | 'test' = 'live'): Promise<DefaultSender | undefined> {
  const sources = await senderSources(db, tenantId, mode);
  if (!sources) return undefined;
  if (sources.stored) return { ...sources.stored, source: 'settings' };
  if (!sources.domain) return undefined;
  const from_email = `${DERIVED_LOCAL_PART}@${sources.domain}`;
  return { from_email, from_name: displayName(sources.tenant_name), reply_to: null, source: 'derived', updated_at: null };
}

/**
 * The sender of a campaign's messages: its own from_email, from_name and reply_to where set, else the stored
 * default's, field by field. Without a from_email the default applies whole, derived or stored; a derived default
 * never renames a campaign's own address. No from_email and no default: 422 naming every fix.
 */
export async function campaignSender(db: Queryable, c: { tenant_id: string } & NullableSender, mode: 'live' | 'test'): Promise<Sender> {
  if (c.from_email !== null && c.from_name !== null && c.reply_to !== null) return { from_email: c.from_email, from_name: c.from_name, reply_to: c.reply_to };
  const found = await defaultSender(db, c.tenant_id, mode);
  const fallback = c.from_email !== null && found?.source === 'derived' ? undefined : found;
  const from = c.from_email ?? fallback?.from_email;
  if (from === undefined) throw validationError('from_email', NO_SENDER);
  return { from_email: from, from_name: c.from_name ?? fallback?.from_name ?? null, reply_to: c.reply_to ?? fallback?.reply_to ?? null };
}

/**
 * The sender of a warm-up dispatch at `domain` (the plan's, else the oldest verified): the stored default when its
 * address is at that domain (the point of the dispatch is to warm that domain up), else `<localPart>@<domain>`
 * (config warmup.schedule_from_local_part) named after the tenant, like a derived default.
 */
export async function warmupSender(db: Queryable, tenantId: string, domain: string, localPart: string): Promise<Sender> {
  const sources = await senderSources(db, tenantId, 'live');
  const stored = sources?.stored;
  if (stored && stored.from_email.slice(stored.from_email.lastIndexOf('@') + 1) === domain) {
    return { from_email: stored.from_email, from_name: stored.from_name, reply_to: stored.reply_to };
  }
  return { from_email: `${localPart}@${domain}`, from_name: sources ? displayName(sources.tenant_name) : null, reply_to: null };
}

export interface SenderSettingsDeps {
  sql: Sql;
  clock: Clock;
}

const NO_DEFAULT = { from_email: null, from_name: null, reply_to: null, source: null, updated_at: null } as const;

/** GET /settings/sender: the default in force for live sends and where it comes from; all null (source null) when there is none. */
export async function readSenderSettings(db: Queryable, tenantId: string): Promise<DefaultSender | typeof NO_DEFAULT> {
  return (await defaultSender(db, tenantId, 'live')) ?? NO_DEFAULT;
}

/**
 * PUT /settings/sender: replaces the stored default. from_email must be at one of the tenant's verified sending
 * domains (422 naming it otherwise: a default that cannot send would fail every campaign relying on it);
 * reply_to any valid address; from_name one line. Audited.
 */
export async function putSenderSettings(
  deps: SenderSettingsDeps,
  tenantId: string,
  actor: AuditActor,
  input: { from_email: string; from_name?: string | null | undefined; reply_to?: string | null | undefined },
): Promise<DefaultSender> {
  const from = normalizeEmail(input.from_email, 'from_email');
  const domain = from.slice(from.lastIndexOf('@') + 1);
  const domains = await tenantDomainsOf(deps.sql, [tenantId]);
  if (!domains.some((d) => d.name === domain && d.can_send)) {
    const sending = domains.filter((d) => d.can_send).map((d) => d.name);
    const which = sending.length ? `verified: ${sending.join(', ')}` : 'none is verified yet; verify one under /domains';
    throw validationError('from_email', `its domain ${domain} is not a verified sending domain of this tenant (${which})`);
  }
  const reply = input.reply_to === undefined || input.reply_to === null || input.reply_to.trim() === '' ? null : normalizeEmail(input.reply_to, 'reply_to');
  const sender = { from_email: from, from_name: oneLineText(input.from_name ?? null, 'from_name', MAX_SHORT_TEXT), reply_to: reply };
  const at = deps.clock.now();
  const stored = await deps.sql.begin(async (tx) => {
    const row = await putStoredSender(tx, tenantId, sender, at);
    await writeAudit(tx, { tenantId, actor, action: 'sender.default_set', resourceType: 'tenant', resourceId: tenantId, metadata: { ...sender }, at });
    return row;
  });
  return { ...stored, source: 'settings' };
}

/** DELETE /settings/sender: removes the stored default (the derived one applies again); 404 when none is stored. Audited. */
export async function clearSenderSettings(deps: SenderSettingsDeps, tenantId: string, actor: AuditActor): Promise<void> {
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    if (!(await deleteStoredSender(tx, tenantId))) throw notFound('default sender');
    await writeAudit(tx, { tenantId, actor, action: 'sender.default_cleared', resourceType: 'tenant', resourceId: tenantId, metadata: {}, at });
  });
}
