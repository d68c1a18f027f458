// Counting slots with a bounded wait: at most N holders at once, a newcomer waits its turn for a while and is then refused (unlike the Gate of concurrency.ts, which waits for ever).

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
