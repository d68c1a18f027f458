// Counting slots with a bounded wait: at most N holders at once, a newcomer waits its turn for a while and is then refused (unlike the Gate of concurrency.ts,
// which waits for ever); and time budgets per key.

/** At most `capacity` holders at once; `take` waits up to `waitMs` for a slot and answers whether it got one. */
export class Slots {
  private active = 0;
  private readonly waiting = new Set<{ grant: () => void }>();

  constructor(private readonly capacity: number) {}

  /** Holders plus waiters: zero means the slots can be forgotten. */
  get load(): number {
    return this.active + this.waiting.size;
  }

  async take(waitMs: number): Promise<boolean> {
    if (this.active < this.capacity) {
      this.active++;
      return true;
    }
    if (waitMs <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.delete(waiter);
        resolve(false);
      }, waitMs);
      this.waiting.add(waiter);
    });
  }

  release(): void {
    // The slot passes straight to the longest waiter (a Set iterates in insertion order), so `active` only drops when nobody waits.
    const next = this.waiting.values().next();
    if (!next.done) {
      this.waiting.delete(next.value);
      next.value.grant();
    } else {
      this.active--;
    }
  }
}

/** Slots per key (a tenant), each key with the same capacity; a key's entry is dropped once nobody holds or waits. */
export class KeyedSlots {
  private readonly byKey = new Map<string, Slots>();

  constructor(private readonly capacity: number) {}

  async take(key: string, waitMs: number): Promise<boolean> {
    let slots = this.byKey.get(key);
    if (!slots) this.byKey.set(key, (slots = new Slots(this.capacity)));
    const taken = await slots.take(waitMs);
    if (!taken) this.forgetIdle(key, slots);
    return taken;
  }

  release(key: string): void {
    const slots = this.byKey.get(key);
    if (!slots) return;
    slots.release();
    this.forgetIdle(key, slots);
  }

  private forgetIdle(key: string, slots: Slots): void {
    if (slots.load === 0 && this.byKey.get(key) === slots) this.byKey.delete(key);
  }
}

/**
 * Time each key (a tenant) may spend per window, as a leaky bucket: what a key spent drains at `budgetMs` per
 * `windowMs`, and a key whose level is at or above `budgetMs` waits until it has drained below. So a key gets its
 * budget per window on average, and at most about twice it in any one window (a full bucket, then the refill).
 */
export class TimeBudget {
  private readonly levels = new Map<string, { ms: number; at: number }>();

  constructor(
    private readonly budgetMs: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** How long the key must wait before it may spend again: 0 when it may now. */
  waitMs(key: string): number {
    const level = this.level(key);
    return level < this.budgetMs ? 0 : Math.ceil(((level - this.budgetMs) * this.windowMs) / this.budgetMs) + 1;
  }

  /** Starts timing a spending of the key's; the returned function (once) adds the time since to its level. */
  meter(key: string): () => void {
    const started = this.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const now = this.now();
      this.levels.set(key, { ms: this.level(key) + (now - started), at: now });
    };
  }

  /** The key's level now, drained since it was last set; a drained key is forgotten. */
  private level(key: string): number {
    const entry = this.levels.get(key);
    if (!entry) return 0;
    const ms = Math.max(0, entry.ms - ((this.now() - entry.at) * this.budgetMs) / this.windowMs);
    if (ms === 0) this.levels.delete(key);
    return ms;
  }
}
