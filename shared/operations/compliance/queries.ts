// SQL of the SOC 2 evidence: the day packs, and the facts the packs and per-tenant controls are built from.
import type { Queryable } from '../../db/connection.js';

export interface EvidencePackRow {
  date: string;
  generated_at: Date;
  pack: Record<string, unknown>;
}

/** Writes (or overwrites) the pack of a UTC day. */
export async function savePack(db: Queryable, date: string, generatedAt: Date, pack: Record<string, unknown>): Promise<void> {
  await db`
    insert into soc2_evidence_packs (date, generated_at, pack) values (${date}, ${generatedAt}, ${db.json(pack as never)})
    on conflict (date) do update set generated_at = excluded.generated_at, pack = excluded.pack`;
}

export async function packDates(db: Queryable): Promise<string[]> {
  const rows = await db<{ date: string }[]>`select to_char(date, 'YYYY-MM-DD') as date from soc2_evidence_packs order by date desc`;
  return rows.map((r) => r.date);
}

export async function packOf(db: Queryable, date: string): Promise<EvidencePackRow | undefined> {
  const [row] = await db<EvidencePackRow[]>`
    select to_char(date, 'YYYY-MM-DD') as date, generated_at, pack from soc2_evidence_packs where date = ${date}`;
  return row;
}

/** Audit rows per action in [since, until) whose action starts with one of the prefixes (all when none). */
export async function actionCounts(db: Queryable, since: Date, until: Date, prefixes: readonly string[]): Promise<Record<string, number>> {
  const patterns = prefixes.map((p) => `${p}%`);
  const rows = await db<{ action: string; n: number }[]>`
    select action, count(*)::int as n from audit_events
    where created_at >= ${since} and created_at < ${until}
      ${patterns.length > 0 ? db`and action like any(${patterns}::text[])` : db``}
    group by action order by action`;
  return Object.fromEntries(rows.map((r) => [r.action, r.n]));
}

/** Users by role across tenants, super-admins, and owners/admins without an enabled second factor. */
export async function accessFacts(
  db: Queryable,
): Promise<{ users_by_role: Record<string, number>; super_admins: number; privileged_without_2fa: number; active_api_keys: number }> {
  const roles = await db<{ role: string; n: number }[]>`select role, count(*)::int as n from users group by role order by role`;
  const [facts] = await db<{ super_admins: number; privileged_without_2fa: number; active_api_keys: number }[]>`
    select
      (select count(*)::int from users where is_super_admin) as super_admins,
      (select count(*)::int from users u where u.role in ('owner', 'admin')
         and not exists (select 1 from user_totp t where t.user_id = u.id and t.enabled_at is not null)) as privileged_without_2fa,
      (select count(*)::int from api_keys where revoked_at is null) as active_api_keys`;
  return { users_by_role: Object.fromEntries(roles.map((r) => [r.role, r.n])), ...facts! };
}

export async function suppressionTotals(db: Queryable): Promise<{ suppressions: number }> {
  const [row] = await db<{ suppressions: number }[]>`select count(*)::int as suppressions from suppressions`;
  return row!;
}

/** Accounts whose sign-in is locked at `now` (login throttling). */
export async function lockedAccounts(db: Queryable, now: Date): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from login_throttles where key like 'acct:%' and locked_until > ${now}`;
  return row!.n;
}

/** A tenant's owners and admins, and how many of them have an enabled second factor. */
export async function tenantMfaCoverage(db: Queryable, tenantId: string): Promise<{ privileged: number; with_2fa: number }> {
  const [row] = await db<{ privileged: number; with_2fa: number }[]>`
    select count(*)::int as privileged,
           count(*) filter (where exists (select 1 from user_totp t where t.user_id = u.id and t.enabled_at is not null))::int as with_2fa
    from users u where u.tenant_id = ${tenantId} and u.role in ('owner', 'admin')`;
  return row!;
}

/** Failed sign-ins on a tenant's accounts whose throttle window started since `since`, and how many are locked now. */
export async function tenantFailedSignIns(db: Queryable, tenantId: string, since: Date, now: Date): Promise<{ failures: number; locked: number }> {
  const [row] = await db<{ failures: number; locked: number }[]>`
    select coalesce(sum(lt.failures), 0)::int as failures,
           count(*) filter (where lt.locked_until > ${now})::int as locked
    from login_throttles lt join users u on lt.key = 'acct:' || lower(u.email)
    where u.tenant_id = ${tenantId} and lt.window_started_at >= ${since}`;
  return row!;
}
