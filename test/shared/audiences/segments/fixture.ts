// A generated audience for segment tests: contacts with varied columns, custom values of every type (missing, stray, wrong-typed), lists and engagement events.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Sql } from '../../../../shared/db/connection.js';
import type { FieldType } from '../../../../shared/audiences/custom-fields/values.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

export const DAY = 86_400_000;
/** The fixed "now" of every evaluation. */
export const NOW = new Date('2026-03-15T12:34:56.789Z');

export interface FixtureContact {
  id: string;
  tenant_id: string;
  email: string | null;
  status: 'active' | 'unsubscribed' | 'deleted';
  columns: Record<string, string | null>;
  best_send_hour: number | null;
  created_at: Date;
  updated_at: Date;
  custom_fields: Record<string, unknown>;
}

export interface FixtureEvent {
  tenant_id: string;
  type: 'open' | 'click' | 'delivered';
  recipient: string;
  occurred_at: Date;
}

export interface Fixture {
  tenantId: string;
  otherTenantId: string;
  catalog: { key: string; type: FieldType; options: string[] | null }[];
  contacts: FixtureContact[];
  /** The tenant's lists (the last one is empty) and the other tenant's list. */
  lists: string[];
  otherList: string;
  members: Map<string, Set<string>>;
  events: FixtureEvent[];
}

/** A small seeded generator, so a failing case can be replayed. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}
export type Rand = ReturnType<typeof prng>;

export const CATALOG: Fixture['catalog'] = [
  { key: 'plan', type: 'select', options: ['free', 'pro', 'enterprise'] },
  { key: 'industry', type: 'text', options: null },
  { key: 'bio', type: 'longtext', options: null },
  { key: 'website', type: 'url', options: null },
  { key: 'work_email', type: 'email', options: null },
  { key: 'mobile', type: 'phone', options: null },
  { key: 'age', type: 'number', options: null },
  { key: 'score', type: 'number', options: null },
  { key: 'vip', type: 'boolean', options: null },
  { key: 'birthday', type: 'date', options: null },
  { key: 'last_order_at', type: 'datetime', options: null },
];

const TEXT_POOLS: Record<string, readonly (string | null)[]> = {
  first_name: ['Ann', 'ann', 'ANN', 'Annabel', 'Bob', 'bob', 'Cara', 'Zoë', '', null],
  last_name: ['Smith', 'smith', "O'Brien", 'Müller', "Robert'); DROP TABLE contacts;--", null],
  phone: ['+1 555 0100', '+44 20 7946 0000', null],
  company: ['Acme', 'ACME Corp', 'acme corp', 'Globex', '100% Pure_Organic\\', 'Initech', '', null],
  city: ['Paris', 'paris', 'Berlin', 'New York', 'Sao Paulo', null],
  state: ['CA', 'ca', 'NY', null],
  country: ['US', 'us', 'GB', 'gb', 'DE', 'De', 'FR', null],
  postal_code: ['75001', '10115', 'SW1A 1AA', null],
  title: ['CEO', 'Engineer', 'engineer', 'VP Sales', null],
  timezone: ['Europe/Paris', 'America/New_York', 'UTC', null],
  mobile_phone: ['+33 6 12 34 56 78', null],
  email_format: ['html', 'HTML', 'text', null],
  confirmed_status: ['confirmed', 'pending', null],
  mobile_status: ['opted_in', 'opted_out', null],
  crm_id: ['CRM-1', 'crm-2', 'CRM-10', null],
  crm_contact_id: ['C-100', 'c-200', null],
  crm_lead_id: ['L-1', 'l-1', 'L-2', null],
};
export const PROFILE_POOLS = TEXT_POOLS;

const CUSTOM_POOLS: Record<string, readonly unknown[]> = {
  plan: ['free', 'pro', 'enterprise', 'Pro', 5, true],
  industry: ['Retail', 'retail', 'Software', 'Finance', '', 42, { a: 1 }, ['x']],
  bio: ['Loves email\nand lists', 'Writes code', 'likes 50% off_sales', ''],
  website: ['https://acme.test/', 'http://example.com/path?q=1', 7],
  work_email: ['ann@acme.test', 'bob@globex.test', false],
  mobile: ['+1 (555) 010-9999', '+44 7700 900000'],
  age: [18, 25, 30, 30.5, 42, 64, 80, 0, -1, '42', true, null, [30], { n: 30 }],
  score: [0.1, 2.5, 1000, -7.25, 99.99, 1e21, 'high'],
  vip: [true, false, true, 'true', 1, [true]],
  last_order_at: ['2026-01-01T00:00:00Z', '2026-01-01', 12345],
  birthday: ['2024-02-30', '2024/01/01', 20240101, '2024-01-01T00:00:00.000Z'],
  legacy: ['old', 3, false],
};

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A value for a custom key: usually well typed, sometimes a stray of another type. */
function customValue(rand: Rand, key: string): unknown {
  const pool = CUSTOM_POOLS[key] ?? [];
  if (key === 'birthday' && rand.chance(0.85)) return dayOf(NOW.getTime() + rand.int(-420, 420) * DAY);
  if (key === 'last_order_at' && rand.chance(0.85)) {
    // Some exactly at midnight UTC, the edge of day comparisons.
    const ms = NOW.getTime() + rand.int(-420, 420) * DAY + (rand.chance(0.2) ? 0 : rand.int(0, DAY - 1));
    return new Date(rand.chance(0.2) ? Math.floor(ms / DAY) * DAY : ms).toISOString();
  }
  return rand.pick(pool);
}

function contactRow(rand: Rand, tenantId: string, _index: number, email: string | null): FixtureContact {
  const columns: Record<string, string | null> = {};
  for (const [column, pool] of Object.entries(TEXT_POOLS)) columns[column] = rand.pick(pool);
  const custom: Record<string, unknown> = {};
  for (const key of Object.keys(CUSTOM_POOLS)) if (rand.chance(0.7)) custom[key] = customValue(rand, key);
  const createdMs = NOW.getTime() - rand.int(0, 800) * DAY - (rand.chance(0.1) ? 0 : rand.int(0, DAY - 1));
  const created = new Date(rand.chance(0.1) ? Math.floor(createdMs / DAY) * DAY : createdMs);
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    email,
    status: rand.pick(['active', 'active', 'active', 'active', 'unsubscribed', 'deleted'] as const),
    columns,
    best_send_hour: rand.chance(0.4) ? null : rand.int(0, 23),
    created_at: created,
    updated_at: new Date(created.getTime() + rand.int(0, 200) * DAY + rand.int(0, 1000)),
    custom_fields: custom,
  };
}

async function insertContacts(sql: Sql, contacts: FixtureContact[]): Promise<void> {
  const rows = contacts.map((c) => ({
    id: c.id,
    tenant_id: c.tenant_id,
    email: c.email,
    // The trigger sets the hash from the address; an erased contact keeps some hash of its own.
    email_hash: randomBytes(32),
    status: c.status,
    ...c.columns,
    best_send_hour: c.best_send_hour,
    custom_fields: sql.json(c.custom_fields as never),
    erased_at: c.email === null ? NOW : null,
    created_at: c.created_at,
    updated_at: c.updated_at,
  }));
  for (let i = 0; i < rows.length; i += 500) await sql`insert into contacts ${sql(rows.slice(i, i + 500))}`;
}

/** Inserts the generated audience of two tenants and returns what was inserted. */
export async function buildFixture(sql: Sql, seed: number, size: number): Promise<Fixture> {
  const rand = prng(seed);
  const tenantId = await insertTenant(sql);
  const otherTenantId = await insertTenant(sql);
  for (const [i, f] of CATALOG.entries()) {
    await sql`
      insert into contact_custom_fields (tenant_id, key, label, type, options, position, created_at, updated_at)
      values (${tenantId}, ${f.key}, ${f.key}, ${f.type}, ${f.options}, ${i}, ${NOW}, ${NOW})`;
  }
  const domains = ['example.com', 'mail.test', 'acme.io'];
  const contacts: FixtureContact[] = [];
  for (let i = 0; i < size; i++) {
    // A few erased contacts: no address left.
    const email = rand.chance(0.02) ? null : `user${i}_${rand.int(0, 9)}@${rand.pick(domains)}`;
    contacts.push(contactRow(rand, tenantId, i, email));
  }
  // The other tenant holds some of the same addresses, so only a tenant's own rows and events may count.
  const others = contacts.filter((c) => c.email && rand.chance(0.1)).map((c, i) => contactRow(rand, otherTenantId, i, c.email));
  await insertContacts(sql, [...contacts, ...others]);

  const lists: string[] = [];
  const members = new Map<string, Set<string>>();
  const addList = async (owner: string, name: string, pool: FixtureContact[], share: number) => {
    const [row] = await sql<
      { id: string }[]
    >`insert into lists (tenant_id, name, created_at, updated_at) values (${owner}, ${name}, ${NOW}, ${NOW}) returning id`;
    const chosen = pool.filter(() => rand.chance(share));
    const rows = chosen.map((c) => ({ list_id: row!.id, contact_id: c.id, tenant_id: owner, added_at: NOW }));
    for (let i = 0; i < rows.length; i += 1000) await sql`insert into list_members ${sql(rows.slice(i, i + 1000))}`;
    members.set(row!.id, new Set(chosen.map((c) => c.id)));
    return row!.id;
  };
  lists.push(await addList(tenantId, 'Newsletter', contacts, 0.3));
  lists.push(await addList(tenantId, 'Customers', contacts, 0.1));
  lists.push(await addList(tenantId, 'Empty', contacts, 0));
  const otherList = await addList(otherTenantId, 'Theirs', others, 0.5);

  const events: FixtureEvent[] = [];
  const addEvents = (tenant: string, pool: FixtureContact[], share: number) => {
    for (const c of pool) {
      if (!c.email || !rand.chance(share)) continue;
      for (let k = rand.int(1, 4); k > 0; k--) {
        const ageMs = rand.int(0, 120) * DAY + rand.int(0, DAY - 1);
        events.push({
          tenant_id: tenant,
          type: rand.pick(['open', 'open', 'click', 'delivered'] as const),
          recipient: c.email,
          occurred_at: new Date(NOW.getTime() - ageMs),
        });
      }
    }
  };
  addEvents(tenantId, contacts, 0.6);
  addEvents(otherTenantId, others, 0.9);
  const eventRows = events.map((e) => ({ id: randomUUID(), ...e }));
  for (let i = 0; i < eventRows.length; i += 1000) await sql`insert into events ${sql(eventRows.slice(i, i + 1000))}`;
  await sql`analyze contacts`;
  await sql`analyze events`;
  return { tenantId, otherTenantId, catalog: CATALOG, contacts, lists, otherList, members, events };
}
