// Migration 020 on a database holding domains from before claims: proven domains own their names, the rest become pending claims with a fresh expiry.
import t from 'tap';
import { databaseBefore } from '../../../helpers/migration-db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const CLAIMS = 20;

const { sql, apply } = await databaseBefore(t, CLAIMS);

t.test('existing domains: verified, drifted or DKIM-proven ones own their names; the others are pending claims for seven more days', async (t) => {
  const tenant = await insertTenant(sql);
  const domain = async (label: string, d: { verified?: boolean; drifted?: boolean; dkim?: boolean }) => {
    const [row] = await sql<{ id: string }[]>`
      insert into domains (tenant_id, name, unicode_name, verified_at, drifted_at, created_at)
      values (${tenant}, ${label}, ${label}, ${d.verified ? new Date('2026-01-02T00:00:00Z') : null}, ${d.drifted ? new Date('2026-01-03T00:00:00Z') : null},
              '2026-01-01T00:00:00Z') returning id`;
    await sql`
      insert into domain_records (domain_id, kind, type, host, expected, verified, verified_at)
      values (${row!.id}, 'dkim', 'TXT', ${`s._domainkey.${label}`}, 'v=DKIM1; p=x', ${d.dkim ?? false}, ${d.dkim ? new Date('2026-01-04T00:00:00Z') : null})`;
    return row!.id;
  };
  const verified = await domain('verified.example', { verified: true, dkim: true });
  const drifted = await domain('drifted.example', { drifted: true });
  const dkimOnly = await domain('dkim-only.example', { dkim: true });
  const pending = await domain('pending.example', {});

  const before = Date.now();
  t.same(await apply(), [CLAIMS]);
  const rows = new Map(
    (
      await sql<
        { id: string; owned_at: Date | null; expires_at: Date | null; superseded_at: Date | null }[]
      >`select id, owned_at, expires_at, superseded_at from domains`
    ).map((r) => [r.id, r]),
  );
  t.same(rows.get(verified)!.owned_at, new Date('2026-01-02T00:00:00Z'), 'a verified domain owns its name since it verified');
  t.same(rows.get(drifted)!.owned_at, new Date('2026-01-03T00:00:00Z'), 'so does a drifted one');
  t.same(rows.get(dkimOnly)!.owned_at, new Date('2026-01-04T00:00:00Z'), 'and one whose DKIM record verified');
  for (const id of [verified, drifted, dkimOnly]) t.equal(rows.get(id)!.expires_at, null);
  t.equal(rows.get(pending)!.owned_at, null, 'a domain that proved nothing is a pending claim');
  t.ok(rows.get(pending)!.expires_at!.getTime() >= before + 7 * 86_400_000 - 60_000, 'with seven days from the upgrade to prove control');
  for (const r of rows.values()) t.equal(r.superseded_at, null);

  const other = await insertTenant(sql);
  await sql`insert into domains (tenant_id, name, unicode_name, created_at) values (${other}, 'verified.example', 'verified.example', now())`;
  t.pass('another tenant may now claim an owned name, as a pending claim');
});
