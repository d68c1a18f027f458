// Fixtures for the seed-mailbox tests: a tenant whose campaign is sent by the real fan-out (list, verified domain, a plan with room), and a campaign message
// put to the MX over SMTP.
import type { Services } from '../../main/services.js';
import { runFanout, type FanoutOutcome } from '../../shared/campaigns/fanout.js';
import type { Sql } from '../../shared/db/connection.js';
import { addresses, listOf } from './campaigns.js';
import { RawSmtpClient } from './smtp-client.js';
import { verifiedSendingDomain } from './sending-domain.js';
import { insertTenant } from './tenant-rows.js';

/** A tenant with `contacts` list members and a campaign of theirs in `sending`, run to its end in this process. */
export async function sentCampaign(
  deps: Services,
  o: { contacts?: number; name?: string; tenantId?: string } = {},
): Promise<{ tenantId: string; campaignId: string; outcome: FanoutOutcome }> {
  const { sql } = deps;
  await sql`insert into plans (id, name, monthly_send_cap) values ('seeds', 'Seeds', 1000000) on conflict (id) do nothing`;
  const tenantId = o.tenantId ?? (await insertTenant(sql, 'seeds'));
  const [existing] = await sql<{ name: string }[]>`select name from domains where tenant_id = ${tenantId} and verified_at is not null limit 1`;
  const domain = existing?.name ?? (await verifiedSendingDomain(sql, deps.vault, tenantId)).name;
  const { listId } = await listOf(sql, tenantId, addresses(`reader-${Math.random().toString(36).slice(2, 8)}-`, o.contacts ?? 3));
  const [row] = await sql<{ id: string }[]>`
    insert into campaigns (tenant_id, name, status, subject, body_text, body_html, from_email, list_id, send_mode, started_at, created_at, updated_at)
    values (${tenantId}, ${o.name ?? 'Spring'}, 'sending', 'Hello {{ first_name | default: "there" }}', 'Hi there',
            '<p>Hi <a href="https://shop.example/">shop</a></p>',
            ${`news@${domain}`}, ${listId}, 'live', now(), now(), now())
    returning id`;
  const campaignId = row!.id;
  let outcome: FanoutOutcome = 'nothing';
  for (let i = 0; i < 50; i++) {
    outcome = await runFanout(deps, { campaign_id: campaignId, slot: 0 });
    if (outcome !== 'continued') break;
  }
  return { tenantId, campaignId, outcome };
}

/** The signed message of a campaign's copy for a seed address, as it left. */
export async function seedCopy(sql: Sql, campaignId: string, email: string): Promise<{ sendId: string; message: Buffer }> {
  const [row] = await sql<{ send_id: string; message: Buffer }[]>`
    select h.send_id, s.message from seed_hits h join sends s on s.id = h.send_id where h.campaign_id = ${campaignId} and h.email = ${email}`;
  if (!row) throw new Error(`no copy of ${campaignId} for ${email}`);
  return { sendId: row.send_id, message: row.message };
}

/** One SMTP transaction to the MX; the reply to the end of DATA (or the refused RCPT's code). */
export async function deliverTo(port: number, to: string, raw: Buffer, from = 'bounces@sender.example'): Promise<number> {
  const { client } = await RawSmtpClient.open(port);
  try {
    await client.command('EHLO relay.sender.example');
    await client.command(`MAIL FROM:<${from}>`);
    const rcpt = await client.command(`RCPT TO:<${to}>`);
    if (rcpt.code !== 250) return rcpt.code;
    await client.command('DATA');
    // Dot-stuffing (RFC 5321 §4.5.2) and the terminating line.
    const body = raw.toString('latin1').replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
    await client.send(Buffer.from(body.endsWith('\r\n') ? body : `${body}\r\n`, 'latin1'));
    return (await client.command('.')).code;
  } finally {
    await client.command('QUIT').catch(() => {});
  }
}
