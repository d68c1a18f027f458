// The seed list as the super-admin manages it: create one or many (duplicates and invalid rows reported, never fatal), change label, active flag or POP3
// mailbox, delete, and read a seed's copies with their placement; every change audited.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { normalizeEmail } from '../../kernel/email.js';
import { conflict, isUniqueViolation, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import {
  bounceMailboxExists,
  existingBounceMailboxes,
  deleteSeed,
  findSeed,
  insertSeed,
  insertSeeds,
  listSeedHits,
  updateSeed,
  type NewSeed,
  type SeedChange,
  type SeedHitRow,
  type SeedRow,
} from './queries.js';
import { SEED_PROVIDERS, type SeedProvider } from './providers.js';

export interface SeedlistDeps {
  sql: Sql;
  clock: Clock;
  config: Pick<Config, 'seedlist'>;
}

export interface SeedInput {
  email: string;
  provider: SeedProvider;
  label?: string | null | undefined;
  bounce_mailbox_id?: string | null | undefined;
}

async function checkMailbox(deps: SeedlistDeps, id: string | null | undefined, field = 'bounce_mailbox_id'): Promise<void> {
  if (id === null || id === undefined) return;
  if (!isUuid(id) || !(await bounceMailboxExists(deps.sql, id))) throw validationError(field, 'names no bounce mailbox');
}

const auditOf = (seed: SeedRow) => ({
  email: seed.email,
  provider: seed.provider,
  label: seed.label,
  active: seed.active,
  bounce_mailbox_id: seed.bounce_mailbox_id,
});

/** Adds one seed: 409 conflict when its address is listed already. */
export async function createSeed(deps: SeedlistDeps, actor: AuditActor, input: SeedInput): Promise<SeedRow> {
  const email = normalizeEmail(input.email);
  await checkMailbox(deps, input.bounce_mailbox_id);
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      const seed = await insertSeed(
        tx,
        { email, provider: input.provider, label: input.label ?? null, bounce_mailbox_id: input.bounce_mailbox_id ?? null },
        at,
      );
      await writeAudit(tx, {
        tenantId: null,
        actor,
        action: 'seedlist.create',
        resourceType: 'seed_mailbox',
        resourceId: seed.id,
        metadata: auditOf(seed),
        at,
      });
      return seed;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'seed_mailboxes_email_key')) throw conflict(`${email} is a seed mailbox already`);
    throw err;
  }
}

export type BulkRowResult =
  | { index: number; status: 'inserted'; email: string; id: string }
  | { index: number; status: 'duplicate'; email: string }
  | { index: number; status: 'invalid'; email: string | null; error: string };

export interface BulkResult {
  results: BulkRowResult[];
  inserted: number;
  duplicates: number;
  invalid: number;
}

/** A row of a bulk request, unchecked: each is validated on its own so one bad row fails only itself. */
export type BulkRowInput = Record<string, unknown>;

/** Control characters (NUL among them, which PostgreSQL text cannot hold): refused in labels. */
export const CONTROL = /[\u0000-\u001f\u007f]/;

function checkRow(row: BulkRowInput, mailboxes: Set<string>): NewSeed | string {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return 'a row must be an object';
  const unknown = Object.keys(row).filter((k) => !['email', 'provider', 'label', 'bounce_mailbox_id'].includes(k));
  if (unknown.length > 0) return `unexpected field ${unknown[0]}`;
  if (typeof row['email'] !== 'string') return 'email: required string';
  let email: string;
  try {
    email = normalizeEmail(row['email']);
  } catch (err) {
    return (err as Error).message;
  }
  const provider = row['provider'];
  if (typeof provider !== 'string' || !(SEED_PROVIDERS as readonly string[]).includes(provider)) return `provider: one of ${SEED_PROVIDERS.join(', ')}`;
  const rawLabel = row['label'] ?? null;
  const label = typeof rawLabel === 'string' ? rawLabel.trim() : rawLabel;
  if (label !== null && (typeof label !== 'string' || label.length > 200 || CONTROL.test(label)))
    return 'label: a string of at most 200 characters, without control characters';
  const mailbox = row['bounce_mailbox_id'] ?? null;
  if (mailbox !== null && (typeof mailbox !== 'string' || !mailboxes.has(mailbox))) return 'bounce_mailbox_id: names no bounce mailbox';
  return { email, provider: provider as SeedProvider, label: label as string | null, bounce_mailbox_id: mailbox as string | null };
}

/**
 * Adds many seeds: each row is checked on its own (invalid rows are reported, not fatal), the valid ones are
 * inserted by one INSERT … ON CONFLICT DO NOTHING, and an address already listed (or given twice) is a duplicate.
 * One audit row names the batch and its counts.
 */
export async function bulkCreateSeeds(deps: SeedlistDeps, actor: AuditActor, rows: readonly BulkRowInput[]): Promise<BulkResult> {
  const wanted = [
    ...new Set(
      rows.map((r) => (r && typeof r === 'object' ? r['bounce_mailbox_id'] : undefined)).filter((v): v is string => typeof v === 'string' && isUuid(v)),
    ),
  ];
  const mailboxes = await existingBounceMailboxes(deps.sql, wanted);
  const checked = rows.map((row) => checkRow(row, mailboxes));
  const valid = checked.filter((c): c is NewSeed => typeof c !== 'string');
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const inserted = new Map((await insertSeeds(tx, valid, at)).map((s) => [s.email, s]));
    const claimed = new Set<string>();
    const results: BulkRowResult[] = checked.map((c, index) => {
      if (typeof c === 'string') {
        const raw = (rows[index] as BulkRowInput | null)?.['email'];
        return { index, status: 'invalid', email: typeof raw === 'string' ? raw : null, error: c };
      }
      const seed = inserted.get(c.email);
      // The first row of an address that was inserted is "inserted"; any later row of it is a duplicate.
      if (seed && !claimed.has(c.email)) {
        claimed.add(c.email);
        return { index, status: 'inserted', email: c.email, id: seed.id };
      }
      return { index, status: 'duplicate', email: c.email };
    });
    const result: BulkResult = {
      results,
      inserted: results.filter((r) => r.status === 'inserted').length,
      duplicates: results.filter((r) => r.status === 'duplicate').length,
      invalid: results.filter((r) => r.status === 'invalid').length,
    };
    await writeAudit(tx, {
      tenantId: null,
      actor,
      action: 'seedlist.bulk_create',
      resourceType: 'seed_mailbox',
      metadata: {
        rows: rows.length,
        inserted: result.inserted,
        duplicates: result.duplicates,
        invalid: result.invalid,
        ids: [...inserted.values()].map((s) => s.id),
      },
      at,
    });
    return result;
  });
}

/** Changes label, active and/or the POP3 mailbox; at least one must be given (422 otherwise). */
export async function changeSeed(deps: SeedlistDeps, actor: AuditActor, id: string, change: SeedChange): Promise<SeedRow> {
  if (change.label === undefined && change.active === undefined && change.bounce_mailbox_id === undefined) {
    throw validationError('body', 'give label, active or bounce_mailbox_id');
  }
  if (!isUuid(id)) throw notFound('seed mailbox');
  await checkMailbox(deps, change.bounce_mailbox_id);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const before = await findSeed(tx, id);
    if (!before) throw notFound('seed mailbox');
    const seed = (await updateSeed(tx, id, change, at))!;
    await writeAudit(tx, {
      tenantId: null,
      actor,
      action: 'seedlist.update',
      resourceType: 'seed_mailbox',
      resourceId: id,
      metadata: { before: auditOf(before), after: auditOf(seed) },
      at,
    });
    return seed;
  });
}

/** Deletes a seed and its copies' records. */
export async function removeSeed(deps: SeedlistDeps, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('seed mailbox');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const seed = await deleteSeed(tx, id);
    if (!seed) throw notFound('seed mailbox');
    await writeAudit(tx, { tenantId: null, actor, action: 'seedlist.delete', resourceType: 'seed_mailbox', resourceId: id, metadata: auditOf(seed), at });
  });
}

/**
 * What a copy shows: expected is inbox for a copy handed to the send path (or about to be), none for one that never
 * left (dropped by the suppression gate, simulated for a test key or sandbox tenant, or refused as invalid);
 * observed is inbox or spam once seen, pending until then, missing when it left more than missing_after_hours ago
 * and was not seen (bounced copies too), not_sent when it never left.
 */
export type ObservedPlacement = 'inbox' | 'spam' | 'pending' | 'missing' | 'not_sent';

const NEVER_LEFT = new Set(['dropped', 'simulated']);

export function placementOf(hit: SeedHitRow, now: Date, missingAfterHours: number): { expected: 'inbox' | 'none'; observed: ObservedPlacement } {
  if (hit.placement !== null) return { expected: 'inbox', observed: hit.placement };
  if (hit.send_state === 'pending') return { expected: 'inbox', observed: 'pending' };
  // A sent copy whose send row is gone (never the case today: sends are not purged) still counts as having left.
  if (hit.send_state === 'not_sent' || (hit.send_status !== null && NEVER_LEFT.has(hit.send_status))) return { expected: 'none', observed: 'not_sent' };
  const overdue = hit.sent_at !== null && now.getTime() - hit.sent_at.getTime() > missingAfterHours * 3_600_000;
  return { expected: 'inbox', observed: overdue ? 'missing' : 'pending' };
}

export async function seedHits(deps: SeedlistDeps, id: string, page: { limit: number; offset: number }) {
  if (!isUuid(id) || !(await findSeed(deps.sql, id))) throw notFound('seed mailbox');
  const { items, total } = await listSeedHits(deps.sql, id, page);
  const now = deps.clock.now();
  return { total, items: items.map((hit) => ({ hit, ...placementOf(hit, now, deps.config.seedlist.missing_after_hours) })) };
}

/** Reads with no rule above their SQL, offered here so the API calls the context's surface, not its SQL. */
export { listSeeds } from './queries.js';
