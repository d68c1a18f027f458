// A tenant's POP3 bounce mailboxes: create (password sealed at rest), list, read, change, delete, and verify with a real connect and login.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';
import { passwordContext, Pop3Error, type MailboxOpener } from './mailbox-session.js';
import {
  countBounceMailboxesLocked,
  deleteBounceMailbox,
  findBounceMailbox,
  insertBounceMailbox,
  listBounceMailboxes,
  updateBounceMailbox,
  type BounceMailboxFields,
  type BounceMailboxRow,
} from './queries.js';

export interface BounceMailboxDeps extends MailboxOpener {
  sql: Sql;
  clock: Clock;
  vault: SealedBox;
  config: Pick<Config, 'bounceMailboxes'>;
}

/** A tenant has a few mailboxes (one per provider or domain); more is a mistake or an abuse of the poller. */
export const MAX_MAILBOXES_PER_TENANT = 20;
export const MAX_POLL_INTERVAL_S = 86_400;
export const DEFAULT_POLL_INTERVAL_S = 300;

export interface BounceMailboxInput {
  name: string;
  host: string;
  port: number;
  username: string;
  password: string;
  enabled?: boolean | undefined;
  delete_after_read?: boolean | undefined;
  poll_interval_s?: number | undefined;
  use_tls_implicit?: boolean | undefined;
}

export type BounceMailboxChanges = Partial<BounceMailboxInput>;

// A DNS name (labels of letters, digits and hyphens) or an address literal: what a socket can connect to.
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

function checkText(field: string, value: string, max: number): string {
  const trimmed = value.trim();
  if (trimmed === '') throw validationError(field, 'must not be blank');
  if (trimmed.length > max) throw validationError(field, `must be at most ${max} characters`);
  // A POP3 command line ends at CR LF: one inside a user name or password would start another command.
  if (/[\r\n\0]/.test(trimmed)) throw validationError(field, 'must not contain line breaks or NUL');
  return trimmed;
}

function checkHost(value: string): string {
  const host = value
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0 && !HOST_NAME.test(host)) throw validationError('host', 'must be a host name (pop.example.com) or an IP address');
  return host.replace(/\.$/, '');
}

function checkPort(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 65535) throw validationError('port', 'must be an integer from 1 to 65535');
  return value;
}

function checkInterval(deps: BounceMailboxDeps, value: number): number {
  const min = deps.config.bounceMailboxes.min_poll_interval_s;
  if (!Number.isInteger(value) || value < min || value > MAX_POLL_INTERVAL_S) {
    throw validationError('poll_interval_s', `must be an integer from ${min} to ${MAX_POLL_INTERVAL_S} (seconds)`);
  }
  return value;
}

function checkPassword(value: string): string {
  if (value.length === 0) throw validationError('password', 'must not be empty');
  if (value.length > 1024) throw validationError('password', 'must be at most 1024 characters');
  if (/[\r\n\0]/.test(value)) throw validationError('password', 'must not contain line breaks or NUL');
  return value;
}

/** The checked values of the fields given; the password sealed for the row `id`. */
function checked(deps: BounceMailboxDeps, id: string, input: BounceMailboxChanges): Partial<BounceMailboxFields> {
  const out: Partial<BounceMailboxFields> = {};
  if (input.name !== undefined) out.name = checkText('name', input.name, 200);
  if (input.host !== undefined) out.host = checkHost(input.host);
  if (input.port !== undefined) out.port = checkPort(input.port);
  if (input.username !== undefined) out.username = checkText('username', input.username, 320);
  if (input.password !== undefined) out.password_sealed = deps.vault.seal(checkPassword(input.password), passwordContext(id));
  if (input.enabled !== undefined) out.enabled = input.enabled;
  if (input.delete_after_read !== undefined) out.delete_after_read = input.delete_after_read;
  if (input.poll_interval_s !== undefined) out.poll_interval_s = checkInterval(deps, input.poll_interval_s);
  if (input.use_tls_implicit !== undefined) out.use_tls_implicit = input.use_tls_implicit;
  return out;
}

const auditFields = (row: BounceMailboxRow) => ({ name: row.name, host: row.host, port: row.port, username: row.username, enabled: row.enabled });

export async function createBounceMailbox(deps: BounceMailboxDeps, tenantId: string, actor: AuditActor, input: BounceMailboxInput): Promise<BounceMailboxRow> {
  const id = randomUUID();
  const fields = checked(deps, id, input);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    if ((await countBounceMailboxesLocked(tx, tenantId)) >= MAX_MAILBOXES_PER_TENANT) {
      throw validationError('bounce_mailboxes', `a tenant may have at most ${MAX_MAILBOXES_PER_TENANT} bounce mailboxes`);
    }
    const row = await insertBounceMailbox(tx, {
      id,
      tenant_id: tenantId,
      name: fields.name!,
      host: fields.host!,
      port: fields.port!,
      username: fields.username!,
      password_sealed: fields.password_sealed!,
      enabled: fields.enabled ?? true,
      delete_after_read: fields.delete_after_read ?? false,
      poll_interval_s: fields.poll_interval_s ?? Math.max(DEFAULT_POLL_INTERVAL_S, deps.config.bounceMailboxes.min_poll_interval_s),
      use_tls_implicit: fields.use_tls_implicit ?? true,
      at,
    });
    await writeAudit(tx, { tenantId, actor, action: 'bounce_mailbox.created', resourceType: 'bounce_mailbox', resourceId: id, metadata: auditFields(row), at });
    return row;
  });
}

export function listTenantBounceMailboxes(deps: Pick<BounceMailboxDeps, 'sql'>, tenantId: string): Promise<BounceMailboxRow[]> {
  return listBounceMailboxes(deps.sql, tenantId);
}

/** The tenant's mailbox, or 404 (malformed ids and other tenants' mailboxes alike). */
export async function getBounceMailbox(deps: Pick<BounceMailboxDeps, 'sql'>, tenantId: string, id: string): Promise<BounceMailboxRow> {
  const row = isUuid(id) ? await findBounceMailbox(deps.sql, tenantId, id) : undefined;
  if (!row) throw notFound('bounce mailbox');
  return row;
}

/** Changes the fields given (a new password is sealed again); the mailbox is polled at the next tick. */
export async function changeBounceMailbox(
  deps: BounceMailboxDeps,
  tenantId: string,
  actor: AuditActor,
  id: string,
  changes: BounceMailboxChanges,
): Promise<BounceMailboxRow> {
  if (!isUuid(id)) throw notFound('bounce mailbox');
  const fields = checked(deps, id, changes);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await updateBounceMailbox(tx, tenantId, id, fields, at);
    if (!row) throw notFound('bounce mailbox');
    const changed = Object.keys(changes).filter((k) => (changes as Record<string, unknown>)[k] !== undefined);
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'bounce_mailbox.updated',
      resourceType: 'bounce_mailbox',
      resourceId: id,
      metadata: { ...auditFields(row), fields: changed },
      at,
    });
    return row;
  });
}

/** Deletes the mailbox and the UIDLs it fetched; what it fetched stays with the intake. */
export async function removeBounceMailbox(deps: Pick<BounceMailboxDeps, 'sql' | 'clock'>, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('bounce mailbox');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    if (!(await deleteBounceMailbox(tx, tenantId, id))) throw notFound('bounce mailbox');
    await writeAudit(tx, { tenantId, actor, action: 'bounce_mailbox.deleted', resourceType: 'bounce_mailbox', resourceId: id, metadata: {}, at });
  });
}

/**
 * A real connect and login with the stored settings, then QUIT (nothing fetched, nothing deleted).
 * {ok: false, error} says why not: the host refused by the address policy, unreachable, TLS, or the login.
 */
export async function verifyBounceMailbox(deps: BounceMailboxDeps, tenantId: string, id: string): Promise<{ ok: boolean; error: string | null }> {
  const mailbox = await getBounceMailbox(deps, tenantId, id);
  try {
    const session = await deps.openMailbox(mailbox, deps.config.bounceMailboxes);
    await session.quit();
    return { ok: true, error: null };
  } catch (err) {
    if (err instanceof Pop3Error) return { ok: false, error: err.message };
    throw err;
  }
}
