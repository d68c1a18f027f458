// The daily SOC 2 evidence pack: what happened on the platform in the last 24 hours (access, changes, incidents, suppressions, sign-ins), written once per
// UTC day at 02:00.
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { accessFacts, actionCounts, lockedAccounts, packDates, packOf, savePack, suppressionTotals } from './queries.js';

const DAY = 86_400_000;
/** The worker's hour gate: a scheduled tick before 02:00 UTC writes nothing. */
export const EVIDENCE_HOUR_UTC = 2;

export interface EvidencePack {
  date: string;
  generated_at: string;
  /** Sections that could not be gathered ({section, message}); such a section is null rather than guessed. */
  errors: { section: string; message: string }[];
  access_reviews: Record<string, unknown> | null;
  change_management: Record<string, unknown> | null;
  incident_response: Record<string, unknown> | null;
  suppression_discipline: Record<string, unknown> | null;
  auth_events: Record<string, unknown> | null;
}

const SECTIONS = ['access_reviews', 'change_management', 'incident_response', 'suppression_discipline', 'auth_events'] as const;

export const utcDate = (d: Date) => d.toISOString().slice(0, 10);

/** Gathers the pack for the 24 hours up to `now`; a failing section is reported in errors, the others still gathered. */
export async function buildEvidencePack(sql: Sql, now: Date): Promise<EvidencePack> {
  const since = new Date(now.getTime() - DAY);
  const window = { since: since.toISOString(), until: now.toISOString() };
  const gather: Record<(typeof SECTIONS)[number], () => Promise<Record<string, unknown>>> = {
    access_reviews: async () => ({
      ...window,
      ...(await accessFacts(sql)),
      changes: await actionCounts(sql, since, now, ['team.', 'api_key.', 'super_admin.']),
    }),
    change_management: async () => ({
      ...window,
      changes: await actionCounts(sql, since, now, [
        'domain.',
        'dkim.',
        'template.',
        'campaign.',
        'warmup.',
        'event_webhook.',
        'inbound_webhook.',
        'bounce_mailbox.',
        'worker.run_now',
      ]),
    }),
    incident_response: async () => ({
      ...window,
      events: await actionCounts(sql, since, now, ['worker.alert', 'ip_watchdog.', 'tenant.suspended', 'tenant.unsuspended', 'tenant.deleted']),
    }),
    suppression_discipline: async () => ({
      ...window,
      ...(await suppressionTotals(sql)),
      changes: await actionCounts(sql, since, now, ['suppression.', 'contact.erased']),
    }),
    auth_events: async () => ({
      ...window,
      locked_accounts: await lockedAccounts(sql, now),
      events: await actionCounts(sql, since, now, ['auth.', 'team.invite_accepted']),
    }),
  };
  const pack: EvidencePack = {
    date: utcDate(now),
    generated_at: now.toISOString(),
    errors: [],
    access_reviews: null,
    change_management: null,
    incident_response: null,
    suppression_discipline: null,
    auth_events: null,
  };
  for (const section of SECTIONS) {
    try {
      pack[section] = await gather[section]();
    } catch (err) {
      pack.errors.push({ section, message: (err as Error).message });
    }
  }
  return pack;
}

export type EvidenceRun = { written: true; date: string; artifact: EvidencePack } | { written: false; skipped: string };

/**
 * One tick of the evidence worker. A scheduled tick writes today's pack only from 02:00 UTC and only once a day;
 * `force` (run-now) ignores both gates and overwrites today's pack.
 */
export async function runEvidence(deps: { sql: Sql; clock: Clock }, options: { force?: boolean } = {}): Promise<EvidenceRun> {
  const now = deps.clock.now();
  const date = utcDate(now);
  if (!options.force) {
    if (now.getUTCHours() < EVIDENCE_HOUR_UTC) return { written: false, skipped: `before ${EVIDENCE_HOUR_UTC}:00 UTC` };
    if (await packOf(deps.sql, date)) return { written: false, skipped: `the pack of ${date} is already written` };
  }
  const artifact = await buildEvidencePack(deps.sql, now);
  await savePack(deps.sql, date, now, artifact as unknown as Record<string, unknown>);
  return { written: true, date, artifact };
}

/** The UTC days with a stored pack, newest first. */
export const evidencePackDates = (sql: Sql): Promise<string[]> => packDates(sql);

/** A UTC day's stored pack, or undefined when none was written. */
export async function evidencePackOf(sql: Sql, date: string): Promise<EvidencePack | undefined> {
  return (await packOf(sql, date))?.pack as unknown as EvidencePack | undefined;
}
