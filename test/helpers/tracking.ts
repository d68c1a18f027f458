// Fixtures for the tracking and unsubscribe tests: campaign and transactional sends through the real send use-case with decorated HTML, their tracking
// links, delivery attempts, and the counters they move.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../shared/db/connection.js';
import { acceptSend, type AcceptInput } from '../../shared/sending/accept.js';
import type { SendingDeps } from '../../shared/sending/deps.js';
import type { SealedBox } from '../../shared/kernel/secrets/sealed-box.js';
import { decorateHtml } from '../../shared/engagement/tracking/decorate.js';
import { linkBase, unsubscribeUrl } from '../../shared/engagement/tracking/link-tokens.js';
import { accepted } from './accepted.js';
import { verifiedSendingDomain } from './sending-domain.js';
import { insertTenant } from './tenant-rows.js';

export const BODY = `<html><body>
<p>Hello</p>
<a href="https://shop.example/sale?id=1">Sale</a>
<a href="https://blog.example/post#top">Post</a>
<a href="https://shop.example/cart">Cart</a>
</body></html>`;

export interface TrackedSendFixture {
  tenantId: string;
  sendId: string;
  email: string;
  campaignId: string | null;
  contactId: string | null;
  /** The decorated HTML as composed into the message. */
  html: string;
  /** The message's links: the open pixel's and each click link's path (origin left out), the unsubscribe link's path. */
  open: string;
  clicks: string[];
  unsubscribe: string;
}

/** The send path and the sealing box (domain keys): what buildServices gives every role. */
type Deps = SendingDeps & { vault: SealedBox };

async function tenantOf(deps: Deps, tenantId: string | undefined) {
  const id = tenantId ?? (await insertTenant(deps.sql));
  const domain = await verifiedSendingDomain(deps.sql, deps.vault, id);
  const [tenant] = await deps.sql<AcceptInput['tenant'][]>`select id, status, is_sandbox from tenants where id = ${id}`;
  return { tenant: tenant!, domain: domain.name };
}

function linksOf(deps: Deps, html: string, sendId: string): Pick<TrackedSendFixture, 'open' | 'clicks' | 'unsubscribe'> {
  const base = linkBase(deps.config.publicUrl);
  const paths = [...html.matchAll(/(?:href|src)="([^"]+)"/g)]
    .map((m) => m[1]!.replace(/&amp;/g, '&'))
    .filter((u) => u.startsWith(base))
    .map((u) => u.slice(base.length));
  return {
    open: paths.find((p) => p.startsWith('/o/')) ?? '',
    clicks: paths.filter((p) => p.startsWith('/c/')),
    unsubscribe: unsubscribeUrl(base, deps.linkKey, sendId).slice(base.length),
  };
}

/**
 * A campaign send of a new contact (or of `email`) through acceptSend, with its campaign, recipient row
 * and pre-assigned send id, the body decorated with tracking (and UTM when given).
 */
export async function campaignSend(
  deps: Deps,
  o: {
    tenantId?: string;
    campaignId?: string;
    email?: string;
    variant?: 'a' | 'b' | null;
    body?: string;
    utm?: { source?: string; medium?: string; campaign?: string };
  } = {},
): Promise<TrackedSendFixture> {
  const { tenant, domain } = await tenantOf(deps, o.tenantId);
  const email = o.email ?? `reader-${randomUUID().slice(0, 8)}@dest.example`;
  const [contact] = await deps.sql<{ id: string }[]>`
    insert into contacts (tenant_id, email, status, created_at, updated_at) values (${tenant.id}, ${email}, 'active', now(), now()) returning id`;
  const campaignId =
    o.campaignId ??
    (
      await deps.sql<
        { id: string }[]
      >`insert into campaigns (tenant_id, name, status, created_at, updated_at) values (${tenant.id}, 'Spring', 'sending', now(), now()) returning id`
    )[0]!.id;
  const sendId = randomUUID();
  const variant = o.variant ?? null;
  await deps.sql`
    insert into campaign_recipients (campaign_id, contact_id, tenant_id, email, variant, status, send_id, seq)
    values (${campaignId}, ${contact!.id}, ${tenant.id}, ${email}, ${variant}, 'pending', ${sendId},
            (select coalesce(max(seq), 0) + 1 from campaign_recipients where campaign_id = ${campaignId}))`;
  const html = decorateHtml({
    html: o.body ?? BODY,
    sendId,
    linkKey: deps.linkKey,
    owner: { tenantId: tenant.id, interstitial: tenant.is_sandbox },
    publicUrl: deps.config.publicUrl,
    trackOpens: true,
    trackClicks: true,
    utm: o.utm,
  });
  accepted(
    await acceptSend(deps, {
      tenant,
      mode: 'live',
      apiKeyId: null,
      source: 'campaign',
      sendId,
      campaign: { id: campaignId, variant, contactId: contact!.id },
      from: { address: `news@${domain}` },
      to: email,
      content: { kind: 'compose', subject: 'Spring sale', html },
    }),
  );
  await deps.sql`update campaign_recipients set status = 'queued' where send_id = ${sendId}`;
  return { tenantId: tenant.id, sendId, email, campaignId, contactId: contact!.id, html, ...linksOf(deps, html, sendId) };
}

/** A send without campaign or contact (as POST /transactional/send makes), its body decorated. */
export async function plainSend(deps: Deps, o: { tenantId?: string; email?: string } = {}): Promise<TrackedSendFixture> {
  const { tenant, domain } = await tenantOf(deps, o.tenantId);
  const email = o.email ?? `someone-${randomUUID().slice(0, 8)}@dest.example`;
  const sendId = randomUUID();
  const html = decorateHtml({
    html: BODY,
    sendId,
    linkKey: deps.linkKey,
    owner: { tenantId: tenant.id, interstitial: tenant.is_sandbox },
    publicUrl: deps.config.publicUrl,
    trackOpens: true,
    trackClicks: true,
  });
  accepted(
    await acceptSend(deps, {
      tenant,
      mode: 'live',
      apiKeyId: null,
      source: 'api',
      sendId,
      from: { address: `hello@${domain}` },
      to: email,
      content: { kind: 'compose', subject: 'Your receipt', html },
    }),
  );
  return { tenantId: tenant.id, sendId, email, campaignId: null, contactId: null, html, ...linksOf(deps, html, sendId) };
}

/** Records a delivered attempt at `at` (the send's delivery time for the machine/scanner rules). */
export async function markDelivered(sql: Sql, sendId: string, at: Date): Promise<void> {
  await sql`insert into send_attempts (send_id, attempted_at, remote_host, outcome, smtp_code, duration_ms)
            values (${sendId}, ${at}, 'mx.dest.example', 'delivered', 250, 5)`;
  await sql`update sends set status = 'delivered' where id = ${sendId}`;
}

export interface Stats {
  total_opens: number;
  unique_opens: number;
  unique_human_opens: number;
  total_clicks: number;
  unique_clicks: number;
  unique_human_clicks: number;
  unsubscribes: number;
}

/** The campaign's counters for a variant ('' by default); zeros when no row exists yet. */
export async function campaignStats(sql: Sql, campaignId: string, variant = ''): Promise<Stats> {
  const [row] = await sql<Stats[]>`
    select total_opens::int, unique_opens::int, unique_human_opens::int, total_clicks::int, unique_clicks::int, unique_human_clicks::int, unsubscribes::int
    from campaign_stats where campaign_id = ${campaignId} and variant = ${variant}`;
  return row ?? { total_opens: 0, unique_opens: 0, unique_human_opens: 0, total_clicks: 0, unique_clicks: 0, unique_human_clicks: 0, unsubscribes: 0 };
}

export interface EventView {
  type: string;
  campaign_id: string | null;
  contact_id: string | null;
  recipient: string;
  detail: Record<string, unknown>;
}

export async function engagementEvents(sql: Sql, sendId: string, type?: string): Promise<EventView[]> {
  return sql<EventView[]>`
    select type, campaign_id, contact_id, recipient, detail from events
    where send_id = ${sendId} and type in ('open', 'click', 'unsubscribe') ${type ? sql`and type = ${type}` : sql``}
    order by occurred_at, id`;
}

export const HUMAN_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
