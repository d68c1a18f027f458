// Fixtures for the list tests: an app whose bulk bucket does not throttle, lists created through the API, contacts inserted in SQL, and the member counter
// beside the real row count.
import type { Sql } from '../../shared/db/connection.js';
import { buildTestApp, call, type TestApp, type TestLike } from './app.js';

const BULK_ENV = { MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__BULK: '100000' };
export const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** A test app in which the batch routes (the bulk bucket, 20 a minute) are not rate limited. */
export async function listsApp(t: TestLike): Promise<TestApp> {
  return buildTestApp(t, { env: BULK_ENV });
}

export async function addList(s: TestApp, token: string, body: Record<string, unknown> = { name: 'Newsletter' }) {
  const res = await call(s.app, 'POST', '/lists', { token, body });
  if (res.status !== 201) throw new Error(`create list: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Contacts inserted directly (email_hash is set by the trigger); returns their ids in the order of the addresses. */
export async function insertContacts(sql: Sql, tenantId: string, emails: string[], extra: { status?: string; first?: string } = {}): Promise<string[]> {
  const rows = await sql<{ id: string; email: string }[]>`
    insert into contacts (tenant_id, email, first_name, last_name, status, created_at, updated_at)
    select ${tenantId}, e, ${extra.first ?? null}, 'Doe', ${extra.status ?? 'active'}, now(), now() from unnest(${emails}::text[]) as e
    returning id, email`;
  const byEmail = new Map(rows.map((r) => [r.email, r.id]));
  return emails.map((e) => byEmail.get(e)!);
}

export const addresses = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.test`);

/** The list's stored member_count and its real number of list_members rows, to compare. */
export async function memberCount(sql: Sql, listId: string): Promise<{ stored: number; real: number }> {
  const [row] = await sql<{ stored: number; real: number }[]>`
    select (select member_count::int from lists where id = ${listId}) as stored,
           (select count(*)::int from list_members where list_id = ${listId}) as real`;
  return row!;
}
