// Records open and click hits cheaply and durably: concurrent hits share one transaction (group commit) that judges each (machine open, scanner click, a
// replayed open counted once), writes its event, the recipient's first-open/click stamps and the campaign's counters (per variant and per contact country).
import type { Sql } from '../../db/connection.js';
import { GroupCommit } from '../../db/group-commit.js';
import { pipelinedTransaction, type Pipeline } from '../../db/pipelined-transaction.js';
import { retryConflicts } from '../../db/retry.js';
import { uuidV7 } from '../../db/uuid-v7.js';
import { enqueueSubscribedFeedEvents } from '../../webhooks/events/outbox.js';
import { writeEvents } from '../events/queries.js';
import { subscribedTypesOfSends } from '../../webhooks/events/queries.js';
import { conversionsOf } from '../goals/conversions.js';
import { goalsOfSendTenants, insertConversions } from '../goals/queries.js';
import type { Logger } from '../../kernel/log.js';
import {
  addCampaignStats,
  addCountryStats,
  flagScannerClicks,
  lockTrackedSends,
  recentClicks,
  recentOpens,
  recipientStamps,
  storedEventIds,
  writeRecipientStamps,
  type CountryDelta,
  type EngagementEvent,
  type RecentOpen,
  type RecipientStamps,
  type StatDelta,
  type TrackedSend,
} from './queries.js';
import type { TrafficRules } from './traffic-rules.js';

/** One request for the pixel or a click redirect, its token already verified. */
export interface Hit {
  kind: 'open' | 'click';
  sendId: string;
  /** Clicks: the signed destination and the message's tracked-link count. */
  url?: string | undefined;
  links?: number | undefined;
  userAgent: string;
  /** Already truncated (ip.ts). */
  ip: string | null;
  at: Date;
}

/** recorded; or unknown_send: the token was good but its send is gone (deleted with its tenant): nothing stored. */
export type HitOutcome = 'recorded' | 'unknown_send';

export interface RecorderOptions {
  /** The most hits one transaction holds. */
  maxBatch: number;
  /** How many batches may be in flight at once (each on a connection of its own). */
  concurrency: number;
}

/** The longest User-Agent kept on an event. */
const MAX_USER_AGENT = 512;
const ALL_LINKS = 'all_links';

interface Planned {
  eventId: string;
  hit: Hit;
  /** Recorded before (a spooled hit replayed): its event may be stored already. */
  replay: boolean;
}

/** A hit's event id when chosen beforehand (the spool's), and whether it may have been committed before. */
export interface RecordOptions {
  eventId: string;
  replay: boolean;
}

/** Where the tracking endpoints hand their hits: this recorder, the one on a thread of its own, or the spool in front of either. */
export interface HitSink {
  /** Resolves once the hit is durable: committed (with its outcome), or fsynced to the spool ('spooled'). */
  record(hit: Hit, options?: RecordOptions): Promise<HitOutcome | 'spooled'>;
  /** Waits for the hits in hand to be written (as far as it can), then lets go of what it holds. */
  close(): Promise<void>;
}

/** A click of the send within reach of the "every link at once" window: stored before (id) or new in this batch (event). */
interface KnownClick {
  url: string;
  at: number;
  scanner: boolean;
  storedId?: string;
  event?: EngagementEvent;
}

export class HitRecorder implements HitSink {
  private readonly group: GroupCommit<Planned, HitOutcome>;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly rules: TrafficRules,
    options: RecorderOptions,
  ) {
    this.group = new GroupCommit<Planned, HitOutcome>((items, retry) => this.commit(items, retry), log, 'tracking hits', options.maxBatch, options.concurrency);
  }

  /** Resolves once the hit is committed (or known to name no send). */
  record(hit: Hit, options?: RecordOptions): Promise<HitOutcome> {
    // Time-ordered: a batch's events land together at the right edge of the events primary key.
    return this.group.write({ eventId: options?.eventId ?? uuidV7(hit.at.getTime()), hit, replay: options?.replay ?? false });
  }

  /** Nothing of its own to let go of (the pool is the process's); hits in flight finish with their callers. */
  async close(): Promise<void> {}

  /** A batch lost to a deadlock or serialization failure was rolled back whole: it is run again as it was. */
  private commit(items: Planned[], retry: boolean): Promise<HitOutcome[]> {
    return retryConflicts(
      () => pipelinedTransaction(this.sql, (p) => this.write(p, items, retry), { genericPlans: true }),
      (err, attempt) => this.log.info({ err, size: items.length, attempt }, 'a batch of tracking hits met a lock conflict; running it again'),
    );
  }

  /**
   * Two round trips: BEGIN and every read (the sends locked first, then what the judgement needs), then every write
   * and COMMIT. The writes take their row locks in the order every writer of these rows does (unsubscribes, and the
   * events trigger for delivery events): campaign_recipients of the locked sends, campaign_stats, campaign_country_stats,
   * then the events insert, whose triggers take campaign_hourly_stats and campaign_link_stats, each in key order
   * (the stale-hour marks it appends lock nothing: migration 103). A conflict left (with a writer elsewhere that
   * takes them otherwise) is retried.
   */
  private async write({ tx, commit }: Pipeline, items: Planned[], retry: boolean): Promise<HitOutcome[]> {
    const sendIds = [...new Set(items.map((i) => i.hit.sendId))];
    const clickItems = items.filter((i) => i.hit.kind === 'click');
    const clickSends = [...new Set(clickItems.map((i) => i.hit.sendId))];
    const since = new Date(Math.min(...clickItems.map((i) => i.hit.at.getTime())) - this.rules.allLinks.windowMs);
    const openItems = items.filter((i) => i.hit.kind === 'open');
    const openSends = this.rules.repeatOpenWindowMs > 0 ? [...new Set(openItems.map((i) => i.hit.sendId))] : [];
    const opensSince = new Date(Math.min(...openItems.map((i) => i.hit.at.getTime())) - this.rules.repeatOpenWindowMs);
    // Issued in this order, sent together, run in this order: the reads after the lock see what was committed before it.
    // (Each query function awaits its one statement, so they reach the connection in call order; the two-recorder
    // test's counters would go wrong if a read overtook the lock.)
    const [storedIds, locked, recent, opened, stamps, goals, subscribed] = await Promise.all([
      // Committed alone after its batch failed: the batch's COMMIT may have gone through with its reply lost;
      // replayed from the spool: the process that spooled it may have committed it before it stopped.
      retry || items.some((i) => i.replay)
        ? storedEventIds(
            tx,
            items.map((i) => i.eventId),
          )
        : [],
      lockTrackedSends(tx, sendIds),
      recentClicks(tx, clickSends, since),
      recentOpens(tx, openSends, opensSince),
      recipientStamps(tx, sendIds),
      clickItems.some((i) => i.hit.url) ? goalsOfSendTenants(tx, sendIds) : [],
      subscribedTypesOfSends(tx, sendIds),
    ]);
    const stored = new Set(storedIds);
    const sends = new Map(locked.map((s) => [s.id, s]));
    // A retried item's own click is among the recent ones: the judgement sees it as stored, as it is.
    const batch = new Judgement(this.rules, recent, opened, stamps);
    const outcomes = items.map((item) => {
      if (stored.has(item.eventId)) return 'recorded';
      const send = sends.get(item.hit.sendId);
      if (!send) return 'unknown_send';
      // A repeat open is answered like any other (the pixel); counted once already, it stores nothing.
      batch.add(item, send);
      return 'recorded';
    });
    const events = batch.events;
    await commit([
      writeRecipientStamps(tx, batch.changedStamps()),
      addCampaignStats(tx, batch.deltas()),
      addCountryStats(tx, batch.countryDeltas()),
      writeEvents(tx, events),
      flagScannerClicks(tx, batch.reflagged, ALL_LINKS),
      enqueueSubscribedFeedEvents(tx, events, subscribed),
      // After the events (conversions reference them), in the same transaction: a click and its conversions commit together.
      insertConversions(tx, conversionsOf(events, goals)),
    ]);
    return outcomes;
  }
}

/** One batch's hits judged in order against what is stored, and what they change. */
class Judgement {
  readonly events: EngagementEvent[] = [];
  /** Stored clicks the "every link at once" rule flags now. */
  readonly reflagged: string[] = [];
  private readonly clicks = new Map<string, KnownClick[]>();
  /** Per send, the opens within reach of the repeat-open window: stored before, or stored by this batch. */
  private readonly opens = new Map<string, { at: number; machine: boolean }[]>();
  private readonly stamps: Map<string, RecipientStamps>;
  private readonly changed = new Set<string>();
  private readonly stats = new Map<string, StatDelta>();
  private readonly countries = new Map<string, CountryDelta>();

  constructor(
    private readonly rules: TrafficRules,
    recent: readonly { id: string; send_id: string; url: string; scanner: boolean; occurred_at: Date }[],
    opened: readonly RecentOpen[],
    stamps: readonly RecipientStamps[],
  ) {
    for (const c of recent) this.clicksOf(c.send_id).push({ url: c.url, at: c.occurred_at.getTime(), scanner: c.scanner, storedId: c.id });
    for (const o of opened) this.opensOf(o.send_id).push({ at: o.occurred_at.getTime(), machine: o.machine });
    this.stamps = new Map(stamps.map((s) => [s.send_id, { ...s }]));
  }

  add(item: Planned, send: TrackedSend): void {
    const { hit } = item;
    const deliveredAt = (send.delivered_at ?? send.created_at).getTime();
    const facts = { userAgent: hit.userAgent, secondsSinceDelivery: (hit.at.getTime() - deliveredAt) / 1000 };
    const openVerdict = hit.kind === 'open' ? this.rules.open(facts) : undefined;
    if (openVerdict && this.repeatOpen(send.id, hit.at.getTime(), openVerdict.flagged)) return;
    const base = { user_agent: hit.userAgent.slice(0, MAX_USER_AGENT), ip: hit.ip };
    const event: EngagementEvent = {
      id: item.eventId,
      tenant_id: send.tenant_id,
      type: hit.kind,
      send_id: send.id,
      message_id: send.message_id,
      recipient: send.to_email,
      detail: {},
      occurred_at: hit.at,
      campaign_id: send.campaign_id,
      contact_id: send.contact_id,
    };
    this.events.push(event);
    const stamp = this.stamps.get(send.id);
    const delta = send.campaign_id === null ? undefined : this.delta(send.campaign_id, send.campaign_variant ?? '');
    if (openVerdict) {
      const verdict = openVerdict;
      event.detail = { ...base, machine: verdict.flagged, reasons: verdict.reasons };
      if (delta) delta.total_opens! += 1;
      if (stamp && delta && stamp.first_open_at === null) this.stamp(stamp, 'first_open_at', hit.at, delta, 'unique_opens');
      if (stamp && delta && !verdict.flagged && stamp.first_human_open_at === null)
        this.stamp(stamp, 'first_human_open_at', hit.at, delta, 'unique_human_opens');
      return;
    }
    const verdict = this.rules.click(facts);
    const reasons = [...verdict.reasons];
    const url = hit.url ?? '';
    if (this.everyLinkAtOnce(send.id, url, hit, stamp, delta)) reasons.push(ALL_LINKS);
    const scanner = reasons.length > 0;
    event.detail = { ...base, url, scanner, reasons };
    this.clicksOf(send.id).push({ url, at: hit.at.getTime(), scanner, event });
    if (delta) delta.total_clicks! += 1;
    if (stamp && delta && stamp.first_click_at === null) this.stamp(stamp, 'first_click_at', hit.at, delta, 'unique_clicks');
    if (stamp && delta && !scanner && stamp.first_human_click_at === null) this.stamp(stamp, 'first_human_click_at', hit.at, delta, 'unique_human_clicks');
  }

  /**
   * True when the send was opened within the repeat-open window before this open: a replay of the pixel, stored and
   * counted once. Unless this is a person's open after only machine opens (Apple's prefetch, then the reader): that
   * one may be the first human open. An open that counts is remembered for the batch's later hits.
   */
  private repeatOpen(sendId: string, at: number, machine: boolean): boolean {
    const windowMs = this.rules.repeatOpenWindowMs;
    const opens = this.opensOf(sendId);
    const repeat = windowMs > 0 && opens.some((o) => o.at <= at && o.at >= at - windowMs && (machine || !o.machine));
    if (!repeat) opens.push({ at, machine });
    return repeat;
  }

  /**
   * True when this click completes clicks on every tracked link of the message (at least all_links_min) within
   * the window: a scanner following each link. The burst's earlier clicks are flagged too, and a first human
   * click they set is taken back.
   */
  private everyLinkAtOnce(sendId: string, url: string, hit: Hit, stamp: RecipientStamps | undefined, delta: StatDelta | undefined): boolean {
    const { windowMs, min } = this.rules.allLinks;
    const links = hit.links ?? 0;
    if (links < min) return false;
    const at = hit.at.getTime();
    const burst = this.clicksOf(sendId).filter((c) => c.at >= at - windowMs && c.at <= at);
    const urls = new Set(burst.map((c) => c.url)).add(url);
    if (urls.size < links) return false;
    let unflagged = false;
    for (const click of burst.filter((c) => !c.scanner)) {
      unflagged = true;
      click.scanner = true;
      if (click.storedId !== undefined) this.reflagged.push(click.storedId);
      if (click.event) {
        const detail = click.event.detail;
        click.event.detail = { ...detail, scanner: true, reasons: [...((detail['reasons'] as string[] | undefined) ?? []), ALL_LINKS] };
      }
    }
    // Every click of the burst is a scanner's now: a first human click within it was one of them.
    const first = stamp?.first_human_click_at;
    if (unflagged && stamp && delta && first && first.getTime() >= at - windowMs) {
      stamp.first_human_click_at = null;
      this.changed.add(stamp.send_id);
      delta.unique_human_clicks! -= 1;
      this.countryOf(stamp).unique_human_clicks! -= 1;
    }
    return true;
  }

  private stamp(
    stamp: RecipientStamps,
    column: 'first_open_at' | 'first_human_open_at' | 'first_click_at' | 'first_human_click_at',
    at: Date,
    delta: StatDelta,
    counter: 'unique_opens' | 'unique_human_opens' | 'unique_clicks' | 'unique_human_clicks',
  ): void {
    stamp[column] = at;
    this.changed.add(stamp.send_id);
    delta[counter]! += 1;
    this.countryOf(stamp)[counter]! += 1;
  }

  /** The unique counts of the stamp's campaign and contact country. */
  private countryOf(stamp: RecipientStamps): CountryDelta {
    const key = `${stamp.campaign_id}/${stamp.country}`;
    let delta = this.countries.get(key);
    if (!delta) {
      delta = { campaign_id: stamp.campaign_id, country: stamp.country, unique_opens: 0, unique_human_opens: 0, unique_clicks: 0, unique_human_clicks: 0 };
      this.countries.set(key, delta);
    }
    return delta;
  }

  private opensOf(sendId: string): { at: number; machine: boolean }[] {
    let list = this.opens.get(sendId);
    if (!list) this.opens.set(sendId, (list = []));
    return list;
  }

  private clicksOf(sendId: string): KnownClick[] {
    let list = this.clicks.get(sendId);
    if (!list) this.clicks.set(sendId, (list = []));
    return list;
  }

  private delta(campaignId: string, variant: string): StatDelta {
    const key = `${campaignId}/${variant}`;
    let delta = this.stats.get(key);
    if (!delta) {
      delta = {
        campaign_id: campaignId,
        variant,
        total_opens: 0,
        unique_opens: 0,
        unique_human_opens: 0,
        total_clicks: 0,
        unique_clicks: 0,
        unique_human_clicks: 0,
      };
      this.stats.set(key, delta);
    }
    return delta;
  }

  changedStamps(): RecipientStamps[] {
    return [...this.changed].map((id) => this.stamps.get(id)!);
  }

  deltas(): StatDelta[] {
    return [...this.stats.values()];
  }

  countryDeltas(): CountryDelta[] {
    return [...this.countries.values()];
  }
}
