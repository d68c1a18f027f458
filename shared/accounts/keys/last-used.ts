// Records when each API key was last used without a database write per request: at most one per key per interval.
import type { Queryable } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { touchApiKeys } from './queries.js';

export class KeyUsageRecorder {
  private readonly lastWritten = new Map<string, number>();
  private pending = new Map<string, { id: string; at: Date; ip: string | null }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly intervalSeconds: number,
  ) {}

  /**
   * Notes a use (at: a Date or epoch milliseconds); the write happens in the next batch if this key was not written
   * within the interval. Per request: the common case is one map read and a comparison, no Date made.
   */
  record(keyId: string, at: Date | number, ip: string | null): void {
    const ms = typeof at === 'number' ? at : at.getTime();
    const last = this.lastWritten.get(keyId);
    if (last !== undefined && ms - last < this.intervalSeconds * 1000) return;
    this.lastWritten.set(keyId, ms);
    this.pending.set(keyId, { id: keyId, at: new Date(ms), ip });
    this.timer ??= setTimeout(() => void this.flush(), 50);
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushing;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    if (batch.length === 0) return;
    this.flushing = touchApiKeys(this.db, batch).catch((err) => {
      // Losing a last_used_at update is harmless; the next use rewrites it.
      for (const use of batch) this.lastWritten.delete(use.id);
      this.log.warn({ err }, 'could not record API key use');
    });
    await this.flushing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
