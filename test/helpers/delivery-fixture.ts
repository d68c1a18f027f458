// Shared set-up for the delivery tests, so each one states only its routing (relay or DNS) and what it scripts at the sink.
import { acceptSend, type AcceptInput } from '../../shared/sending/accept.js';
import { startOutbound } from '../../mta/outbound/deliver/start.js';
import type { SendingDeps } from '../../shared/sending/deps.js';
import type { Clock } from '../../shared/kernel/clock.js';
import type { Env } from '../../shared/config/index.js';
import { accepted } from './accepted.js';
import { buildTestApp, type TestApp, type TestLike } from './app.js';
import { verifiedSendingDomain, type SendingDomain } from './sending-domain.js';
import { pollUntil, type SmtpSink } from './smtp-sink.js';
import { insertTenant } from './tenant-rows.js';

/** A tenant allowed to send, and the domain it sends from. */
export interface Sender {
  tenant: AcceptInput['tenant'];
  domain: SendingDomain;
}

export interface SendState {
  status: string;
  status_detail: string | null;
  defer_until: Date | null;
  message: Buffer | null;
  envelope_from: string;
}

export interface DeliveryFixture extends TestApp {
  deps: SendingDeps;
  sender(): Promise<Sender>;
  /** A fresh recipient, so the sink can be scripted for it before the worker can see the send. */
  recipient(): string;
  /** Accepts a live composed message from `news@` the sender's domain; `over` replaces any field. */
  send(from: Sender, over?: Partial<AcceptInput>): Promise<{ id: string; to: string }>;
  sendRow(id: string): Promise<SendState>;
  /** Waits until the send reaches one of `statuses` and returns its row. */
  settled(id: string, statuses: string[]): Promise<SendState>;
  /** The send's row in the delivery queue, undefined once its delivery has ended. */
  queued(id: string): Promise<{ due_at: Date; claimed_at: Date | null } | undefined>;
  events(id: string): Promise<{ type: string; subtype: string | null; detail: Record<string, unknown> }[]>;
  /** Starts the outbound role, stopped (gracefully) when `t` ends. */
  outbound(t: TestLike): Promise<void>;
}

export async function deliveryFixture(t: TestLike, options: { env?: Env; clock?: Clock } = {}): Promise<DeliveryFixture> {
  const app = await buildTestApp(t, {
    ...(options.clock ? { clock: options.clock } : {}),
    // Short, so waiting between tests for the previous test's pooled connections to close stays cheap.
    env: { MAILPATH_CONFIG__DELIVERY__DESTINATION__IDLE_CLOSE_MS: '300', ...options.env },
  });
  const { ctx, sql } = app;
  const deps = ctx;
  let counter = 0;
  const recipient = () => `rcpt${++counter}@dest.example`;
  const sendRow = async (id: string) =>
    (await sql<SendState[]>`select status, status_detail, defer_until, message, envelope_from from sends where id = ${id}`)[0]!;
  return {
    ...app,
    deps,
    recipient,
    sendRow,
    async sender() {
      const tenantId = await insertTenant(sql);
      const domain = await verifiedSendingDomain(sql, ctx.vault, tenantId);
      return { tenant: { id: tenantId, status: 'active', is_sandbox: false }, domain };
    },
    async send(from, over = {}) {
      const to = over.to ?? recipient();
      const result = accepted(
        await acceptSend(deps, {
          tenant: from.tenant,
          mode: 'live',
          apiKeyId: null,
          source: 'api',
          from: { address: `news@${from.domain.name}` },
          to,
          content: { kind: 'compose', subject: 'Hello', text: 'Hi there' },
          ...over,
        }),
      );
      return { id: result.send.id, to };
    },
    settled: (id, statuses) =>
      pollUntil(`send ${id} to be ${statuses.join(' or ')}`, async () => {
        const row = await sendRow(id);
        return statuses.includes(row.status) ? row : undefined;
      }),
    queued: async (id) => (await sql<{ due_at: Date; claimed_at: Date | null }[]>`select due_at, claimed_at from delivery_queue where send_id = ${id}`)[0],
    events: (id) => sql<{ type: string; subtype: string | null; detail: Record<string, unknown> }[]>`
      select type, subtype, detail from events where send_id = ${id} order by occurred_at, type`,
    async outbound(t) {
      const running = await startOutbound(deps);
      t.teardown(() => running.stop());
    },
  };
}

/** For beforeEach: each test counts its own connections, so the previous test's must have closed first. */
export async function quietSink(sink: SmtpSink): Promise<void> {
  sink.reset();
  await pollUntil('idle connections to close', async () => (sink.stats().open === 0 ? true : undefined));
  sink.reset();
}
