// Mailbox invites: a single-use, expiring token shown once to the inviter, consumed to set the mailbox password and sign in.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { SessionTokens } from '../../accounts/auth/jwt.js';
import { acceptNewPassword, passwordContext } from '../../accounts/auth/passwords.js';
import type { Config } from '../../config/index.js';
import { AppError, notFound } from '../../kernel/errors.js';
import { claimInvite, expireOpenInvites, findInviteByHash, insertInvite, setMailboxPassword } from './queries.js';
import { requireMailbox, type MailboxDeps } from './service.js';

/**
 * An invite travels by mail or chat to a person who may not act on it the same day; three days covers
 * a weekend, and a leaked token still dies soon. A constant rather than config: no operator has asked to tune it.
 */
export const INVITE_TTL_MS = 72 * 3600 * 1000;
/** The spec: consuming an invite returns a 24-hour JWT limited to the mailbox. */
export const MAILBOX_SESSION_TTL_SECONDS = 24 * 3600;

/** The prefix makes a leaked token recognizable (secret scanners, logs); the 256 random bits make it unguessable. */
const TOKEN_PREFIX = 'mbi_';

export interface InviteDeps extends MailboxDeps {
  config: Config;
  tokens: SessionTokens;
}

export function hashInviteToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface Invite {
  mailbox_id: string;
  address: string;
  token: string;
  expires_at: Date;
}

/** Issues a new invite for the mailbox; every earlier unused invite of it stops working (410 when tried). */
export async function createInvite(deps: MailboxDeps, tenantId: string, actor: AuditActor, mailboxId: string): Promise<Invite> {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const at = deps.clock.now();
  const expiresAt = new Date(at.getTime() + INVITE_TTL_MS);
  return deps.sql.begin(async (tx) => {
    const mailbox = await requireMailbox(tx, tenantId, mailboxId);
    const replaced = await expireOpenInvites(tx, mailbox.id, at);
    const id = randomUUID();
    await insertInvite(tx, {
      id,
      tenantId,
      mailboxId: mailbox.id,
      tokenHash: hashInviteToken(token),
      expiresAt,
      createdBy: actor.type === 'user' ? actor.id : null,
      at,
    });
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'mailbox.invited',
      resourceType: 'mailbox',
      resourceId: mailbox.id,
      metadata: { address: mailbox.address, invite_id: id, expires_at: expiresAt.toISOString(), replaced },
      at,
    });
    return { mailbox_id: mailbox.id, address: mailbox.address, token, expires_at: expiresAt };
  });
}

export interface MailboxSession {
  token: string;
  /** The mailbox is the account: a mailbox user has no users row, so its id is the user id. */
  user_id: string;
  tenant_id: string;
  mailbox_id: string;
  address: string;
  /** Seconds since the epoch. */
  expires_at: number;
}

const gone = () => new AppError('gone', 'this invite was already used, was replaced by a newer one, or has expired; ask for a new invite');

/**
 * Consumes an invite: sets the mailbox password and returns a mailbox session.
 * Unknown token → 404; used, replaced or expired → 410; weak password → 422 (nothing consumed).
 * Exactly one of several concurrent consumers of one token wins; the others get 410.
 */
export async function consumeInvite(deps: InviteDeps, input: { token: string; new_password: string }, ip: string | null): Promise<MailboxSession> {
  const tokenHash = hashInviteToken(input.token);
  const invite = await findInviteByHash(deps.sql, tokenHash);
  if (!invite) throw notFound('invite');
  if (invite.used_at || invite.expires_at.getTime() <= deps.clock.now().getTime()) throw gone();
  const mailbox = await requireMailbox(deps.sql, invite.tenant_id, invite.mailbox_id);
  const passwordHash = await acceptNewPassword(input.new_password, deps.config.auth, 'new_password', passwordContext(mailbox.address));
  const at = deps.clock.now();
  const row = await deps.sql.begin(async (tx) => {
    const claimed = await claimInvite(tx, tokenHash, at);
    if (!claimed) return undefined;
    const updated = await setMailboxPassword(tx, claimed.mailbox_id, passwordHash, at);
    await writeAudit(tx, {
      tenantId: claimed.tenant_id,
      actor: { type: 'system', id: null, ip },
      action: 'mailbox.invite_consumed',
      resourceType: 'mailbox',
      resourceId: claimed.mailbox_id,
      metadata: { address: updated?.address ?? null, invite_id: claimed.id },
      at,
    });
    return updated;
  });
  if (!row) throw gone();
  const { token, expiresAt } = await deps.tokens.issueMailbox({
    mailboxId: row.id,
    tenantId: row.tenant_id,
    ttlSeconds: MAILBOX_SESSION_TTL_SECONDS,
    now: at,
  });
  return { token, user_id: row.id, tenant_id: row.tenant_id, mailbox_id: row.id, address: row.address, expires_at: expiresAt };
}
