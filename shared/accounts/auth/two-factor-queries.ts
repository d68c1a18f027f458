// SQL for TOTP enrolments and recovery codes.
import type { Queryable } from '../../db/connection.js';

export interface TotpRow {
  user_id: string;
  secret_sealed: Buffer;
  enabled_at: Date | null;
  /** postgres.js returns bigint as a string; see numberOrNull. */
  last_used_step: string | null;
  created_at: Date;
}

export async function findTotp(db: Queryable, userId: string): Promise<TotpRow | undefined> {
  const [row] = await db<TotpRow[]>`select * from user_totp where user_id = ${userId}`;
  return row;
}

/** Stores (or replaces) a pending secret. Returns false when 2FA is already enabled: nothing was changed. */
export async function storePendingTotp(db: Queryable, userId: string, secretSealed: Buffer, at: Date): Promise<boolean> {
  const rows = await db`
    insert into user_totp (user_id, secret_sealed, created_at) values (${userId}, ${secretSealed}, ${at})
    on conflict (user_id) do update set secret_sealed = excluded.secret_sealed, created_at = excluded.created_at, last_used_step = null
      where user_totp.enabled_at is null
    returning user_id`;
  return rows.length === 1;
}

/** Enables a pending enrolment with the step its first code used. Undefined when it was not pending any more. */
export async function enableTotp(db: Queryable, userId: string, at: Date, step: number): Promise<Date | undefined> {
  const [row] = await db<{ enabled_at: Date }[]>`
    update user_totp set enabled_at = ${at}, last_used_step = ${step}
    where user_id = ${userId} and enabled_at is null
    returning enabled_at`;
  return row?.enabled_at;
}

/**
 * Takes a time step for a sign-in: succeeds only when it is later than every step taken before,
 * in one statement, so a code is accepted once even when two requests race with it.
 */
export async function claimTotpStep(db: Queryable, userId: string, step: number): Promise<boolean> {
  const rows = await db`
    update user_totp set last_used_step = ${step}
    where user_id = ${userId} and enabled_at is not null and (last_used_step is null or last_used_step < ${step})
    returning user_id`;
  return rows.length === 1;
}

/** Removes the enrolment and its recovery codes. Returns whether 2FA was enabled. */
export async function deleteTotp(db: Queryable, userId: string): Promise<boolean> {
  const rows = await db<{ enabled_at: Date | null }[]>`delete from user_totp where user_id = ${userId} returning enabled_at`;
  await db`delete from user_recovery_codes where user_id = ${userId}`;
  return rows.some((r) => r.enabled_at !== null);
}

export async function replaceRecoveryCodes(db: Queryable, userId: string, hashes: string[], at: Date): Promise<void> {
  await db`delete from user_recovery_codes where user_id = ${userId}`;
  if (hashes.length === 0) return;
  await db`
    insert into user_recovery_codes (user_id, code_hash, created_at)
    select ${userId}, h, ${at} from unnest(${hashes}::text[]) as h`;
}

export async function unusedRecoveryCodes(db: Queryable, userId: string): Promise<{ id: string; code_hash: string }[]> {
  return db<{ id: string; code_hash: string }[]>`
    select id, code_hash from user_recovery_codes where user_id = ${userId} and used_at is null order by id`;
}

/** Marks a code used; false when another request used it first (one statement: exactly one use wins). */
export async function useRecoveryCode(db: Queryable, id: string, at: Date): Promise<boolean> {
  const rows = await db`update user_recovery_codes set used_at = ${at} where id = ${id} and used_at is null returning id`;
  return rows.length === 1;
}

export async function countUnusedRecoveryCodes(db: Queryable, userId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from user_recovery_codes where user_id = ${userId} and used_at is null`;
  return row!.n;
}

export function numberOrNull(value: string | null): number | null {
  return value === null ? null : Number(value);
}
