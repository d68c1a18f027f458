// Campaign stats as tenants read them: one campaign's counters, rates, countries and hourly trend, many campaigns at once (stats-batch), and the click heat
// map; all from kept counters, never a recount of events.
import type { Queryable } from '../db/connection.js';
import { AppError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { requireCampaign } from './service.js';
import {
  countryCounters,
  hourlyCounters,
  tenantCampaignCounters,
  topLinks,
  variantCounters,
  ZERO_COUNTERS,
  type CountryRow,
  type HourRow,
  type StatCounters,
} from './stats-queries.js';

/** The spec's limits: stats-batch takes 1..500 ids; the heat map shows the top 100 URLs; the trend covers 72 hours. */
export const STATS_BATCH_MAX = 500;
export const HEATMAP_URLS = 100;
export const TREND_HOURS = 72;
/** Countries listed in stats (most opens first). */
export const MAX_COUNTRIES = 250;

const HOUR_MS = 3_600_000;

/** n / d rounded to 4 places; 0 when there is no denominator yet. */
export function ratio(n: number, d: number): number {
  return d > 0 ? Math.round((n / d) * 10_000) / 10_000 : 0;
}

/**
 * The rates, as fractions (0.2534 is 25.34 %): opens, clicks and unsubscribes over delivered messages, clicks over
 * opens (click-to-open), bounces over sent messages. The human_* rates leave machine opens and scanner clicks out.
 */
export function ratesOf(c: StatCounters) {
  const bounces = c.hard_bounces + c.soft_bounces;
  return {
    open_rate: ratio(c.unique_opens, c.delivered),
    click_rate: ratio(c.unique_clicks, c.delivered),
    click_to_open_rate: ratio(c.unique_clicks, c.unique_opens),
    bounce_rate: ratio(bounces, c.sent),
    unsubscribe_rate: ratio(c.unsubscribes, c.delivered),
    complaint_rate: ratio(c.complaints, c.delivered),
    human_open_rate: ratio(c.unique_human_opens, c.delivered),
    human_click_rate: ratio(c.unique_human_clicks, c.delivered),
    human_click_to_open_rate: ratio(c.unique_human_clicks, c.unique_human_opens),
  };
}

/** The counters as stats show them (bounces = hard + soft). */
export function countsOf(c: StatCounters) {
  return {
    sent: c.sent,
    delivered: c.delivered,
    deferred: c.deferred,
    failed: c.failed,
    unique_opens: c.unique_opens,
    unique_human_opens: c.unique_human_opens,
    total_opens: c.total_opens,
    unique_clicks: c.unique_clicks,
    unique_human_clicks: c.unique_human_clicks,
    total_clicks: c.total_clicks,
    unsubscribes: c.unsubscribes,
    bounces: c.hard_bounces + c.soft_bounces,
    hard_bounces: c.hard_bounces,
    soft_bounces: c.soft_bounces,
    complaints: c.complaints,
  };
}

export function sumCounters(rows: Iterable<StatCounters>): StatCounters {
  const total = { ...ZERO_COUNTERS };
  for (const row of rows) for (const key of Object.keys(total) as (keyof StatCounters)[]) total[key] += row[key];
  return total;
}

export interface CountryStats extends Omit<CountryRow, 'country'> {
  /** The contacts' country field as stored; null for contacts without one. */
  country: string | null;
}

export interface HourStats extends Omit<HourRow, 'hour'> {
  hour: Date;
}

export interface CampaignStats extends ReturnType<typeof countsOf>, ReturnType<typeof ratesOf> {
  campaign_id: string;
  campaign_name: string;
  status: string;
  countries: CountryStats[];
  hourly_trend: HourStats[];
}

/** The 72 hours up to and including the current one, oldest first, each present (zeros where nothing happened). */
export function trendOf(rows: readonly HourRow[], now: Date): HourStats[] {
  const last = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const byHour = new Map(rows.map((r) => [r.hour.getTime(), r]));
  const out: HourStats[] = [];
  for (let i = TREND_HOURS - 1; i >= 0; i--) {
    const at = last - i * HOUR_MS;
    const row = byHour.get(at);
    out.push({
      hour: new Date(at),
      delivered: row?.delivered ?? 0,
      opens: row?.opens ?? 0,
      clicks: row?.clicks ?? 0,
      unsubscribes: row?.unsubscribes ?? 0,
      bounces: row?.bounces ?? 0,
      complaints: row?.complaints ?? 0,
    });
  }
  return out;
}

/** GET /campaigns/{id}/stats: the tenant's campaign (404 otherwise) with every counter, rate, country and the trend. */
export async function campaignStats(db: Queryable, tenantId: string, id: string, now: Date): Promise<CampaignStats> {
  const row = await requireCampaign(db, tenantId, id);
  const since = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - (TREND_HOURS - 1) * HOUR_MS);
  const [variants, countries, hours] = await Promise.all([
    variantCounters(db, row.id),
    countryCounters(db, row.id, MAX_COUNTRIES),
    hourlyCounters(db, row.id, since),
  ]);
  const total = sumCounters(variants.values());
  return {
    campaign_id: row.id,
    campaign_name: row.name,
    status: row.status,
    ...countsOf(total),
    ...ratesOf(total),
    countries: countries.map((c) => ({ ...c, country: c.country === '' ? null : c.country })),
    hourly_trend: trendOf(hours, now),
  };
}

/** ?ids= of stats-batch: comma-separated campaign ids, 1..500 (after removing repeats); anything else is 400 bad_request. */
export function parseBatchIds(raw: string | undefined): string[] {
  const bad = (why: string) => new AppError('bad_request', `ids: ${why}`);
  if (raw === undefined || raw.trim() === '') throw bad('required: 1 to 500 comma-separated campaign ids');
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length > STATS_BATCH_MAX) throw bad(`at most ${STATS_BATCH_MAX} ids`);
  const ids = new Set<string>();
  for (const part of parts) {
    if (part === '') throw bad('an empty id (two commas in a row, or a trailing comma)');
    if (!isUuid(part)) throw bad(`"${part.slice(0, 64)}" is not a campaign id`);
    ids.add(part.toLowerCase());
  }
  return [...ids];
}

export type BatchItem = { campaign_id: string; campaign_name: string; status: string } & ReturnType<typeof countsOf> & ReturnType<typeof ratesOf>;

/** GET /campaigns/stats-batch: the tenant's campaigns among `ids` (unknown and other tenants' absent), newest first. */
export async function statsBatch(db: Queryable, tenantId: string, ids: readonly string[]): Promise<BatchItem[]> {
  const rows = await tenantCampaignCounters(db, tenantId, ids);
  return rows.map(({ id, name, status, ...counters }) => ({ campaign_id: id, campaign_name: name, status, ...countsOf(counters), ...ratesOf(counters) }));
}

export interface ClickHeatmap {
  campaign_id: string;
  /** Clicks of the URLs returned (so their pct_of_total add up to 100). */
  total_clicks: number;
  by_url: { url: string; clicks: number; pct_of_total: number }[];
}

/** GET /campaigns/{id}/click-heatmap: the 100 most clicked URLs, raw clicks (scanners' included), share of the returned set's clicks in %. */
export async function clickHeatmap(db: Queryable, tenantId: string, id: string): Promise<ClickHeatmap> {
  const row = await requireCampaign(db, tenantId, id);
  const links = await topLinks(db, row.id, HEATMAP_URLS);
  const total = links.reduce((sum, l) => sum + l.clicks, 0);
  return {
    campaign_id: row.id,
    total_clicks: total,
    by_url: links.map((l) => ({ url: l.url, clicks: l.clicks, pct_of_total: total > 0 ? Math.round((l.clicks / total) * 10_000) / 100 : 0 })),
  };
}
