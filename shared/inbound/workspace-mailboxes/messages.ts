// The inbound message API over workspace mailboxes: who may see which mailbox, list and search, read parsed or raw, mark, delete.
import type { Principal } from '../../accounts/auth/principal.js';
import { AppError, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import {
  countMessages,
  deleteMessage,
  findMessage,
  findRawMessage,
  listMessages,
  setMessageSeen,
  type MessageDetailRow,
  type MessageFilter,
  type MessageListRow,
  type MessageScope,
} from './message-queries.js';
import { parseStoredMessage, type MessageView } from './parse.js';
import { requireMailbox, requireTenantMailAccess, type MailboxDeps } from './service.js';

/** A mailbox session is held to its own mailbox; a tenant credential reaches every mailbox of its tenant. */
export function messageScopeOf(p: Principal): MessageScope {
  if (p.kind === 'mailbox') return { tenantId: p.tenant.id, mailboxId: p.mailbox!.id };
  requireTenantMailAccess(p);
  return { tenantId: p.tenant.id };
}

/** Keyset cursor of the message list: received_at in whole microseconds and the id (a Date would round to ms). */
function encodeMessageCursor(row: MessageListRow): string {
  return Buffer.from(`${row.received_us}|${row.id}`, 'utf8').toString('base64url');
}

function decodeMessageCursor(cursor: string): { us: string; id: string } {
  const [us, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !us || !/^-?\d{1,18}$/.test(us) || !id || !isUuid(id) || Buffer.from(`${us}|${id}`, 'utf8').toString('base64url') !== cursor) {
    throw new AppError('bad_request', 'after: not a cursor returned by this list');
  }
  return { us, id };
}

/** The mailbox a list is about: a session's own (another id is 404), or the tenant's mailbox named (required). */
async function listedMailbox(deps: MailboxDeps, scope: MessageScope, mailboxId: string | undefined): Promise<string> {
  if (scope.mailboxId) {
    if (mailboxId !== undefined && mailboxId !== scope.mailboxId) throw notFound('mailbox');
    return scope.mailboxId;
  }
  if (mailboxId === undefined) throw validationError('mailbox_id', 'is required with a user session or API key (a mailbox session may leave it out)');
  return (await requireMailbox(deps.sql, scope.tenantId, mailboxId)).id;
}

export async function listMessagePage(
  deps: MailboxDeps,
  scope: MessageScope,
  query: { limit: number; after?: string | undefined; mailbox_id?: string | undefined; q?: string | undefined; unread?: boolean | undefined },
): Promise<{ items: MessageListRow[]; next_cursor: string | null; total: number }> {
  const after = query.after ? decodeMessageCursor(query.after) : undefined;
  const mailboxId = await listedMailbox(deps, scope, query.mailbox_id);
  const filter: MessageFilter = { q: query.q?.trim() || undefined, unread: query.unread };
  const rows = await listMessages(deps.sql, scope.tenantId, mailboxId, filter, { limit: query.limit + 1, after });
  const items = rows.slice(0, query.limit);
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: rows.length > query.limit && last ? encodeMessageCursor(last) : null,
    total: await countMessages(deps.sql, scope.tenantId, mailboxId, filter),
  };
}

export interface MessageDetail {
  row: MessageDetailRow;
  parsed: MessageView;
}

export async function getMessage(deps: MailboxDeps, scope: MessageScope, id: string): Promise<MessageDetail> {
  const row = isUuid(id) ? await findMessage(deps.sql, scope, id) : undefined;
  if (!row) throw notFound('message');
  return { row, parsed: await parseStoredMessage(row.raw) };
}

/** The message exactly as stored: the sender's bytes with Mailpath's Received and Authentication-Results on top. */
export async function getRawMessage(deps: MailboxDeps, scope: MessageScope, id: string): Promise<Buffer> {
  const raw = isUuid(id) ? await findRawMessage(deps.sql, scope, id) : undefined;
  if (!raw) throw notFound('message');
  return raw;
}

export async function markMessage(deps: MailboxDeps, scope: MessageScope, id: string, seen: boolean): Promise<MessageListRow> {
  const row = isUuid(id) ? await setMessageSeen(deps.sql, scope, id, seen) : undefined;
  if (!row) throw notFound('message');
  return row;
}

export async function removeMessage(deps: MailboxDeps, scope: MessageScope, id: string): Promise<void> {
  if (!isUuid(id) || !(await deleteMessage(deps.sql, scope, id))) throw notFound('message');
}
