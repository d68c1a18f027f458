// The process's Prometheus metrics (prom-client): one registry per process, its instruments named once here, handed to the adapters that record them.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RouteLatencyHistogram } from './route-latency.js';

/** Which SMTP listener a session came to. */
export type SmtpServerKind = 'mx' | 'submission';

/** Jobs waiting or running in one pg-boss queue, as read on a scrape. */
export interface QueueDepth {
  queue: string;
  /** created or retry (waiting to be picked up). */
  waiting: number;
  active: number;
}

// Delivery latency runs from seconds (a relay next door) to days (retries): buckets to cover both.
const DELIVERY_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 24 * 3600, 3 * 86_400];
const API_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Every instrument Mailpath records. Built once per process (main/services.ts) on a registry of its own
 * (not prom-client's global one), so several apps in one test process never share counts.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly smtpSessions: Counter<'server'>;
  readonly smtpSessionsOpen: Gauge<'server'>;
  readonly messages: Counter<'outcome'>;
  readonly deliveryLatency: Histogram<never>;
  readonly webhookAttempts: Counter<'kind' | 'outcome'>;
  /** Observed on every API request: a histogram of its own (shared/operations/metrics/route-latency.ts), not prom-client's. */
  readonly apiLatency: RouteLatencyHistogram;
  private queueDepthReader: (() => Promise<QueueDepth[]>) | undefined;

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.smtpSessions = new Counter({
      name: 'mailpath_smtp_sessions_total',
      help: 'SMTP sessions opened, by listener (mx, submission).',
      labelNames: ['server'],
      registers,
    });
    this.smtpSessionsOpen = new Gauge({
      name: 'mailpath_smtp_sessions_open',
      help: 'SMTP sessions open now, by listener (mx, submission).',
      labelNames: ['server'],
      registers,
    });
    this.messages = new Counter({
      name: 'mailpath_messages_total',
      help:
        'Outbound messages: accepted for delivery, then each delivery attempt delivered, deferred (retry later) or bounced (hard, or soft after the ' +
        'last retry).',
      labelNames: ['outcome'],
      registers,
    });
    this.deliveryLatency = new Histogram({
      name: 'mailpath_delivery_latency_seconds',
      help: 'From acceptance of an outbound message to its delivery (the receiving server said 250), retries included.',
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'mailpath_webhook_attempts_total',
      help: 'Webhook POSTs attempted: inbound-mail webhooks (kind=inbound) and event webhooks (kind=event), by outcome (success, failure).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.apiLatency = new RouteLatencyHistogram(
      'mailpath_api_request_duration_seconds',
      'API request time, by method, route template (/api/v1/domains/:id, never the raw URL; "unmatched" for unknown paths) and status code.',
      API_BUCKETS,
      this.registry,
    );
    const reader = () => this.queueDepthReader;
    const gaugeOf = (name: string, help: string, pick: (d: QueueDepth) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['queue'],
        registers,
        // Read on scrape only: nothing is counted between scrapes.
        async collect() {
          const read = reader();
          if (!read) return;
          this.reset();
          for (const depth of await read()) this.set({ queue: depth.queue }, pick(depth));
        },
      });
    gaugeOf('mailpath_queue_jobs_waiting', 'Jobs waiting in each pg-boss queue (created or retry), read on scrape.', (d) => d.waiting);
    gaugeOf('mailpath_queue_jobs_active', 'Jobs being worked in each pg-boss queue, read on scrape.', (d) => d.active);
    // Node's own (event-loop lag, heap, GC, handles), prefixed so they sort beside ours.
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'mailpath_' });
  }

  /** Where the queue-depth gauges read from on a scrape (the process's database). */
  readQueueDepthWith(reader: () => Promise<QueueDepth[]>): void {
    this.queueDepthReader = reader;
  }

  /** The text exposition format, for GET /metrics. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
