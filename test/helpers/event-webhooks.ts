// Event-webhook test fixtures: an app whose webhooks may reach loopback receivers, events recorded through the real writer, and two independent signature
// verifiers.
import { execFileSync } from 'node:child_process';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { ManualClock } from '../../shared/kernel/clock.js';
import type { Sql } from '../../shared/db/connection.js';
import { insertEvents, type EventType, type NewEvent } from '../../shared/engagement/events/queries.js';
import { buildTestApp, call, registerTenant, type TestLike, type TestTenant } from './app.js';
import type { ReceivedRequest } from './webhook-receiver.js';
import { projectRoot } from '../../shared/kernel/paths.js';

/** The switches the inbound-webhook tests use: plain http to 127.0.0.1 receivers. */
export const LOOPBACK_WEBHOOKS = { MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true', MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true' };

export const START = new Date('2026-03-02T10:00:00.000Z');

export async function buildWebhookApp(t: TestLike) {
  const clock = new ManualClock(START);
  const s = await buildTestApp(t, { env: LOOPBACK_WEBHOOKS, clock });
  return { ...s, clock };
}

/** Creates an endpoint through the API; returns its id and the secret shown once. */
export async function createEndpoint(
  app: Parameters<typeof call>[0],
  tenant: TestTenant,
  body: { url: string; event_types: string[]; enabled?: boolean },
): Promise<{ id: string; secret: string }> {
  const res = await call(app, 'POST', '/webhooks', { token: tenant.token, body });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.id, secret: res.body.data.secret };
}

/** Records feed events of the tenant through the real writer (insertEvents) in one transaction; returns the events as written. */
export async function recordEvents(sql: Sql, tenantId: string, types: EventType[], at: Date = START): Promise<NewEvent[]> {
  const events: NewEvent[] = types.map((type, i) => ({
    tenant_id: tenantId,
    type,
    subtype: type === 'bounce' ? 'hard' : null,
    send_id: null,
    message_id: `msg-${randomUUID()}@mailpath.test`,
    recipient: `rcpt${i}@example.test`,
    detail: { n: i },
    occurred_at: at,
  }));
  await sql.begin((tx) => insertEvents(tx, events));
  return events;
}

export { registerTenant };

/** The Standard Webhooks check written by hand on node:crypto: how many of the header's v1 signatures verify with `secret`. */
export function verifyNode(secret: string, req: ReceivedRequest): number {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${req.body.toString('utf8')}`;
  const expected = createHmac('sha256', key).update(signed).digest();
  return String(req.headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((part) => {
      const [version, sig] = part.split(',');
      const got = Buffer.from(sig ?? '', 'base64');
      return version === 'v1' && got.length === expected.length && timingSafeEqual(got, expected);
    }).length;
}

const PYTHON_VERIFIER = join(projectRoot(), 'test', 'helpers', 'event-webhooks-verify.py');

/** The same check by python3's hmac module. */
export function verifyPython(secret: string, req: ReceivedRequest): number {
  const input = JSON.stringify({
    secret,
    id: req.headers['webhook-id'],
    timestamp: req.headers['webhook-timestamp'],
    signature: req.headers['webhook-signature'],
    body: req.body.toString('utf8'),
  });
  return Number(execFileSync('python3', [PYTHON_VERIFIER], { input }).toString().trim());
}
