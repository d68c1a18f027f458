// SQL for password-reset tokens and the password change they lead to.
import type { Queryable } from '../../db/connection.js';

export interface ResetTokenRow {
  id: string;
  user_id: string;
  expires_at: Date;
  used_at: Date | null;
}

/** Stores a token (its hash) and drops the user's tokens that can no longer be used. */
export async function insertResetToken(db: Queryable, t: { userId: string; tokenHash: string; expiresAt: Date; ip: string | null; at: Date }): Promise<void> {
  await db`
    delete from password_reset_tokens
    where user_id = ${t.userId} and (used_at is not null or expires_at <= ${t.at}) and created_at < ${new Date(t.at.getTime() - 3_600_000)}`;
  await db`
    insert into password_reset_tokens (user_id, token_hash, expires_at, requested_ip, created_at)
    values (${t.userId}, ${t.tokenHash}, ${t.expiresAt}, ${t.ip}, ${t.at})`;
}

/** Tokens issued to the user since `since` (the per-hour e-mail cap). */
export async function countResetTokensSince(db: Queryable, userId: string, since: Date): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from password_reset_tokens where user_id = ${userId} and created_at > ${since}`;
  return row!.n;
}

export async function findResetToken(db: Queryable, tokenHash: string): Promise<ResetTokenRow | undefined> {
  const [row] = await db<ResetTokenRow[]>`
    select id, user_id, expires_at, used_at from password_reset_tokens where token_hash = ${tokenHash}`;
  return row;
}

/**
 * Uses a token: it must be unused and unexpired at `at`. One statement, so of two requests with
 * the same token exactly one gets the user back.
 */
export async function consumeResetToken(db: Queryable, id: string, at: Date): Promise<string | undefined> {
  const [row] = await db<{ user_id: string }[]>`
    update password_reset_tokens set used_at = ${at}
    where id = ${id} and used_at is null and expires_at > ${at}
    returning user_id`;
  return row?.user_id;
}

/** Ends every other outstanding token of the user (one reset spends all the links mailed before). */
export async function spendOtherResetTokens(db: Queryable, userId: string, at: Date): Promise<void> {
  await db`update password_reset_tokens set used_at = ${at} where user_id = ${userId} and used_at is null`;
}

/** Sets a new password hash and ends every session (and 2FA challenge) issued before `at`. */
export async function setPassword(db: Queryable, userId: string, passwordHash: string, at: Date): Promise<void> {
  await db`
    update users set password_hash = ${passwordHash}, sessions_valid_after = ${at}, updated_at = ${at}
    where id = ${userId}`;
}
