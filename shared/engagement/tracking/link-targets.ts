// What a tracking link names once read: a click's tenant (from the token, or from its send for links minted before tokens carried it), and the
// address an unsubscribe link is for.
import type { Queryable } from '../../db/connection.js';
import type { ClickTarget } from './link-tokens.js';
import { sendRecipient, sendTenant } from './queries.js';

/** Undefined: an old-style link whose send is gone. */
export async function clickTenant(db: Queryable, target: ClickTarget): Promise<string | undefined> {
  return target.tenantId ?? (await sendTenant(db, target.sendId));
}

/** The recipient the unsubscribe page names, or undefined when the send is gone. */
export const unsubscribeRecipient = (db: Queryable, sendId: string): Promise<string | undefined> => sendRecipient(db, sendId);
