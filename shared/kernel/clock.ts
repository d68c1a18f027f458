// Injectable time source, so workers with hour gates and expiries are testable.

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current: Date = new Date()) {}
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date): void {
    this.current = new Date(at);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/**
 * Milliseconds since the epoch by a clock: Date.now() for the system clock, without the Date object the
 * per-request paths (key use, key activity) would otherwise make and drop; an injected clock is asked.
 */
export function epochMs(clock: Clock): number {
  return clock === systemClock ? Date.now() : clock.now().getTime();
}
