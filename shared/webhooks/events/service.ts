// A tenant's event-webhook endpoints: create (secret shown once), list, read, change, delete, rotate the secret (the old one signs 24 h more); audited.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Sql } from '../../db/connection.js';
import type { DnsResolver } from '../../kernel/dns.js';
import { conflict, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { checkWebhookUrl, UrlPolicyError } from '../inbound/url-policy.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';
import type { WebhookEventType } from './event-types.js';
import {
  countEndpoints,
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  newEndpointId,
  rotateEndpointSecret,
  updateEndpoint,
  type EndpointRow,
} from './queries.js';
import { generateSecret, PREVIOUS_SECRET_VALIDITY_MS, sealSecret } from './signing.js';

export const MAX_ENDPOINTS_PER_TENANT = 20;
export const MAX_DESCRIPTION_LENGTH = 500;

export interface EndpointDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  /** The URL's host is resolved through it, as every delivery does. */
  dns: DnsResolver;
  vault: SealedBox;
}

export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  event_types: WebhookEventType[];
  enabled: boolean;
  /** The secret in clear: only in the answer that created or rotated it. */
  secret: string | null;
  secret_revealed_once: boolean;
  secret_rotated_at: Date | null;
  /** Until when the previous secret also signs (after a rotation); null when it no longer does. */
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const view = (row: EndpointRow, now: Date, secret: string | null = null): EndpointView => ({
  id: row.id,
  url: row.url,
  description: row.description,
  event_types: row.event_types,
  enabled: row.enabled,
  secret,
  secret_revealed_once: secret !== null,
  secret_rotated_at: row.secret_rotated_at,
  previous_secret_expires_at: row.previous_secret_expires_at && row.previous_secret_expires_at > now ? row.previous_secret_expires_at : null,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** The URL as stored and POSTed to, after the webhook URL policy and a DNS check; 422 naming url. */
async function checkedUrl(deps: EndpointDeps, text: string): Promise<string> {
  try {
    return (await checkWebhookUrl(text, deps.config.webhooks, deps.dns)).url.href;
  } catch (err) {
    if (err instanceof UrlPolicyError) throw validationError('url', err.message);
    throw err;
  }
}

function checkedTypes(types: readonly WebhookEventType[]): WebhookEventType[] {
  const unique = [...new Set(types)];
  if (unique.length === 0) throw validationError('event_types', 'must name at least one event type');
  return unique;
}

function checkedDescription(text: string | null | undefined): string | null {
  const trimmed = text?.trim() ?? '';
  if (trimmed.length > MAX_DESCRIPTION_LENGTH) throw validationError('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  return trimmed === '' ? null : trimmed;
}

/** The tenant's endpoint, else 404 (another tenant's id included). */
export async function requireEndpoint(sql: Sql, tenantId: string, id: string): Promise<EndpointRow> {
  const row = isUuid(id) ? await findEndpoint(sql, tenantId, id) : undefined;
  if (!row) throw notFound('webhook');
  return row;
}

export interface NewEndpointInput {
  url: string;
  event_types: WebhookEventType[];
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

export async function createEndpoint(deps: EndpointDeps, tenantId: string, actor: AuditActor, input: NewEndpointInput): Promise<EndpointView> {
  const eventTypes = checkedTypes(input.event_types);
  const description = checkedDescription(input.description);
  const url = await checkedUrl(deps, input.url);
  const at = deps.clock.now();
  const id = newEndpointId();
  const secret = generateSecret();
  return deps.sql.begin(async (tx) => {
    // Serializes creations of one tenant, so the cap holds under concurrent calls.
    await tx`select pg_advisory_xact_lock(hashtext(${`event-webhooks:${tenantId}`}))`;
    if ((await countEndpoints(tx, tenantId)) >= MAX_ENDPOINTS_PER_TENANT) {
      throw conflict(`an account has at most ${MAX_ENDPOINTS_PER_TENANT} webhooks; delete one first`);
    }
    const row = await insertEndpoint(tx, {
      id,
      tenant_id: tenantId,
      url,
      description,
      event_types: eventTypes,
      enabled: input.enabled ?? true,
      secret_sealed: sealSecret(deps.vault, tenantId, id, secret),
      at,
    });
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'event_webhook.created',
      resourceType: 'event_webhook',
      resourceId: id,
      metadata: { url, event_types: eventTypes, enabled: row.enabled },
      at,
    });
    return view(row, at, secret);
  });
}

export async function listEndpointPage(deps: Pick<EndpointDeps, 'sql' | 'clock'>, tenantId: string, q: { limit: number; after?: string | undefined }) {
  const after = q.after ? decodeCursor(q.after) : undefined;
  const rows = await listEndpoints(deps.sql, tenantId, { limit: q.limit + 1, after });
  const page = pageOf(rows, q.limit);
  const now = deps.clock.now();
  return { items: page.items.map((r) => view(r, now)), next_cursor: page.next_cursor, total: await countEndpoints(deps.sql, tenantId) };
}

export async function getEndpoint(deps: Pick<EndpointDeps, 'sql' | 'clock'>, tenantId: string, id: string): Promise<EndpointView> {
  return view(await requireEndpoint(deps.sql, tenantId, id), deps.clock.now());
}

export interface EndpointPatch {
  url?: string | undefined;
  event_types?: WebhookEventType[] | undefined;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

/** Changes the fields given; deliveries already queued keep their payload and go to the endpoint's URL as it is when attempted. */
export async function changeEndpoint(deps: EndpointDeps, tenantId: string, actor: AuditActor, id: string, patch: EndpointPatch): Promise<EndpointView> {
  await requireEndpoint(deps.sql, tenantId, id);
  const url = patch.url === undefined ? undefined : await checkedUrl(deps, patch.url);
  const eventTypes = patch.event_types === undefined ? undefined : checkedTypes(patch.event_types);
  const description = patch.description === undefined ? undefined : checkedDescription(patch.description);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await findEndpoint(tx, tenantId, id, true);
    if (!row) throw notFound('webhook');
    const next = {
      url: url ?? row.url,
      event_types: eventTypes ?? row.event_types,
      description: description === undefined ? row.description : description,
      enabled: patch.enabled ?? row.enabled,
    };
    const changed = (Object.keys(next) as (keyof typeof next)[]).filter((k) => JSON.stringify(next[k]) !== JSON.stringify(row[k]));
    if (changed.length === 0) return view(row, at);
    const updated = await updateEndpoint(tx, tenantId, id, { ...next, at });
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'event_webhook.updated',
      resourceType: 'event_webhook',
      resourceId: id,
      metadata: { changed, ...next },
      at,
    });
    return view(updated, at);
  });
}

/** Deletes the endpoint with its delivery log, pending deliveries and dead letters. */
export async function removeEndpoint(deps: Pick<EndpointDeps, 'sql' | 'clock'>, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('webhook');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    if (!(await deleteEndpoint(tx, tenantId, id))) throw notFound('webhook');
    await writeAudit(tx, { tenantId, actor, action: 'event_webhook.deleted', resourceType: 'event_webhook', resourceId: id, at });
  });
}

/**
 * A new secret, in this answer only. The one it replaces keeps signing (a second signature in
 * webhook-signature) for 24 hours, so receivers can deploy the new one without a gap; a rotation
 * within those hours drops the older previous secret at once.
 */
export async function rotateSecret(deps: EndpointDeps, tenantId: string, actor: AuditActor, id: string): Promise<EndpointView> {
  if (!isUuid(id)) throw notFound('webhook');
  const at = deps.clock.now();
  const secret = generateSecret();
  return deps.sql.begin(async (tx) => {
    const row = await findEndpoint(tx, tenantId, id, true);
    if (!row) throw notFound('webhook');
    const previousExpiresAt = new Date(at.getTime() + PREVIOUS_SECRET_VALIDITY_MS);
    const updated = await rotateEndpointSecret(tx, tenantId, id, {
      secretSealed: sealSecret(deps.vault, tenantId, id, secret),
      previousSealed: row.secret_sealed,
      previousExpiresAt,
      at,
    });
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'event_webhook.secret_rotated',
      resourceType: 'event_webhook',
      resourceId: id,
      metadata: { previous_secret_expires_at: previousExpiresAt.toISOString() },
      at,
    });
    return view(updated, at, secret);
  });
}
