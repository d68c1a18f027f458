// SQL for revoked_sessions: the sessions signed out before they expire.
import type { Queryable } from '../../db/connection.js';

/** Records a session's jti as revoked until it expires, dropping the user's revocations that have expired. */
export async function insertRevokedSession(db: Queryable, r: { jti: string; userId: string; expiresAt: Date; now: Date }): Promise<boolean> {
  await db`delete from revoked_sessions where user_id = ${r.userId} and expires_at <= ${r.now}`;
  const inserted = await db`
    insert into revoked_sessions (jti, user_id, expires_at)
    select ${r.jti}, id, ${r.expiresAt} from users where id = ${r.userId}
    on conflict (jti) do nothing`;
  return inserted.count > 0;
}
