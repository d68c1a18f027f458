// SQL of license keys and their signing keys.
import type { Queryable } from '../../db/connection.js';

export interface SigningKeyRow {
  kid: string;
  public_jwk: { kty: string; crv: string; x: string };
  private_key_sealed: Buffer;
  created_at: Date;
}

export interface LicenseKeyRow {
  id: string;
  key: string;
  plan_id: string;
  tenant_id: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  signing_kid: string;
  created_by_user_id: string | null;
  created_at: Date;
}

/** Arbitrary constant naming the signing-key creation lock among advisory locks. */
const SIGNING_KEY_LOCK = 74_615_072;

/** Serializes the creation of the first signing key until the end of `tx`. */
export async function lockSigningKeyCreation(tx: Queryable): Promise<void> {
  await tx`select pg_advisory_xact_lock(${SIGNING_KEY_LOCK})`;
}

export async function newestSigningKey(db: Queryable): Promise<SigningKeyRow | undefined> {
  const [row] = await db<SigningKeyRow[]>`select * from license_signing_keys order by created_at desc, kid limit 1`;
  return row;
}

export async function signingKeyByKid(db: Queryable, kid: string): Promise<SigningKeyRow | undefined> {
  const [row] = await db<SigningKeyRow[]>`select * from license_signing_keys where kid = ${kid}`;
  return row;
}

export async function insertSigningKey(db: Queryable, key: Pick<SigningKeyRow, 'kid' | 'public_jwk' | 'private_key_sealed'>): Promise<SigningKeyRow> {
  const [row] = await db<SigningKeyRow[]>`
    insert into license_signing_keys (kid, public_jwk, private_key_sealed)
    values (${key.kid}, ${db.json(key.public_jwk)}, ${key.private_key_sealed})
    returning *`;
  return row!;
}

export async function insertLicenseKey(
  db: Queryable,
  row: Pick<LicenseKeyRow, 'id' | 'key' | 'plan_id' | 'tenant_id' | 'expires_at' | 'signing_kid' | 'created_by_user_id' | 'created_at'>,
): Promise<LicenseKeyRow> {
  const [inserted] = await db<LicenseKeyRow[]>`
    insert into license_keys (id, key, plan_id, tenant_id, expires_at, signing_kid, created_by_user_id, created_at)
    values (${row.id}, ${row.key}, ${row.plan_id}, ${row.tenant_id}, ${row.expires_at}, ${row.signing_kid}, ${row.created_by_user_id}, ${row.created_at})
    returning *`;
  return inserted!;
}

export async function listLicenseKeys(
  db: Queryable,
  page: { limit: number; offset: number },
  filter: { tenantId?: string | undefined } = {},
): Promise<{ items: LicenseKeyRow[]; total: number }> {
  const where = filter.tenantId ? db`where tenant_id = ${filter.tenantId}` : db``;
  const items = await db<LicenseKeyRow[]>`
    select * from license_keys ${where} order by created_at desc, id desc limit ${page.limit} offset ${page.offset}`;
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from license_keys ${where}`;
  return { items, total: count!.n };
}

export async function findLicenseKeyById(db: Queryable, id: string): Promise<LicenseKeyRow | undefined> {
  const [row] = await db<LicenseKeyRow[]>`select * from license_keys where id = ${id}`;
  return row;
}

/** By id or by the key itself, locked for the revocation that follows. */
export async function lockLicenseKey(db: Queryable, ref: { id: string } | { key: string }): Promise<LicenseKeyRow | undefined> {
  const [row] =
    'id' in ref
      ? await db<LicenseKeyRow[]>`select * from license_keys where id = ${ref.id} for update`
      : await db<LicenseKeyRow[]>`select * from license_keys where key = ${ref.key} for update`;
  return row;
}

export async function markRevoked(db: Queryable, id: string, at: Date): Promise<void> {
  await db`update license_keys set revoked_at = ${at} where id = ${id} and revoked_at is null`;
}

export async function planExists(db: Queryable, planId: string): Promise<boolean> {
  const [row] = await db`select 1 from plans where id = ${planId}`;
  return row !== undefined;
}
