// SQL of domain claims: the per-name lock, the owner of a name, winning a name (superseding the other claims) and the expiry of unproven claims.
import type { Queryable } from '../../db/connection.js';

/** Arbitrary constant naming the per-name claim locks among advisory locks (two-key form: its own key space). */
const CLAIM_LOCK_CLASS = 74_615_020;

/**
 * Serializes, until commit, the transactions deciding who owns a name: two claims proving control
 * at once are decided one after the other. Taken before any domain row lock, always.
 */
export async function lockClaimsOf(db: Queryable, name: string): Promise<void> {
  await db`select pg_advisory_xact_lock(${CLAIM_LOCK_CLASS}::int, hashtext(${name}))`;
}

/** Whether another claim than `exceptId` owns the name. */
export async function ownedByAnother(db: Queryable, name: string, exceptId: string): Promise<boolean> {
  const [row] = await db<{ id: string }[]>`select id from domains where name = ${name} and owned_at is not null and id <> ${exceptId}`;
  return row !== undefined;
}

/** The claim owns its name from now on; it no longer expires. */
export async function markOwned(db: Queryable, id: string, at: Date): Promise<void> {
  await db`update domains set owned_at = ${at}, expires_at = null where id = ${id}`;
}

export interface ClosedClaim {
  id: string;
  tenant_id: string;
  name: string;
}

/** Closes every other open, unowned claim of the name: they can no longer verify. */
export async function supersedeOtherClaims(db: Queryable, name: string, winnerId: string, at: Date): Promise<ClosedClaim[]> {
  return db<ClosedClaim[]>`
    update domains set superseded_at = ${at}
    where name = ${name} and id <> ${winnerId} and owned_at is null and superseded_at is null
    returning id, tenant_id, name`;
}

export interface ExpiredClaim extends ClosedClaim {
  superseded_at: Date | null;
  created_at: Date;
}

/**
 * Deletes up to `limit` unowned claims (pending or superseded) whose expiry has passed, with their
 * keys and records. A claim locked by a check in progress is skipped (the next sweep takes it if it
 * did not win): waiting for it while holding other claims of its name could deadlock with that
 * check superseding them.
 */
export async function deleteExpiredClaims(db: Queryable, at: Date, limit: number): Promise<ExpiredClaim[]> {
  return db<ExpiredClaim[]>`
    delete from domains where id in (
      select id from domains where owned_at is null and expires_at <= ${at} order by expires_at, id limit ${limit} for update skip locked
    )
    returning id, tenant_id, name, superseded_at, created_at`;
}
