// An independent, plain-TypeScript reading of the segment language (what the SQL must agree with), and a generator of random definitions over the fixture.
import { DAY, NOW, PROFILE_POOLS, type Fixture, type FixtureContact, type Rand } from './fixture.js';

type Json = Record<string, unknown>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TEXT_TYPES = new Set(['text', 'longtext', 'select', 'email', 'url', 'phone']);

type Kind = 'text' | 'status' | 'number' | 'boolean' | 'date' | 'datetime';

export const PROFILE_COLUMNS = Object.keys(PROFILE_POOLS);
const COLUMNS: Record<string, Kind> = {
  email: 'text',
  ...Object.fromEntries(PROFILE_COLUMNS.map((c) => [c, 'text' as const])),
  status: 'status',
  best_send_hour: 'number',
  created_at: 'datetime',
  updated_at: 'datetime',
};

export const OPERATORS: Record<Kind, string[]> = {
  text: ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with', 'in', 'not_in', 'exists', 'not_exists'],
  status: ['eq', 'neq', 'in', 'not_in'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'exists', 'not_exists'],
  boolean: ['eq', 'neq', 'exists', 'not_exists'],
  date: [
    'on',
    'not_on',
    'before',
    'after',
    'on_or_before',
    'on_or_after',
    'within_last_days',
    'not_within_last_days',
    'within_next_days',
    'exists',
    'not_exists',
  ],
  datetime: [
    'on',
    'not_on',
    'before',
    'after',
    'on_or_before',
    'on_or_after',
    'within_last_days',
    'not_within_last_days',
    'within_next_days',
    'exists',
    'not_exists',
  ],
};

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayStart = (d: string) => Date.parse(`${d}T00:00:00.000Z`);

export function kindOf(fixture: Fixture, field: string): Kind | undefined {
  if (field.startsWith('custom_fields.')) {
    const type = fixture.catalog.find((f) => f.key === field.slice('custom_fields.'.length))?.type;
    if (!type) return undefined;
    return TEXT_TYPES.has(type) ? 'text' : (type as Kind);
  }
  return COLUMNS[field];
}

/** The contact's value of a field when it has the field's kind; undefined when it has none (missing, null, or stray). */
function fieldValueOf(contact: FixtureContact, field: string, kind: Kind): string | number | boolean | undefined {
  if (field.startsWith('custom_fields.')) {
    const v = contact.custom_fields[field.slice('custom_fields.'.length)];
    switch (kind) {
      case 'number':
        return typeof v === 'number' ? v : undefined;
      case 'boolean':
        return typeof v === 'boolean' ? v : undefined;
      case 'date':
        return typeof v === 'string' && DATE.test(v) ? v : undefined;
      case 'datetime':
        return typeof v === 'string' && INSTANT.test(v) ? Date.parse(v) : undefined;
      default:
        return typeof v === 'string' ? v : undefined;
    }
  }
  if (field === 'email') return contact.email ?? undefined;
  if (field === 'status') return contact.status;
  if (field === 'best_send_hour') return contact.best_send_hour ?? undefined;
  if (field === 'created_at') return contact.created_at.getTime();
  if (field === 'updated_at') return contact.updated_at.getTime();
  return contact.columns[field] ?? undefined;
}

function fieldMatches(fixture: Fixture, contact: FixtureContact, rule: Json): boolean {
  const field = rule['field'] as string;
  const kind = kindOf(fixture, field)!;
  const op = rule['operator'] as string;
  const negations: Record<string, string> = {
    neq: 'eq',
    not_contains: 'contains',
    not_in: 'in',
    not_exists: 'exists',
    not_on: 'on',
    not_within_last_days: 'within_last_days',
  };
  if (negations[op]) return !fieldMatches(fixture, contact, { ...rule, operator: negations[op] });
  const v = fieldValueOf(contact, field, kind);
  if (v === undefined) return false;
  const value = rule['value'];
  if (op === 'exists') return kind === 'text' ? v !== '' : true;
  switch (kind) {
    case 'text': {
      const have = (v as string).toLowerCase();
      const want = typeof value === 'string' ? value.toLowerCase() : '';
      if (op === 'eq') return have === want;
      if (op === 'contains') return have.includes(want);
      if (op === 'starts_with') return have.startsWith(want);
      if (op === 'ends_with') return have.endsWith(want);
      if (op === 'in') return (value as string[]).some((w) => w.toLowerCase() === have);
      break;
    }
    case 'status':
      return op === 'in' ? (value as string[]).includes(v as string) : v === value;
    case 'number': {
      const n = v as number;
      if (op === 'in') return (value as number[]).includes(n);
      const w = value as number;
      return { eq: n === w, gt: n > w, gte: n >= w, lt: n < w, lte: n <= w }[op as 'eq'] ?? false;
    }
    case 'boolean':
      return v === value;
    case 'date': {
      const d = v as string;
      const today = day(NOW.getTime());
      if (op === 'within_last_days') return d >= day(NOW.getTime() - (value as number) * DAY) && d <= today;
      if (op === 'within_next_days') return d >= today && d <= day(NOW.getTime() + (value as number) * DAY);
      const w = value as string;
      return { on: d === w, before: d < w, after: d > w, on_or_before: d <= w, on_or_after: d >= w }[op as 'on'];
    }
    case 'datetime': {
      const ms = v as number;
      const now = NOW.getTime();
      if (op === 'within_last_days') return ms >= now - (value as number) * DAY && ms <= now;
      if (op === 'within_next_days') return ms >= now && ms <= now + (value as number) * DAY;
      const w = value as string;
      if (DATE.test(w)) {
        const d = day(ms);
        return { on: d === w, before: d < w, after: d > w, on_or_before: d <= w, on_or_after: d >= w }[op as 'on'];
      }
      const at = Date.parse(w);
      return { before: ms < at, after: ms > at, on_or_before: ms <= at, on_or_after: ms >= at }[op as 'before'];
    }
  }
  throw new Error(`model: no meaning for ${kind} ${op}`);
}

function matches(fixture: Fixture, contact: FixtureContact, node: Json): boolean {
  if (Array.isArray(node['rules'])) {
    const rules = node['rules'] as Json[];
    return node['op'] === 'AND' ? rules.every((r) => matches(fixture, contact, r)) : rules.some((r) => matches(fixture, contact, r));
  }
  switch (node['type']) {
    case 'field':
      return fieldMatches(fixture, contact, node);
    case 'list': {
      const member = fixture.members.get(node['list_id'] as string)?.has(contact.id) ?? false;
      return node['operator'] === 'in' ? member : !member;
    }
    case 'engagement': {
      const type = node['event'] === 'opened' ? 'open' : 'click';
      const since = NOW.getTime() - (node['days'] as number) * DAY;
      const engaged = fixture.events.some(
        (e) => e.tenant_id === contact.tenant_id && e.recipient === contact.email && e.type === type && e.occurred_at.getTime() >= since,
      );
      return node['operator'] === 'within' ? engaged : !engaged;
    }
  }
  throw new Error(`model: unknown node ${JSON.stringify(node)}`);
}

function namesStatus(node: Json): boolean {
  if (Array.isArray(node['rules'])) return (node['rules'] as Json[]).some(namesStatus);
  return node['type'] === 'field' && node['field'] === 'status';
}

/** The ids of the tenant's contacts a definition selects, by the model. */
export function evaluate(fixture: Fixture, definition: Json): Set<string> {
  const withStatus = namesStatus(definition);
  return new Set(
    fixture.contacts
      .filter((c) => c.tenant_id === fixture.tenantId && c.email !== null && (withStatus || c.status !== 'deleted') && matches(fixture, c, definition))
      .map((c) => c.id),
  );
}

// ---- random definitions ----

function recase(rand: Rand, text: string): string {
  // ASCII letters only: how other letters change case depends on the database's locale.
  return [...text].map((ch) => (/[a-z]/i.test(ch) && rand.chance(0.3) ? (rand.chance(0.5) ? ch.toUpperCase() : ch.toLowerCase()) : ch)).join('');
}

function textPool(fixture: Fixture, field: string): string[] {
  const values = new Set<string>();
  for (const c of fixture.contacts.slice(0, 400)) {
    const v = fieldValueOf(c, field, 'text');
    if (typeof v === 'string' && v !== '') values.add(v);
  }
  return [...values, 'nobody-has-this', "x'; drop table contacts; --", '%', '_', '\\'];
}

function textValue(rand: Rand, fixture: Fixture, field: string, op: string): string {
  const base = rand.pick(textPool(fixture, field));
  if (op === 'contains' || op === 'not_contains' || op === 'starts_with' || op === 'ends_with') {
    if (base.length <= 1) return base;
    const from = op === 'starts_with' ? 0 : rand.int(0, base.length - 1);
    const to = op === 'ends_with' ? base.length : rand.int(from + 1, base.length);
    return recase(rand, base.slice(from, to));
  }
  return recase(rand, base);
}

function numberValue(rand: Rand, fixture: Fixture, field: string): number {
  const seen = fixture.contacts
    .slice(0, 300)
    .map((c) => fieldValueOf(c, field, 'number'))
    .filter((v): v is number => typeof v === 'number');
  return rand.chance(0.8) && seen.length > 0 ? rand.pick(seen) : rand.pick([0, 1, 12, 29.99, 30, 1e21, -3]);
}

function dateValue(rand: Rand, fixture: Fixture, field: string, kind: Kind, op: string): string | number {
  if (op.endsWith('_days')) return rand.pick([1, 7, 30, 90, 365, 400]);
  const instants = fixture.contacts
    .slice(0, 300)
    .map((c) => fieldValueOf(c, field, kind))
    .filter((v) => v !== undefined);
  const seenMs = instants.map((v) => (typeof v === 'string' ? dayStart(v) : (v as number)));
  const ms = rand.chance(0.7) && seenMs.length > 0 ? rand.pick(seenMs) : NOW.getTime() + rand.int(-500, 500) * DAY;
  const dayOnly = kind === 'date' || op === 'on' || op === 'not_on' || rand.chance(0.5);
  return dayOnly ? day(ms) : new Date(ms).toISOString();
}

/** A valid field rule for `field` with `op`, its value drawn from the fixture so that rules do match contacts. */
export function fieldRule(rand: Rand, fixture: Fixture, field: string, op: string): Json {
  const kind = kindOf(fixture, field)!;
  const rule: Json = { type: 'field', field, operator: op };
  if (op === 'exists' || op === 'not_exists') return rule;
  const one = (): unknown => {
    switch (kind) {
      case 'text':
        return textValue(rand, fixture, field, op === 'in' || op === 'not_in' ? 'eq' : op);
      case 'status':
        return rand.pick(['active', 'unsubscribed', 'deleted']);
      case 'number':
        return numberValue(rand, fixture, field);
      case 'boolean':
        return rand.chance(0.5);
      default:
        return dateValue(rand, fixture, field, kind, op);
    }
  };
  rule['value'] = op === 'in' || op === 'not_in' ? Array.from({ length: rand.int(1, 4) }, one) : one();
  return rule;
}

export function allFields(fixture: Fixture): string[] {
  return [...Object.keys(COLUMNS), ...fixture.catalog.map((f) => `custom_fields.${f.key}`)];
}

function randomLeaf(rand: Rand, fixture: Fixture): Json {
  const roll = rand.next();
  if (roll < 0.12) return { type: 'list', operator: rand.pick(['in', 'not_in']), list_id: rand.pick(fixture.lists) };
  if (roll < 0.25)
    return { type: 'engagement', event: rand.pick(['opened', 'clicked']), operator: rand.pick(['within', 'not_within']), days: rand.pick([1, 7, 30, 90, 365]) };
  const field = rand.pick(allFields(fixture));
  return fieldRule(rand, fixture, field, rand.pick(OPERATORS[kindOf(fixture, field)!]));
}

/** A random definition: nested groups up to `depth` levels, a few rules each. */
export function randomDefinition(rand: Rand, fixture: Fixture, depth = rand.int(1, 5)): Json {
  const count = rand.int(1, 4);
  const rules = Array.from({ length: count }, () => (depth > 1 && rand.chance(0.35) ? randomDefinition(rand, fixture, depth - 1) : randomLeaf(rand, fixture)));
  return { op: rand.pick(['AND', 'OR']), rules };
}
