// Shared set-up of the intake tests: sends as delivery leaves them, bounce mail stored as the MX stores it, and what the intake left behind.
import { randomUUID } from 'node:crypto';
import { runBounceIntake, type IntakeDeps } from '../../../jobs/bounce-intake/intake.js';
import type { AcceptInput } from '../../../shared/sending/accept.js';
import { bounceAddress } from '../../../shared/sending/outbound-log/verp.js';
import type { TestLike } from '../../helpers/app.js';
import type { Env } from '../../../shared/config/index.js';
import { deliveryFixture, type DeliveryFixture, type Sender } from '../../helpers/delivery-fixture.js';
import { fixture, type FixtureValues } from '../../shared/delivery/bounces/fixtures.js';

export interface TestSend {
  id: string;
  tenantId: string;
  to: string;
  messageId: string;
  /** Its VERP envelope sender. */
  verp: string;
}

export interface IntakeFixture extends DeliveryFixture {
  intake: IntakeDeps;
  fbl: string;
  /** A send accepted through the gates, then marked as delivery left it (`status`, default delivered). */
  delivered(from: Sender, over?: Partial<AcceptInput> & { status?: string }): Promise<TestSend>;
  /** Stores `raw` as bounce mail for `rcpt` (one inbound message, one 'bounce' recipient) and returns the recipient's id. */
  receive(rcpt: string, raw: Buffer, mailFrom?: string): Promise<string>;
  /** A fixture filled in for this send. */
  sample(name: string, send: TestSend, over?: Partial<FixtureValues>): Buffer;
  run(recipientId: string): Promise<string>;
  state(send: TestSend): Promise<{
    status: string;
    status_detail: string | null;
    events: { type: string; subtype: string | null; detail: Record<string, unknown> }[];
    suppressions: { tenant_id: string; email: string; reason: string; source: string; detail: string | null; message_id: string | null }[];
  }>;
  recipientRow(id: string): Promise<{ tenant_id: string | null; outcome: string | null; send_id: string | null }>;
}

export async function intakeFixture(t: TestLike, options: { env?: Env } = {}): Promise<IntakeFixture> {
  const base = await deliveryFixture(t, options);
  const { sql, deps, config } = base;
  const intake: IntakeDeps = { sql, config, clock: deps.clock, log: deps.log, verpKey: deps.verpKey };
  // The feedback-loop address the MX accepts (config/inbound.yaml).
  const fbl = `${config.inbound.recipient_domains.feedback_loop_local_part}@${config.hostname.toLowerCase()}`;
  return {
    ...base,
    intake,
    fbl,
    async delivered(from, over = {}) {
      const { status = 'delivered', ...input } = over;
      const { id, to } = await base.send(from, input);
      await sql`update sends set status = ${status}, status_detail = 'remote host: 250 2.0.0 Ok' where id = ${id} and mode = 'live'`;
      const [row] = await sql<{ message_id: string; tenant_id: string }[]>`select message_id, tenant_id from sends where id = ${id}`;
      return { id, to, tenantId: row!.tenant_id, messageId: row!.message_id, verp: bounceAddress(deps.verpKey, id, config.hostname) };
    },
    async receive(rcpt, raw, mailFrom = '') {
      const messageId = randomUUID();
      const recipientId = randomUUID();
      await sql.begin(async (tx) => {
        await tx`
          insert into inbound_messages (id, received_at, remote_address, helo, tls, mail_from, size_bytes, raw)
          values (${messageId}, now(), '192.0.2.99', 'mx.sender.example', true, ${mailFrom}, ${raw.length}, ${raw})`;
        await tx`
          insert into inbound_recipients (id, message_id, recipient, kind, tenant_id, created_at)
          values (${recipientId}, ${messageId}, ${rcpt}, 'bounce', null, now())`;
      });
      return recipientId;
    },
    sample: (name, send, over = {}) => fixture(name, { VERP: send.verp, MESSAGE_ID: send.messageId, RECIPIENT: send.to, FBL: fbl, ...over }),
    run: (recipientId) => runBounceIntake(intake, recipientId),
    async state(send) {
      const [row] = await sql<{ status: string; status_detail: string | null }[]>`select status, status_detail from sends where id = ${send.id}`;
      return {
        ...row!,
        events: await sql`
          select type, subtype, detail from events where send_id = ${send.id} and type not in ('send') order by occurred_at, type`,
        suppressions: await sql`
          select tenant_id, email, reason, source, detail, message_id from suppressions where email = ${send.to} order by created_at`,
      } as never;
    },
    async recipientRow(id) {
      const [row] = await sql<{ tenant_id: string | null; outcome: string | null; send_id: string | null }[]>`
        select r.tenant_id, b.outcome, b.send_id from inbound_recipients r left join bounce_reports b on b.inbound_recipient_id = r.id where r.id = ${id}`;
      return row!;
    },
  };
}
