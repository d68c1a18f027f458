// The campaign fan-out's store in memory, for the rules' tests without PostgreSQL: one campaign's recipients, its batches with their leases, the
// contacts as they are now, the sends the send use-case stored (with its suppression, warm-up and quota gates in their simplest form) and the counters,
// following what batch-queries.ts does in SQL.
import { randomUUID } from 'node:crypto';
import type { AcceptInput, AcceptResult, HoldingOutcome } from '../../shared/sending/accept.js';
import type { Batch, BatchOutcome, BatchRecipient, FanoutLeft } from '../../shared/campaigns/batch-queries.js';
import type { FanoutStore } from '../../shared/campaigns/fanout-batch.js';
import { PROFILE_COLUMN_NAMES } from '../../shared/audiences/contacts/fields.js';

interface Recipient {
  contactId: string;
  email: string;
  seq: number;
  variant: 'a' | 'b' | null;
  sendId: string;
  status: 'pending' | 'held' | 'skipped' | 'queued';
  skipReason: string | null;
}

interface Contact {
  status: 'active' | 'unsubscribed' | 'deleted';
  firstName: string | null;
}

export class MemoryFanoutStore implements FanoutStore {
  readonly recipients: Recipient[] = [];
  readonly contacts = new Map<string, Contact>();
  /** Batches by their first position; a null claim is one given back. */
  readonly batches = new Map<number, { lastSeq: number; claimedUntil: Date | null }>();
  /** The stored sends by id: the inputs the send use-case took, and the status it gave each. */
  readonly sends = new Map<string, { input: AcceptInput; status: string }>();
  /** Every call of the send use-case, a repeated one too. */
  readonly sendCalls: AcceptInput[] = [];
  readonly counters = { queued: 0, skipped: new Map<string, number>() };
  /** The suppression gate: these addresses' sends are stored dropped. */
  readonly suppressed = new Set<string>();
  /** The warm-up gate: sends left today before the cap holds them until `warmupOpensAt`. */
  warmupRoom = Number.POSITIVE_INFINITY;
  warmupOpensAt = new Date('2026-03-02T00:00:00Z');
  status: 'sending' | 'paused' | 'cancelled' = 'sending';
  private fanoutSeq = 0;
  private recipientSeq = 0;

  constructor(readonly campaignId: string) {}

  /** A recipient fixed at materialization, pending unless held for the A/B winner, with its contact. */
  addRecipient(r: { email: string; variant?: 'a' | 'b' | null; held?: boolean; contact?: Partial<Contact> }): Recipient {
    const recipient: Recipient = {
      contactId: randomUUID(),
      email: r.email,
      seq: r.held ? 0 : ++this.recipientSeq,
      variant: r.variant ?? null,
      sendId: randomUUID(),
      status: r.held ? 'held' : 'pending',
      skipReason: null,
    };
    this.recipients.push(recipient);
    this.contacts.set(recipient.contactId, { status: 'active', firstName: null, ...r.contact });
    return recipient;
  }

  async claimBatch(campaignId: string, size: number, now: Date, leaseUntil: Date): Promise<Batch | undefined> {
    const left = [...this.batches.entries()].filter(([, b]) => b.claimedUntil === null || b.claimedUntil < now).sort(([a], [b]) => a - b)[0];
    if (left) {
      left[1].claimedUntil = leaseUntil;
      return { campaignId, firstSeq: left[0], lastSeq: left[1].lastSeq, claimedUntil: leaseUntil };
    }
    if (this.status !== 'sending' || this.fanoutSeq >= this.recipientSeq) return undefined;
    const firstSeq = this.fanoutSeq + 1;
    const lastSeq = Math.min(this.fanoutSeq + size, this.recipientSeq);
    this.fanoutSeq = lastSeq;
    this.batches.set(firstSeq, { lastSeq, claimedUntil: leaseUntil });
    return { campaignId, firstSeq, lastSeq, claimedUntil: leaseUntil };
  }

  private inBatch(batch: Batch): Recipient[] {
    return this.recipients.filter((r) => r.status === 'pending' && r.seq >= batch.firstSeq && r.seq <= batch.lastSeq).sort((a, b) => a.seq - b.seq);
  }

  async recipientsOf(batch: Batch): Promise<BatchRecipient[]> {
    return this.inBatch(batch).map((r) => {
      const contact = this.contacts.get(r.contactId);
      const profile = Object.fromEntries(PROFILE_COLUMN_NAMES.map((k) => [k, null]));
      return {
        ...profile,
        first_name: contact?.firstName ?? null,
        contact_id: r.contactId,
        email: r.email,
        variant: r.variant,
        send_id: r.sendId,
        send_status: this.sends.get(r.sendId)?.status ?? null,
        contact_status: contact?.status ?? null,
        custom_fields: contact ? {} : null,
      } as BatchRecipient;
    });
  }

  /** Stores the send once per id (a repeated call finds it), after the suppression and warm-up gates. */
  async send(input: AcceptInput): Promise<HoldingOutcome> {
    this.sendCalls.push(input);
    const id = input.sendId!;
    const existing = this.sends.get(id);
    if (existing) return { send: { id, status: existing.status } } as unknown as AcceptResult;
    if (this.suppressed.has(input.to)) {
      this.sends.set(id, { input, status: 'dropped' });
      return { send: { id, status: 'dropped' } } as unknown as AcceptResult;
    }
    if (this.warmupRoom <= 0) return { held: { until: this.warmupOpensAt } };
    this.warmupRoom--;
    this.sends.set(id, { input, status: 'queued' });
    return { send: { id, status: 'queued' } } as unknown as AcceptResult;
  }

  async finishBatch(batch: Batch, outcome: BatchOutcome): Promise<boolean> {
    const held = this.batches.get(batch.firstSeq);
    if (!held || held.claimedUntil?.getTime() !== batch.claimedUntil.getTime()) return false;
    const pending = this.inBatch(batch);
    for (const s of outcome.skipped) {
      const r = pending.find((p) => p.contactId === s.contactId);
      if (!r) continue;
      r.status = 'skipped';
      r.skipReason = s.reason;
      this.counters.skipped.set(s.reason, (this.counters.skipped.get(s.reason) ?? 0) + 1);
    }
    if (outcome.complete) {
      this.batches.delete(batch.firstSeq);
      // Counted once, whichever run sent them; no recipient row is written for them.
      this.counters.queued += this.inBatch(batch).filter((r) => this.sends.has(r.sendId)).length;
    } else {
      held.claimedUntil = null;
      for (const contactId of outcome.sent) {
        const r = pending.find((p) => p.contactId === contactId && p.status === 'pending');
        if (!r) continue;
        r.status = 'queued';
        this.counters.queued++;
      }
    }
    return true;
  }

  async releaseHeld(_campaignId: string, limit: number): Promise<number> {
    const picked = this.recipients.filter((r) => r.status === 'held').slice(0, limit);
    for (const r of picked) {
      r.status = 'pending';
      r.seq = ++this.recipientSeq;
    }
    return picked.length;
  }

  async fanoutLeft(_campaignId: string, now: Date): Promise<FanoutLeft> {
    const live = [...this.batches.values()].filter((b) => b.claimedUntil !== null && b.claimedUntil >= now).map((b) => b.claimedUntil!.getTime());
    return {
      unclaimed: this.fanoutSeq < this.recipientSeq,
      claimedUntil: live.length > 0 ? new Date(Math.min(...live)) : null,
      orphaned: [...this.batches.values()].some((b) => b.claimedUntil === null || b.claimedUntil < now),
      held: this.recipients.some((r) => r.status === 'held'),
    };
  }

  async sweepCancelled(): Promise<number> {
    throw new Error('the cancel sweep is set-based SQL: tested against PostgreSQL (test/shared/campaigns/lifecycle.test.ts)');
  }

  /** How many sends each address got: a recipient sent twice shows as 2. */
  sendsPerAddress(): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.sends.values()) out.set(s.input.to, (out.get(s.input.to) ?? 0) + 1);
    return out;
  }
}
