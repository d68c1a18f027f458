// Applies mail the MX stored for a mailto unsubscribe address (u-<token>@MAILPATH_HOSTNAME, from List-Unsubscribe): the same effect as the https link, once
// however often the job runs.
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { isUuid } from '../../kernel/ids.js';
import type { Logger } from '../../kernel/log.js';
import { sendIdOfUnsubscribeAddress } from './link-tokens.js';
import { attributeUnsubscribeMail, loadUnsubscribeMail } from './queries.js';
import { applyUnsubscribe } from './unsubscribe-apply.js';

export interface UnsubscribeMailDeps {
  sql: Sql;
  config: Pick<Config, 'hostname'>;
  log: Logger;
  /** Verifies the address's token (the MX checked it at RCPT; checked again: the job trusts no row). */
  linkKey: Buffer;
}

/**
 * unsubscribed / already (see applyUnsubscribe); or why nothing happened: skipped (a malformed job), missing (no
 * such row), not_unsubscribe (another kind of recipient), forged (a token that does not verify), unknown_send.
 * Only a failure to reach the database throws (and the job is retried).
 */
export async function runUnsubscribeMail(deps: UnsubscribeMailDeps, recipientId: unknown): Promise<string> {
  if (typeof recipientId !== 'string' || !isUuid(recipientId)) return 'skipped';
  const mail = await loadUnsubscribeMail(deps.sql, recipientId);
  if (!mail) return 'missing';
  if (mail.kind !== 'unsubscribe') return 'not_unsubscribe';
  const sendId = sendIdOfUnsubscribeAddress(deps.linkKey, mail.recipient, deps.config.hostname);
  if (sendId === undefined) {
    deps.log.warn({ recipientId }, 'unsubscribe mail to an address whose token does not verify; ignored');
    return 'forged';
  }
  // The time the person asked: when the mail arrived, however late the job runs.
  const result = await applyUnsubscribe(deps.sql, { sendId, method: 'mailto', at: mail.received_at, detail: { inbound_message_id: mail.inbound_message_id } });
  if (result.outcome !== 'unknown_send') await attributeUnsubscribeMail(deps.sql, recipientId, result.send.tenant_id);
  deps.log.info({ recipientId, sendId, outcome: result.outcome }, 'unsubscribe mail handled');
  return result.outcome;
}
