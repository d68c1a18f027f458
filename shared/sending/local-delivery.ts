// The hand-off from acceptance to this process's own delivery workers: a send accepted where the outbound role runs goes straight to a worker with its
// bytes, claimed in the same transaction that stores it, instead of being read back from the queue.
import type { DeliverySend } from './outbound-log/delivery-queries.js';

/** A send handed to a worker: its row as delivery reads it and its signed message. */
export interface HandedOver {
  send: DeliverySend;
  message: Buffer;
}

/** What the outbound role offers the send path (mta/outbound/deliver/start.ts implements it). */
export interface DeliveryWorkers {
  /** How many more sends the workers take now (0 when they are full or stopping). */
  room(): number;
  /** Delivers sends whose queue rows are claimed for this process; called once their transaction has committed. */
  deliver(items: HandedOver[]): void;
  /** Resolves when the workers could take `n` more sends (at once when they are stopping: nothing waits for them). */
  whenRoom(n: number): Promise<void>;
}

/**
 * The process's slot for its delivery workers, built with the services and filled when the outbound role starts.
 * Reservations are counted here, so concurrent acceptances never promise the workers more than they have room for:
 * a send that finds no room is stored due now, for any worker of any process to claim from the queue.
 */
export class LocalDelivery {
  private workers: DeliveryWorkers | undefined;
  private reserved = 0;

  attach(workers: DeliveryWorkers): void {
    this.workers = workers;
  }

  detach(workers: DeliveryWorkers): void {
    if (this.workers === workers) this.workers = undefined;
  }

  /** Reserves room for up to `n` sends about to be stored; returns how many were reserved. */
  reserve(n: number): number {
    const free = this.workers ? Math.max(0, this.workers.room() - this.reserved) : 0;
    const granted = Math.min(n, free);
    this.reserved += granted;
    return granted;
  }

  /** Hands the reserved sends over once stored, or gives their reservations back when storing failed (`items` empty). */
  settle(reserved: number, items: HandedOver[]): void {
    this.reserved -= reserved;
    if (items.length > 0) this.workers?.deliver(items);
  }

  /** Waits until the workers could take `n` more sends; at once without workers (nothing would make room). */
  async whenRoom(n: number): Promise<void> {
    if (this.workers) await this.workers.whenRoom(n + this.reserved);
  }
}
