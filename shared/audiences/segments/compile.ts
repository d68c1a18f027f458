// Turns a checked segment definition into one parameterised query over `contacts c` (joins and a WHERE clause as postgres.js fragments; no SQL is built from
// strings).
import type postgres from 'postgres';
import type { Queryable } from '../../db/connection.js';
import type { EngagementNode, FieldNode, GroupNode, ListNode, SegmentNode } from './definition.js';
import { NEGATIONS, type FieldOperator } from './fields.js';

export type Fragment = postgres.PendingQuery<postgres.Row[]>;

export interface CompileContext {
  tenantId: string;
  /** "Now" for relative dates and engagement windows (the injectable clock's). */
  now: Date;
}

const DAY_MS = 86_400_000;
const DATE_SHAPE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
/** The stored form of a custom datetime (Date.toISOString): fixed width, so it orders as text. */
const INSTANT_SHAPE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$';

/** LIKE treats %, _ and \ specially: a value means the characters themselves. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function dayString(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function addDays(day: string, days: number): string {
  return dayString(new Date(Date.parse(`${day}T00:00:00.000Z`) + days * DAY_MS));
}

/**
 * What a field rule compares, and the guard that its custom value has the field's type. The comparison is
 * written first and the guard second, so the guard runs only for candidates (AND stops at the first false),
 * and no value is ever cast: text is read with ->>, numbers compare as JSON numbers (jsonb ordering is
 * numeric between numbers), dates as fixed-width text. A stray value of another type — a key reused after
 * its field was deleted — fails the guard: it never raises an error, it just does not match.
 */
interface Operand {
  /** The value as compared: text, jsonb (numbers, booleans) or timestamptz (created_at, updated_at). */
  x: Fragment;
  /** Whether the contact's value has the field's type; absent for columns (their type is the column's). */
  guard?: Fragment;
}

function operand(sql: Queryable, node: FieldNode): Operand {
  if ('column' in node.target) {
    const column = sql`c.${sql(node.target.column)}`;
    return { x: node.valueKind === 'number' ? sql`(${column})::numeric` : column };
  }
  const key = node.target.customKey;
  const json = sql`(c.custom_fields -> ${key}::text)`;
  const text = sql`(c.custom_fields ->> ${key}::text)`;
  switch (node.valueKind) {
    case 'number':
      return { x: json, guard: sql`jsonb_typeof(${json}) = 'number'` };
    case 'boolean':
      return { x: json, guard: sql`jsonb_typeof(${json}) = 'boolean'` };
    // ->> of a number, boolean, object or array never has a date's shape: the shape is the whole guard.
    case 'date':
      return { x: sql`${text} collate "C"`, guard: sql`${text} ~ ${DATE_SHAPE}::text` };
    case 'datetime':
      return { x: sql`${text} collate "C"`, guard: sql`${text} ~ ${INSTANT_SHAPE}::text` };
    default:
      return { x: text, guard: sql`jsonb_typeof(${json}) = 'string'` };
  }
}

type Positive = Exclude<FieldOperator, keyof typeof NEGATIONS>;

/** Bounds of a date or datetime comparison: [from, to) or [from, to], in the compared value's own representation. */
interface Range {
  from?: { at: string; inclusive: boolean };
  to?: { at: string; inclusive: boolean };
}

/**
 * The range a date operator selects. Days are YYYY-MM-DD; for a datetime field a day means that whole UTC day
 * and an instant is an ISO UTC string, so both kinds reduce to comparisons of fixed-width text (or timestamps).
 */
function dateRange(node: FieldNode, operator: Positive, now: Date): Range {
  const instants = node.valueKind === 'datetime';
  const startOf = (day: string) => (instants ? `${day}T00:00:00.000Z` : day);
  const nextStart = (day: string) => startOf(addDays(day, 1));
  if (operator === 'within_last_days' || operator === 'within_next_days') {
    const days = node.value as number;
    const shift = operator === 'within_last_days' ? -days : days;
    const here = instants ? now.toISOString() : dayString(now);
    const there = instants ? new Date(now.getTime() + shift * DAY_MS).toISOString() : addDays(dayString(now), shift);
    const [from, to] = shift < 0 ? [there, here] : [here, there];
    return { from: { at: from, inclusive: true }, to: { at: to, inclusive: true } };
  }
  const value = node.value as string;
  const isDay = value.length === 10;
  switch (operator) {
    case 'on':
      return instants
        ? { from: { at: startOf(value), inclusive: true }, to: { at: nextStart(value), inclusive: false } }
        : { from: { at: value, inclusive: true }, to: { at: value, inclusive: true } };
    case 'before':
      return { to: { at: isDay ? startOf(value) : value, inclusive: false } };
    case 'on_or_before':
      return isDay && instants ? { to: { at: nextStart(value), inclusive: false } } : { to: { at: value, inclusive: true } };
    case 'after':
      return isDay && instants ? { from: { at: nextStart(value), inclusive: true } } : { from: { at: value, inclusive: false } };
    case 'on_or_after':
      return { from: { at: isDay ? startOf(value) : value, inclusive: true } };
    default:
      throw new Error(`not a date operator: ${operator}`);
  }
}

function rangeCondition(sql: Queryable, x: Fragment, range: Range, asTimestamp: boolean): Fragment {
  const bound = (at: string) => (asTimestamp ? sql`${new Date(at)}::timestamptz` : sql`${at}::text`);
  const parts: Fragment[] = [];
  if (range.from) parts.push(range.from.inclusive ? sql`${x} >= ${bound(range.from.at)}` : sql`${x} > ${bound(range.from.at)}`);
  if (range.to) parts.push(range.to.inclusive ? sql`${x} <= ${bound(range.to.at)}` : sql`${x} < ${bound(range.to.at)}`);
  return parts.reduce((a, b) => sql`${a} and ${b}`);
}

/** The positive form of a field rule, and whether it is total (never NULL; otherwise NULL for a missing value, and callers coalesce). */
function positiveField(sql: Queryable, node: FieldNode, operator: Positive, now: Date): { condition: Fragment; total: boolean } {
  const { x, guard } = operand(sql, node);
  const customKey = 'customKey' in node.target ? node.target.customKey : undefined;
  const custom = customKey !== undefined;
  const guarded = (compare: Fragment) => ({ condition: guard ? sql`${compare} and ${guard}` : compare, total: false });
  if (operator === 'exists') {
    if (node.valueKind === 'text') return guarded(sql`${x} <> ''`);
    return guard ? { condition: guard, total: false } : { condition: sql`${x} is not null`, total: true };
  }
  const value = node.value;
  switch (node.valueKind) {
    case 'text': {
      const like = (pattern: string) => guarded(sql`lower(${x}) like lower(${pattern}::text)`);
      switch (operator) {
        case 'eq':
          return guarded(sql`lower(${x}) = lower(${value as string}::text)`);
        case 'contains':
          return like(`%${likeEscape(value as string)}%`);
        case 'starts_with':
          return like(`${likeEscape(value as string)}%`);
        case 'ends_with':
          return like(`%${likeEscape(value as string)}`);
        case 'in':
          return guarded(sql`lower(${x}) = any(array(select lower(v) from unnest(${sql.array(value as string[])}::text[]) as v))`);
      }
      break;
    }
    case 'status':
      return { condition: operator === 'in' ? sql`${x} = any(${sql.array(value as string[])}::text[])` : sql`${x} = ${value as string}::text`, total: true };
    case 'number': {
      // A custom number is compared as jsonb (numeric between numbers, no cast); best_send_hour as numeric.
      const one = (n: number) => (custom ? sql`${JSON.stringify(n)}::jsonb` : sql`${String(n)}::numeric`);
      if (operator === 'in') {
        const list = sql.array((value as number[]).map((n) => JSON.stringify(n)));
        return guarded(custom ? sql`${x} = any(${list}::text[]::jsonb[])` : sql`${x} = any(${list}::text[]::numeric[])`);
      }
      // Containment means the same (a JSON number equal to the value) and is what a GIN index on custom_fields serves.
      if (operator === 'eq' && custom) return { condition: sql`c.custom_fields @> ${sql.json({ [customKey]: value as number })}`, total: true };
      const n = one(value as number);
      const compare = { eq: sql`${x} = ${n}`, gt: sql`${x} > ${n}`, gte: sql`${x} >= ${n}`, lt: sql`${x} < ${n}`, lte: sql`${x} <= ${n}` };
      if (operator in compare) return guarded(compare[operator as keyof typeof compare]);
      break;
    }
    case 'boolean':
      if (operator === 'eq' && custom) return { condition: sql`c.custom_fields @> ${sql.json({ [customKey]: value as boolean })}`, total: true };
      break;
    case 'date':
    case 'datetime': {
      const range = rangeCondition(sql, x, dateRange(node, operator, now), !custom);
      return custom ? guarded(range) : { condition: range, total: true };
    }
  }
  throw new Error(`operator ${operator} has no SQL for a ${node.valueKind} field`);
}

/** A field rule as a condition that is never NULL: a negation matches exactly the contacts its positive form does not. */
function fieldCondition(sql: Queryable, node: FieldNode, now: Date): Fragment {
  const negated = node.operator in NEGATIONS;
  const positive = (negated ? NEGATIONS[node.operator as keyof typeof NEGATIONS] : node.operator) as Positive;
  const { condition: expression, total } = positiveField(sql, node, positive, now);
  // Left bare when it cannot be NULL (an index can serve a bare containment, not one inside coalesce).
  const condition = total ? sql`(${expression})` : sql`coalesce(${expression}, false)`;
  return negated ? sql`not ${condition}` : condition;
}

/**
 * List and engagement rules read other tables. Reached from the root through ANDs only, a rule is an EXISTS
 * (NOT EXISTS), which PostgreSQL runs as a semi (anti) join: parallel, no de-duplication. Under an OR it could
 * only be a subplan — hashed while the set fits in memory, otherwise probed once per contact — so there it is a
 * LEFT JOIN to the de-duplicated set instead (one per distinct list or (event, days)), a hash join whatever
 * the set's size, and the rule is "the joined row exists". Aliases are generated (j0, j1, …), never taken
 * from the request.
 */
class Joins {
  private readonly byKey = new Map<string, { alias: string; join: Fragment }>();
  constructor(private readonly sql: Queryable) {}

  /** The alias of the join for `key`, adding it with `make` the first time. */
  alias(key: string, make: (alias: Fragment) => Fragment): Fragment {
    let entry = this.byKey.get(key);
    if (!entry) {
      const alias = `j${this.byKey.size}`;
      entry = { alias, join: make(this.sql`${this.sql(alias)}`) };
      this.byKey.set(key, entry);
    }
    return this.sql`${this.sql(entry.alias)}`;
  }

  fragment(): Fragment {
    return [...this.byKey.values()].reduce((all, { join }) => this.sql`${all} ${join}`, this.sql``);
  }
}

interface Scope {
  ctx: CompileContext;
  joins: Joins;
  /** Reached from the root through AND groups only: the condition is one of the WHERE clause's conjuncts. */
  conjunct: boolean;
}

/** Engagement: the contact's address received an open (or click) event of the tenant within the last N days. */
function engagementCondition(sql: Queryable, node: EngagementNode, scope: Scope): Fragment {
  const { ctx } = scope;
  const since = new Date(ctx.now.getTime() - node.days * DAY_MS);
  // Literals, not parameters, so the planner can match the partial indexes on open and click events.
  const type = node.event === 'opened' ? sql`'open'` : sql`'click'`;
  const events = sql`events e where e.tenant_id = ${ctx.tenantId}::uuid and e.type = ${type} and e.occurred_at >= ${since}::timestamptz`;
  if (scope.conjunct) {
    const found = sql`exists (select 1 from ${events} and e.recipient = c.email)`;
    return node.operator === 'within' ? found : sql`not ${found}`;
  }
  const alias = scope.joins.alias(
    `engagement:${node.event}:${node.days}`,
    (j) => sql`
    left join (select distinct e.recipient from ${events}) ${j} on ${j}.recipient = c.email`,
  );
  return node.operator === 'within' ? sql`(${alias}.recipient is not null)` : sql`(${alias}.recipient is null)`;
}

function listCondition(sql: Queryable, node: ListNode, scope: Scope): Fragment {
  const tenantId = scope.ctx.tenantId;
  if (scope.conjunct) {
    const member = sql`exists (
      select 1 from list_members m where m.list_id = ${node.listId}::uuid and m.contact_id = c.id and m.tenant_id = ${tenantId}::uuid)`;
    return node.operator === 'in' ? member : sql`not ${member}`;
  }
  // (list_id, contact_id) is the primary key: at most one row per contact.
  const alias = scope.joins.alias(
    `list:${node.listId}`,
    (j) => sql`
    left join list_members ${j} on ${j}.list_id = ${node.listId}::uuid and ${j}.contact_id = c.id and ${j}.tenant_id = ${tenantId}::uuid`,
  );
  return node.operator === 'in' ? sql`(${alias}.contact_id is not null)` : sql`(${alias}.contact_id is null)`;
}

function nodeCondition(sql: Queryable, node: SegmentNode, scope: Scope): Fragment {
  switch (node.kind) {
    case 'group': {
      const inner: Scope = { ...scope, conjunct: scope.conjunct && node.op === 'AND' };
      const parts = node.rules.map((rule) => nodeCondition(sql, rule, inner));
      const joined = parts.reduce((a, b) => (node.op === 'AND' ? sql`${a} and ${b}` : sql`${a} or ${b}`));
      return sql`(${joined})`;
    }
    case 'field':
      return fieldCondition(sql, node, scope.ctx.now);
    case 'list':
      return listCondition(sql, node, scope);
    case 'engagement':
      return engagementCondition(sql, node, scope);
    case 'stale':
      return sql`false`;
  }
}

/** `from contacts c <joins> where <condition>`, split so a query can put its own select list, order and limit around it. */
export interface CompiledSegment {
  joins: Fragment;
  where: Fragment;
}

/**
 * The contacts a definition selects: the tenant's, never erased ones (no address left), not deleted ones unless
 * a rule names `status` (then the rules decide), and the definition's condition.
 */
export function compileSegment(sql: Queryable, definition: GroupNode, options: CompileContext & { namesStatus: boolean }): CompiledSegment {
  const joins = new Joins(sql);
  const condition = nodeCondition(sql, definition, { ctx: options, joins, conjunct: true });
  const status = options.namesStatus ? sql`` : sql`and c.status <> 'deleted'`;
  return { joins: joins.fragment(), where: sql`c.tenant_id = ${options.tenantId}::uuid and c.email is not null ${status} and ${condition}` };
}
