// Tenant B of bench/neighbours.ts, the quiet neighbour: calls /whoami, sends tracked transactional mail whose open
// pixel its recipient fetches, and times how long each open takes to show in its events API. Everything through the
// public HTTP API and the relay's sink, so it measures any version of Mailpath alike.
import { Agent } from 'node:https';
import { simpleParser } from 'mailparser';
import type { SmtpSink } from '../../test/helpers/smtp-sink.js';
import { timedRequest, type TimedAnswer } from './http.js';

/** A browser's User-Agent: the recipient's mail client fetching the pixel (a human open, not a proxy's). */
const MAIL_CLIENT_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

export interface ProbeOptions {
  port: number;
  /** B's API key (every scope). */
  key: string;
  from: string;
  sink: SmtpSink;
  seconds: number;
  /** Open loop: a /whoami starts this often whatever the earlier ones are doing (a stall shows in every request it holds). */
  whoamiEveryMs: number;
  sendEveryMs: number;
  /** The events API is asked this often whether an open is recorded. */
  pollEveryMs: number;
  /** An open not seen within this long counts as not recorded (its lag is then at least this). */
  openBoundMs: number;
  /** A send not at the sink within this long has no open measured. */
  deliveryBoundMs: number;
  /**
   * What B started is settled at most this long after its `seconds`: a request not answered by then is timed out (its
   * latency is then the time it waited), an open not recorded by then is late, a message not delivered by then undelivered.
   */
  graceMs: number;
  /** Names the phase in the recipients' addresses. */
  tag: string;
}

export interface ProbeFigures {
  /** Every answer's latency, failed ones (timed out included) too: a refusal or a time-out is no faster service. */
  whoamiMs: number[];
  sendMs: number[];
  /** Lags of the opens recorded within openBoundMs. */
  openLagMs: number[];
  /** Opens not recorded within openBoundMs. */
  openLate: number;
  /** Sends not at the sink within deliveryBoundMs (no open measured). */
  undelivered: number;
  /** B's answers that were not 2xx, by route and status ("0": timed out or failed). */
  failures: Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The path (origin left out) of the first tracking link of a kind in a delivered message's HTML: the open pixel (/o/…) or a click link (/c/…). */
export async function trackingPath(raw: Buffer, kind: '/o/' | '/c/'): Promise<string> {
  const html = (await simpleParser(raw)).html || '';
  const path = new RegExp(`(?:src|href)="https?://[^/"]+(${kind}[^"]+)"`).exec(html)?.[1];
  if (!path) throw new Error(`the delivered message has no ${kind === '/o/' ? 'open pixel' : 'tracked link'}`);
  return path.replace(/&amp;/g, '&');
}

/** Runs B for `seconds` (then waits for its opens in flight, each bounded) and returns what it measured. */
export async function probeTenantB(o: ProbeOptions): Promise<ProbeFigures> {
  // A few connections, reused: requests beyond them queue here, and their wait counts in their latency, as it would for a client.
  const agent = new Agent({ keepAlive: true, maxSockets: 8, rejectUnauthorized: false });
  const figures: ProbeFigures = { whoamiMs: [], sendMs: [], openLagMs: [], openLate: 0, undelivered: 0, failures: {} };
  const started = performance.now();
  const end = started + o.seconds * 1000;
  const cutoff = end + o.graceMs;
  const left = () => Math.max(0, cutoff - performance.now());
  const api = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<TimedAnswer> =>
    timedRequest(o.port, {
      method,
      path: `/api/v1${path}`,
      agent,
      token: o.key,
      timeoutMs: left(),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const failed = (what: string, a: TimedAnswer) => {
    if (a.status >= 200 && a.status < 300) return false;
    const k = `${what} ${a.status}`;
    figures.failures[k] = (figures.failures[k] ?? 0) + 1;
    return true;
  };

  const opened = async (messageId: string, to: string): Promise<void> => {
    const delivered = await until(Math.min(o.deliveryBoundMs, left()), 25, () => o.sink.messages.find((m) => m.to.includes(to)));
    if (!delivered) {
      figures.undelivered++;
      return;
    }
    const path = await trackingPath(delivered.raw, '/o/');
    const fetchedAt = performance.now();
    const bound = Math.min(o.openBoundMs, left());
    const pixel = await timedRequest(o.port, { method: 'GET', path, agent, headers: { 'user-agent': MAIL_CLIENT_UA }, timeoutMs: bound });
    failed('GET /o/', pixel);
    const seen = await until(bound - (performance.now() - fetchedAt), o.pollEveryMs, async () => {
      const events = await api('GET', `/events?message_id=${encodeURIComponent(messageId)}&type=open`);
      return !failed('GET /events', events) && events.body.includes('"type":"open"') ? true : undefined;
    });
    if (seen) figures.openLagMs.push(performance.now() - fetchedAt);
    else figures.openLate++;
  };

  const inFlight: Promise<unknown>[] = [];
  let sends = 0;
  const nextWhoami = { at: started };
  const nextSend = { at: started };
  while (performance.now() < end) {
    const now = performance.now();
    if (now >= nextWhoami.at) {
      nextWhoami.at += o.whoamiEveryMs;
      inFlight.push(
        api('GET', '/whoami').then((a) => {
          failed('GET /whoami', a);
          figures.whoamiMs.push(a.ms);
        }),
      );
    }
    if (now >= nextSend.at) {
      nextSend.at += o.sendEveryMs;
      const to = `b-${o.tag}-${++sends}@bench-dest.test`;
      inFlight.push(
        api('POST', '/transactional/send', {
          to,
          from_email: o.from,
          subject: 'Your receipt',
          body_html: '<html><body><p>Thanks for your order.</p></body></html>',
          track_opens: true,
        }).then(async (a) => {
          figures.sendMs.push(a.ms);
          if (failed('POST /transactional/send', a)) return;
          await opened((JSON.parse(a.body) as { data: { message_id: string } }).data.message_id, to).catch((err: unknown) => {
            const k = `open not measured: ${err instanceof Error ? err.message : String(err)}`;
            figures.failures[k] = (figures.failures[k] ?? 0) + 1;
          });
        }),
      );
    }
    await sleep(Math.max(1, Math.min(nextWhoami.at, nextSend.at) - performance.now()));
  }
  await Promise.all(inFlight);
  agent.destroy();
  return figures;
}

/** Polls `probe` every `everyMs` until it gives a value; undefined once `boundMs` has passed. */
async function until<T>(boundMs: number, everyMs: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T | undefined> {
  const deadline = performance.now() + boundMs;
  for (;;) {
    if (performance.now() >= deadline) return undefined;
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() >= deadline) return undefined;
    await sleep(everyMs);
  }
}
