// Which tenants are suspended, as this process last read it: the click redirect checks every click against it without a look-up of its own.
import type { Queryable } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';

/**
 * One query (`status = 'suspended'`, a handful of rows) at most every `maxAgeMs`, shared by the clicks that wait for
 * it; a suspension is seen by clicks at most `maxAgeMs` (plus one read) after it is committed. A failed read keeps the
 * last set (a database outage does not turn every redirect into an error) and is tried again on the next click.
 */
export class SuspendedTenants {
  private ids = new Set<string>();
  /** performance.now() of the last read (monotonic: a test's manual clock does not freeze it). */
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly maxAgeMs: number,
  ) {}

  async has(tenantId: string): Promise<boolean> {
    if (performance.now() - this.readAt >= this.maxAgeMs) await (this.reading ??= this.read().finally(() => (this.reading = undefined)));
    return this.ids.has(tenantId);
  }

  private async read(): Promise<void> {
    const started = performance.now();
    try {
      const rows = await this.db<{ id: string }[]>`select id from tenants where status = 'suspended'`;
      this.ids = new Set(rows.map((r) => r.id));
      this.readAt = started;
    } catch (err) {
      this.log.warn({ err }, 'suspended tenants not read; the click check uses the last set');
    }
  }
}
