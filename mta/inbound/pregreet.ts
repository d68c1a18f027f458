// The MX's pregreet test, as Postfix postscreen's: a client not seen lately waits a short pause before the 220, one that talks in it is dropped, one that
// passed is greeted at once for a while.
//
// Spam software often talks without waiting for the greeting (it saves a round trip per
// connection); a real MTA never does (RFC 5321 §3.1: the client waits for the 220). The pause costs
// a legitimate sender once per TTL and address, not once per connection. What is remembered is
// per process (postscreen keeps its cache on disk, shared by its children): a sender meeting
// another process of the MX waits the pause once more there, which is all it costs.

export interface PregreetOptions {
  /** The pause before the 220 for an address that has not passed within the TTL (ms); 0 turns the test off. */
  waitMs: number;
  /** How long an address that passed is greeted without the pause (ms); 0 remembers nothing. */
  ttlMs: number;
  /** Connections one address may hold in the pause: the per-address limit of the session applies only after it. */
  maxWaitingPerAddress: number;
  /** Milliseconds of the process clock. */
  now(): number;
}

/** Addresses remembered at most; past it the longest-remembered is forgotten (it only waits the pause again). */
const MAX_REMEMBERED = 100_000;

export class PregreetTest {
  /** Address → when its pass ends (ms), in the order the passes were recorded. */
  private readonly passes = new Map<string, number>();
  private readonly waiting = new Map<string, number>();

  constructor(private readonly options: PregreetOptions) {}

  /** Whether a connection from the address must wait the pause: the test is on and the address has no running pass. */
  mustWait(address: string): boolean {
    if (this.options.waitMs <= 0) return false;
    const until = this.passes.get(address);
    if (until === undefined) return true;
    if (until > this.options.now()) return false;
    this.passes.delete(address);
    return true;
  }

  get waitMs(): number {
    return this.options.waitMs;
  }

  /** Counts a connection into the pause; false (and not counted) when its address already holds the most allowed. */
  enter(address: string): boolean {
    const open = this.waiting.get(address) ?? 0;
    if (open >= this.options.maxWaitingPerAddress) return false;
    this.waiting.set(address, open + 1);
    return true;
  }

  /** A connection that entered the pause has left it (greeted, dropped or gone). */
  leave(address: string): void {
    const open = (this.waiting.get(address) ?? 1) - 1;
    if (open > 0) this.waiting.set(address, open);
    else this.waiting.delete(address);
  }

  /** The address stayed quiet through the pause and was greeted: later connections skip it for the TTL. */
  pass(address: string): void {
    if (this.options.ttlMs <= 0) return;
    this.passes.delete(address);
    this.passes.set(address, this.options.now() + this.options.ttlMs);
    if (this.passes.size > MAX_REMEMBERED) this.passes.delete(this.passes.keys().next().value!);
  }
}
